//! The crate's error type: a request that cannot be searched. Damage in session files is
//! never an error here; it becomes a [`crate::SearchWarning`].

/// Returns why a search request was refused.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The pattern is not a valid regular expression (or is too large to compile).
    #[error("invalid pattern {:?}: {message}", shown(pattern))]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// What the regular-expression compiler said.
        message: String,
    },
}

/// Returns `pattern` cut to its first 200 characters, for a message.
fn shown(pattern: &str) -> String {
    match pattern.char_indices().nth(200) {
        None => pattern.to_owned(),
        Some((end, _)) => format!("{}…", &pattern[..end]),
    }
}
