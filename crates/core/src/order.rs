//! The order of sessions: one type for every front end and capability that names one
//! (`list --sort … --newest-first`, `search --sort newest|oldest|path`, the MCP tools'
//! `sortBy`/`sortDirection` and `order`, the picker's `/resume` order).

use std::cmp::Ordering;

use crate::Timestamp;
use crate::listing::Session;

/// Which field orders top-level sessions first; ties always fall back to the header
/// timestamp, then the path (the contract's order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortKey {
    /// Header timestamp instant (the contract's order).
    #[default]
    Timestamp,
    /// Working directory, bytewise.
    Cwd,
    /// File path, bytewise.
    Path,
    /// Session id, bytewise.
    Id,
    /// Last activity (the newest entry's timestamp; the header's when none was read).
    Activity,
}

/// An order of sessions: the key, and whether the order runs backwards. Only top-level
/// sessions are ordered; the runs below a session keep their launch order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SortOrder {
    /// The field compared first.
    pub key: SortKey,
    /// Whether the whole order is reversed (for the timestamp key: newest first).
    pub is_reversed: bool,
}

impl SortOrder {
    /// Oldest session first: the contract's order, and `list`'s default.
    pub const OLDEST_FIRST: SortOrder = SortOrder::by(SortKey::Timestamp);

    /// Newest session first: `search`'s default.
    pub const NEWEST_FIRST: SortOrder = SortOrder::by(SortKey::Timestamp).reversed(true);

    /// Returns the ascending order by `key`.
    pub const fn by(key: SortKey) -> SortOrder {
        SortOrder {
            key,
            is_reversed: false,
        }
    }

    /// Returns this order, run backwards when `is_reversed`.
    pub const fn reversed(self, is_reversed: bool) -> SortOrder {
        SortOrder {
            key: self.key,
            is_reversed,
        }
    }

    /// Returns how `left` compares with `right` in this order: by the key, then the header
    /// instant, then the path, all reversed when the order is. `activity_of` gives a
    /// session's last activity, for the activity key.
    pub fn compare(
        &self,
        left: &Session,
        right: &Session,
        activity_of: &dyn Fn(&Session) -> Timestamp,
    ) -> Ordering {
        let primary = match self.key {
            SortKey::Timestamp => Ordering::Equal,
            SortKey::Cwd => left.cwd.as_bytes().cmp(right.cwd.as_bytes()),
            SortKey::Path => left.path.as_bytes().cmp(right.path.as_bytes()),
            SortKey::Id => left.id.as_bytes().cmp(right.id.as_bytes()),
            SortKey::Activity => activity_of(left).cmp(&activity_of(right)),
        };
        let ordering = primary.then_with(|| left.chronological_cmp(right));
        if self.is_reversed {
            ordering.reverse()
        } else {
            ordering
        }
    }
}
