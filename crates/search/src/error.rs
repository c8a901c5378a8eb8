//! The crate's error type: a request that cannot be searched. Damage in session files is
//! never an error here; it becomes a [`crate::SearchWarning`].

/// Returns why a search request was refused.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The pattern is not a valid regular expression (or is too large to compile).
    #[error("invalid pattern {pattern:?}: {message}")]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// What the regular-expression compiler said.
        message: String,
    },
}
