//! Filters, sorting and limits over a [`Listing`], applied to top-level sessions.
//!
//! A kept session keeps its whole subagent tree (pruned only by `max_depth`); the same
//! semantics as the upstream package's `cwds`, `cwdMatch`, `startTimestamp`/`endTimestamp`,
//! `sortBy`/`sortDirection`, `limit` and `includeCurrentSession`, and a few more.

use crate::listing::{Listing, Session, SessionSummary};
use crate::order::{SortKey, SortOrder};
use crate::timestamp::Timestamp;

/// How a `--cwd` value matches a session's cwd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CwdMatcher {
    /// Normalised directory to match.
    pub dir: String,
    /// Also match directories below `dir`.
    pub include_subdirectories: bool,
    /// Also match sibling directories whose name extends `dir`'s with a dash (git worktrees).
    pub include_worktrees: bool,
}

impl CwdMatcher {
    /// Returns whether `cwd` matches.
    ///
    /// The rule is lexical: `/repos/app` with worktrees matches `/repos/app-fix` but neither
    /// `/repos/application` nor `/repos/app/sub` (unless subdirectories are included).
    pub fn is_match(&self, cwd: &str) -> bool {
        let cwd = trim_trailing_separators(cwd);
        let dir = trim_trailing_separators(&self.dir);
        if self.matches_under(cwd, dir) {
            return true;
        }
        if self.include_worktrees {
            // A sibling `dir-<suffix>` (non-empty suffix, no separator in it), and with
            // subdirectories, anything below such a sibling.
            if let Some(rest) = cwd
                .strip_prefix(dir)
                .and_then(|rest| rest.strip_prefix('-'))
            {
                let sibling_suffix_len = rest.find('/').unwrap_or(rest.len());
                if sibling_suffix_len == 0 {
                    return false;
                }
                let sibling = &cwd[..dir.len() + 1 + sibling_suffix_len];
                return self.matches_under(cwd, sibling);
            }
        }
        false
    }

    fn matches_under(&self, cwd: &str, dir: &str) -> bool {
        if cwd == dir {
            return true;
        }
        self.include_subdirectories
            && cwd.starts_with(dir)
            && (dir.ends_with('/') || cwd.as_bytes().get(dir.len()) == Some(&b'/'))
    }
}

fn trim_trailing_separators(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() && path.starts_with('/') {
        "/"
    } else {
        trimmed
    }
}

/// A filter, order and limit for a listing. The default keeps everything in contract order.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Keep sessions whose cwd matches any of these (all sessions when empty).
    pub cwds: Vec<CwdMatcher>,
    /// Keep sessions at or after this instant.
    pub since: Option<Timestamp>,
    /// Keep sessions at or before this instant.
    pub until: Option<Timestamp>,
    /// Keep sessions active at or after this instant: their last activity is not earlier.
    pub active_since: Option<Timestamp>,
    /// Keep sessions active at or before this instant: they started no later. With
    /// `active_since`, the sessions whose span (start to last activity) meets the range.
    pub active_until: Option<Timestamp>,
    /// Keep only sessions with at least one subagent run.
    pub with_subagents: bool,
    /// Prune nesting below this many levels (0: no runs shown).
    pub max_depth: Option<usize>,
    /// Leave out the session at this path, at any level, with its tree.
    pub exclude_path: Option<String>,
    /// Keep sessions whose id starts with one of these prefixes (all when empty). A subagent
    /// run whose id matches keeps its top-level session and the runs between them, so the
    /// tree stays whole; siblings that do not match are hidden (and still counted).
    pub id_prefixes: Vec<String>,
    /// Keep sessions whose name contains this text, case-insensitively.
    pub name_contains: Option<String>,
    /// Top-level order (children stay in launch order).
    pub order: SortOrder,
    /// Keep at most this many top-level sessions, after sorting.
    pub limit: Option<usize>,
}

impl ListFilter {
    /// Returns whether answering the query needs session names from file bodies.
    pub fn needs_names(&self) -> bool {
        self.name_contains.is_some()
    }

    /// Returns whether answering the query needs each top-level session's last activity.
    pub fn needs_activity(&self) -> bool {
        self.active_since.is_some()
            || self.active_until.is_some()
            || self.order.key == SortKey::Activity
    }

    /// Applies the query to `listing` in place. `summary_of` returns the body facts read for a
    /// session (by path), else the session's own ([`Session::summary`]): its name for
    /// `name_contains`, its last activity for the activity bounds and sort (the header's
    /// instant when none was read).
    pub fn apply<'a>(
        &self,
        listing: &mut Listing,
        summary_of: &dyn Fn(&str) -> Option<&'a SessionSummary>,
    ) {
        if let Some(excluded) = &self.exclude_path {
            remove_path(&mut listing.sessions, excluded);
        }
        let needle = self.name_contains.as_ref().map(|text| text.to_lowercase());
        let activity_of =
            |session: &Session| session.last_activity(session.facts(summary_of(&session.path)));
        listing.sessions.retain_mut(|session| {
            self.keeps(session)
                && self
                    .active_since
                    .is_none_or(|since| activity_of(session) >= since)
                && self
                    .active_until
                    .is_none_or(|until| session.instant <= until)
                && needle.as_ref().is_none_or(|needle| {
                    session
                        .facts(summary_of(&session.path))
                        .and_then(|summary| summary.name.as_deref())
                        .is_some_and(|name| name.to_lowercase().contains(needle))
                })
                && (self.id_prefixes.is_empty() || keep_matching_ids(session, &self.id_prefixes))
        });
        if let Some(max_depth) = self.max_depth {
            for session in &mut listing.sessions {
                prune(session, max_depth);
            }
        }
        listing
            .sessions
            .sort_by(|left, right| self.order.compare(left, right, &activity_of));
        if let Some(limit) = self.limit {
            listing.sessions.truncate(limit);
        }
    }

    /// Returns whether a top-level session whose header has `cwd` and `instant` passes the
    /// filters that need nothing but the header (cwd, start bounds, `active_until`). `false`
    /// is final: [`ListFilter::apply`] drops such a session; `true` promises nothing.
    pub fn may_keep_header(&self, cwd: &str, instant: Timestamp) -> bool {
        self.keeps_header(cwd, instant) && self.active_until.is_none_or(|until| instant <= until)
    }

    fn keeps_header(&self, cwd: &str, instant: Timestamp) -> bool {
        (self.cwds.is_empty() || self.cwds.iter().any(|matcher| matcher.is_match(cwd)))
            && self.since.is_none_or(|since| instant >= since)
            && self.until.is_none_or(|until| instant <= until)
    }

    fn keeps(&self, session: &Session) -> bool {
        self.keeps_header(&session.cwd, session.instant)
            && (!self.with_subagents || !session.subagent_sessions.is_empty())
    }
}

/// Returns whether `session` or a run below it has an id starting with one of `prefixes`.
/// A matching session keeps its whole tree; otherwise only the runs on the way to a match
/// stay, and the others are counted in `n_pruned_runs` so the run count stays true.
fn keep_matching_ids(session: &mut Session, prefixes: &[String]) -> bool {
    if prefixes
        .iter()
        .any(|prefix| session.id.starts_with(prefix.as_str()))
    {
        return true;
    }
    let n_before = session.subagent_sessions.len();
    session
        .subagent_sessions
        .retain_mut(|child| keep_matching_ids(child, prefixes));
    session.n_pruned_runs += n_before - session.subagent_sessions.len();
    !session.subagent_sessions.is_empty()
}

fn remove_path(sessions: &mut Vec<Session>, path: &str) {
    sessions.retain(|session| session.path != path);
    for session in sessions {
        remove_path(&mut session.subagent_sessions, path);
    }
}

fn prune(session: &mut Session, depth_left: usize) {
    if depth_left == 0 {
        session.n_pruned_runs += session.subagent_sessions.len();
        session.subagent_sessions.clear();
        return;
    }
    for child in &mut session.subagent_sessions {
        prune(child, depth_left - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timestamp;

    fn session(path: &str, id: &str, time: &str, cwd: &str, children: Vec<Session>) -> Session {
        Session {
            id: id.into(),
            path: path.into(),
            timestamp: time.into(),
            cwd: cwd.into(),
            parent_session_path: None,
            subagent_sessions: children,
            instant: timestamp::parse(time).unwrap_or_default(),
            n_pruned_runs: 0,
            summary: None,
        }
    }

    fn listing() -> Listing {
        let grandchild = session(
            "/s/c/g.jsonl",
            "g",
            "2026-01-01T00:03:00Z",
            "/r/app",
            vec![],
        );
        let child = session(
            "/s/c.jsonl",
            "c",
            "2026-01-01T00:02:00Z",
            "/r/app",
            vec![grandchild],
        );
        Listing {
            sessions: vec![
                session(
                    "/s/a.jsonl",
                    "aa1",
                    "2026-01-01T00:00:00Z",
                    "/r/app",
                    vec![child],
                ),
                session(
                    "/s/b.jsonl",
                    "bb2",
                    "2026-01-02T00:00:00Z",
                    "/r/app-fix",
                    vec![],
                ),
                session(
                    "/s/d.jsonl",
                    "ab3",
                    "2026-01-03T00:00:00Z",
                    "/r/application",
                    vec![],
                ),
                session(
                    "/s/e.jsonl",
                    "cc4",
                    "2026-01-04T00:00:00Z",
                    "/r/app/sub",
                    vec![],
                ),
                session(
                    "/s/f.jsonl",
                    "dd5",
                    "2026-01-05T00:00:00Z",
                    "/r/app-fix/deep",
                    vec![],
                ),
            ],
            warnings: vec![],
        }
    }

    fn check(query: ListFilter, expected: &[&str]) {
        let mut listing = listing();
        // Whatever the query, a session its header alone refuses is never kept.
        let refused: Vec<String> = listing
            .sessions
            .iter()
            .filter(|session| !query.may_keep_header(&session.cwd, session.instant))
            .map(|session| session.id.clone())
            .collect();
        let named = SessionSummary {
            name: Some("Fix The Bug".into()),
            last_activity: crate::timestamp::parse("2026-01-09T00:00:00Z"),
            ..SessionSummary::default()
        };
        query.apply(&mut listing, &|path| {
            (path == "/s/b.jsonl").then_some(&named)
        });
        let mut actual = Vec::new();
        fn flatten(sessions: &[Session], depth: usize, out: &mut Vec<String>) {
            for session in sessions {
                out.push(format!("{}{}", "+".repeat(depth), session.id));
                flatten(&session.subagent_sessions, depth + 1, out);
            }
        }
        flatten(&listing.sessions, 0, &mut actual);
        assert_eq!(actual, expected, "{query:?}");
        assert!(
            listing
                .sessions
                .iter()
                .all(|session| !refused.contains(&session.id)),
            "{query:?} kept one of {refused:?}"
        );
    }

    fn cwd(dir: &str, subdirectories: bool, worktrees: bool) -> CwdMatcher {
        CwdMatcher {
            dir: dir.into(),
            include_subdirectories: subdirectories,
            include_worktrees: worktrees,
        }
    }

    #[test]
    fn default_keeps_everything_in_order() {
        check(
            ListFilter::default(),
            &["aa1", "+c", "++g", "bb2", "ab3", "cc4", "dd5"],
        );
    }

    #[test]
    fn cwd_matching() {
        let query = |matchers| ListFilter {
            cwds: matchers,
            max_depth: Some(0),
            ..ListFilter::default()
        };
        check(query(vec![cwd("/r/app", false, false)]), &["aa1"]);
        check(query(vec![cwd("/r/app/", false, false)]), &["aa1"]);
        check(query(vec![cwd("/r/app", true, false)]), &["aa1", "cc4"]);
        check(query(vec![cwd("/r/app", false, true)]), &["aa1", "bb2"]);
        check(
            query(vec![cwd("/r/app", true, true)]),
            &["aa1", "bb2", "cc4", "dd5"],
        );
        check(
            query(vec![
                cwd("/r/app", false, false),
                cwd("/r/application", false, false),
            ]),
            &["aa1", "ab3"],
        );
        check(
            query(vec![cwd("/", true, false)]),
            &["aa1", "bb2", "ab3", "cc4", "dd5"],
        );
    }

    #[test]
    fn time_bounds_are_inclusive() {
        let at = |text| timestamp::parse(text);
        check(
            ListFilter {
                since: at("2026-01-02T00:00:00Z"),
                until: at("2026-01-04T00:00:00Z"),
                ..ListFilter::default()
            },
            &["bb2", "ab3", "cc4"],
        );
    }

    #[test]
    fn tree_filters() {
        check(
            ListFilter {
                with_subagents: true,
                ..ListFilter::default()
            },
            &["aa1", "+c", "++g"],
        );
        check(
            ListFilter {
                with_subagents: true,
                max_depth: Some(1),
                ..ListFilter::default()
            },
            &["aa1", "+c"],
        );
        check(
            ListFilter {
                exclude_path: Some("/s/c.jsonl".into()),
                limit: Some(2),
                ..ListFilter::default()
            },
            &["aa1", "bb2"],
        );
        check(
            ListFilter {
                exclude_path: Some("/s/a.jsonl".into()),
                limit: Some(1),
                ..ListFilter::default()
            },
            &["bb2"],
        );
    }

    #[test]
    fn pruning_keeps_the_run_count() {
        let mut listing = listing();
        ListFilter {
            max_depth: Some(0),
            ..ListFilter::default()
        }
        .apply(&mut listing, &|_| None);
        assert_eq!(listing.sessions[0].subagent_sessions.len(), 0);
        assert_eq!(listing.sessions[0].n_runs(), 1);
        let mut listing = self::listing();
        ListFilter {
            max_depth: Some(1),
            ..ListFilter::default()
        }
        .apply(&mut listing, &|_| None);
        let child = &listing.sessions[0].subagent_sessions[0];
        assert_eq!((child.subagent_sessions.len(), child.n_runs()), (0, 1));
    }

    #[test]
    fn ids_and_names() {
        check(
            ListFilter {
                id_prefixes: vec!["a".into()],
                max_depth: Some(0),
                ..ListFilter::default()
            },
            &["aa1", "ab3"],
        );
        check(
            ListFilter {
                name_contains: Some("the bug".into()),
                ..ListFilter::default()
            },
            &["bb2"],
        );
        check(
            ListFilter {
                name_contains: Some("nothing".into()),
                ..ListFilter::default()
            },
            &[],
        );
    }

    #[test]
    fn activity_bounds_and_sort() {
        let at = |text| timestamp::parse(text);
        // bb2 started on Jan 2 and was last active on Jan 9; the others have no activity
        // read, so their last activity is their start.
        check(
            ListFilter {
                active_since: at("2026-01-05T00:00:00Z"),
                ..ListFilter::default()
            },
            &["bb2", "dd5"],
        );
        // Active at some point on Jan 3 (00:00 to 23:59): started by its end, last active
        // after its start.
        check(
            ListFilter {
                active_since: at("2026-01-03T00:00:00Z"),
                active_until: at("2026-01-03T23:59:59Z"),
                ..ListFilter::default()
            },
            &["bb2", "ab3"],
        );
        check(
            ListFilter {
                active_until: at("2026-01-01T12:00:00Z"),
                ..ListFilter::default()
            },
            &["aa1", "+c", "++g"],
        );
        check(
            ListFilter {
                order: SortOrder::by(SortKey::Activity),
                max_depth: Some(0),
                ..ListFilter::default()
            },
            &["aa1", "ab3", "cc4", "dd5", "bb2"],
        );
        check(
            ListFilter {
                order: SortOrder::by(SortKey::Activity).reversed(true),
                limit: Some(1),
                max_depth: Some(0),
                ..ListFilter::default()
            },
            &["bb2"],
        );
        assert!(
            ListFilter {
                order: SortOrder::by(SortKey::Activity),
                ..ListFilter::default()
            }
            .needs_activity()
        );
        assert!(!ListFilter::default().needs_activity());
    }

    /// `--id` finds subagent runs too, keeping their ancestors (and counting the
    /// runs it hides).
    #[test]
    fn ids_of_runs_keep_their_ancestors() {
        let query = |prefix: &str| ListFilter {
            id_prefixes: vec![prefix.into()],
            ..ListFilter::default()
        };
        check(query("g"), &["aa1", "+c", "++g"]);
        check(query("c"), &["aa1", "+c", "++g", "cc4"]);
        check(query("zz"), &[]);
        let mut listing = listing();
        listing.sessions[0].subagent_sessions.push(session(
            "/s/h.jsonl",
            "h",
            "2026-01-01T00:04:00Z",
            "/r/app",
            vec![],
        ));
        query("h").apply(&mut listing, &|_| None);
        let top = &listing.sessions[0];
        assert_eq!(top.subagent_sessions.len(), 1);
        assert_eq!(top.subagent_sessions[0].id, "h");
        assert_eq!(top.n_runs(), 2);
    }

    #[test]
    fn sorting_and_limits() {
        let base = ListFilter {
            max_depth: Some(0),
            ..ListFilter::default()
        };
        check(
            ListFilter {
                order: SortOrder::NEWEST_FIRST,
                ..base.clone()
            },
            &["dd5", "cc4", "ab3", "bb2", "aa1"],
        );
        check(
            ListFilter {
                order: SortOrder::NEWEST_FIRST,
                limit: Some(2),
                ..base.clone()
            },
            &["dd5", "cc4"],
        );
        check(
            ListFilter {
                order: SortOrder::by(SortKey::Id),
                ..base.clone()
            },
            &["aa1", "ab3", "bb2", "cc4", "dd5"],
        );
        // Bytewise: `-` sorts before `/`.
        check(
            ListFilter {
                order: SortOrder::by(SortKey::Cwd),
                ..base.clone()
            },
            &["aa1", "bb2", "dd5", "cc4", "ab3"],
        );
        check(
            ListFilter {
                order: SortOrder::by(SortKey::Path).reversed(true),
                ..base
            },
            &["dd5", "cc4", "ab3", "bb2", "aa1"],
        );
        // Children keep launch order even when the top level is reversed.
        check(
            ListFilter {
                order: SortOrder::NEWEST_FIRST,
                limit: Some(5),
                ..ListFilter::default()
            }
            .clone(),
            &["dd5", "cc4", "ab3", "bb2", "aa1", "+c", "++g"],
        );
    }
}
