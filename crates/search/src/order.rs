//! The order in which sessions are searched and their hits delivered.

use pi_retrospect_core::Session;
use pi_retrospect_core::order::{SortKey, SortOrder};

use crate::searcher::SearchFile;

/// Returns the files of `sessions` (top-level sessions, each with its nested runs) in
/// `order`, each with its run depth; hits inside a file are always in file order.
///
/// Each top-level session is followed by its runs, depth first, in launch order, except by
/// path: then every file, runs included, is in path byte order (a session's runs still follow
/// it, since `x.jsonl` sorts before its container `x/`), descending when the order is
/// reversed. The activity key reads each session's own summary (its header instant when it
/// has none).
pub fn files_in_order(sessions: &[Session], order: SortOrder) -> Vec<SearchFile> {
    let mut top: Vec<&Session> = sessions.iter().collect();
    let activity_of = |session: &Session| session.last_activity(session.facts(None));
    if order.key != SortKey::Path {
        top.sort_by(|left, right| order.compare(left, right, &activity_of));
    }
    let mut files = Vec::new();
    for session in top {
        push_tree(session, 0, &mut files);
    }
    if order.key == SortKey::Path {
        files.sort_by(|left, right| {
            let ordering = left.path.as_bytes().cmp(right.path.as_bytes());
            if order.is_reversed {
                ordering.reverse()
            } else {
                ordering
            }
        });
    }
    files
}

fn push_tree(session: &Session, depth: u32, files: &mut Vec<SearchFile>) {
    files.push(SearchFile {
        path: session.path.clone(),
        depth,
    });
    for run in &session.subagent_sessions {
        push_tree(run, depth + 1, files);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_core::timestamp;

    fn session(path: &str, time: &str, runs: Vec<Session>) -> Session {
        Session {
            id: path.to_owned(),
            path: path.to_owned(),
            timestamp: time.to_owned(),
            cwd: "/w".to_owned(),
            parent_session_path: None,
            subagent_sessions: runs,
            instant: timestamp::parse(time).unwrap_or_default(),
            n_pruned_runs: 0,
            summary: None,
        }
    }

    fn check(order: SortOrder, expected: &[(&str, u32)]) {
        let sessions = vec![
            session(
                "/s/b.jsonl",
                "2026-01-01T00:00:00Z",
                vec![session(
                    "/s/b/L/run-0/session.jsonl",
                    "2026-01-01T00:00:01Z",
                    vec![session(
                        "/s/b/L/run-0/session/M/run-0/session.jsonl",
                        "2026-01-01T00:00:02Z",
                        vec![],
                    )],
                )],
            ),
            session("/s/a.jsonl", "2026-01-02T00:00:00Z", vec![]),
        ];
        let actual: Vec<(String, u32)> = files_in_order(&sessions, order)
            .into_iter()
            .map(|file| (file.path, file.depth))
            .collect();
        let expected: Vec<(String, u32)> = expected
            .iter()
            .map(|(path, depth)| ((*path).to_owned(), *depth))
            .collect();
        assert_eq!(actual, expected, "{order:?}");
    }

    #[test]
    fn orders_sessions_and_keeps_runs_after_their_session() {
        check(
            SortOrder::NEWEST_FIRST,
            &[
                ("/s/a.jsonl", 0),
                ("/s/b.jsonl", 0),
                ("/s/b/L/run-0/session.jsonl", 1),
                ("/s/b/L/run-0/session/M/run-0/session.jsonl", 2),
            ],
        );
        check(
            SortOrder::OLDEST_FIRST,
            &[
                ("/s/b.jsonl", 0),
                ("/s/b/L/run-0/session.jsonl", 1),
                ("/s/b/L/run-0/session/M/run-0/session.jsonl", 2),
                ("/s/a.jsonl", 0),
            ],
        );
        check(
            SortOrder::by(SortKey::Path),
            &[
                ("/s/a.jsonl", 0),
                ("/s/b.jsonl", 0),
                ("/s/b/L/run-0/session.jsonl", 1),
                ("/s/b/L/run-0/session/M/run-0/session.jsonl", 2),
            ],
        );
        check(
            SortOrder::by(SortKey::Path).reversed(true),
            &[
                ("/s/b/L/run-0/session/M/run-0/session.jsonl", 2),
                ("/s/b/L/run-0/session.jsonl", 1),
                ("/s/b.jsonl", 0),
                ("/s/a.jsonl", 0),
            ],
        );
        // Any other key orders the top level only; runs stay below their session.
        check(
            SortOrder::by(SortKey::Id),
            &[
                ("/s/a.jsonl", 0),
                ("/s/b.jsonl", 0),
                ("/s/b/L/run-0/session.jsonl", 1),
                ("/s/b/L/run-0/session/M/run-0/session.jsonl", 2),
            ],
        );
    }
}
