//! The one error type of this crate: only arguments can be wrong; bad files are warnings.

/// Why a statistics request could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatsError {
    /// A `--by` name that is no grouping.
    #[error("unknown grouping {0:?} (expected session, project, model, day, week or month)")]
    UnknownGroup(String),
    /// A `--by` name given twice.
    #[error("grouping {0:?} given twice")]
    RepeatedGroup(String),
}
