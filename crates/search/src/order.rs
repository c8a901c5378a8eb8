//! The order in which sessions are searched and their hits delivered.

use pi_retrospect_core::Session;

use crate::searcher::SearchFile;

/// Returns the order of sessions in a search; hits inside a session are always in file order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionOrder {
    /// Newest top-level session first (by header timestamp, ties by path, reversed); each
    /// session is followed by its subagent runs, oldest first, depth first.
    #[default]
    Newest,
    /// Oldest top-level session first, each followed by its runs: the order of `list`.
    Oldest,
    /// Every file by path, byte order (a session's runs follow it, since `x.jsonl` sorts
    /// before the container `x/`).
    Path,
}

/// Returns the files of `sessions` (top-level sessions in the order of a sorted
/// [`pi_retrospect_core::Listing`], each with its nested runs) in `order`, each with its run
/// depth.
pub fn files_in_order(sessions: &[Session], order: SessionOrder) -> Vec<SearchFile> {
    let mut files = Vec::new();
    match order {
        SessionOrder::Oldest => {
            for session in sessions {
                push_tree(session, 0, &mut files);
            }
        }
        SessionOrder::Newest => {
            for session in sessions.iter().rev() {
                push_tree(session, 0, &mut files);
            }
        }
        SessionOrder::Path => {
            for session in sessions {
                push_tree(session, 0, &mut files);
            }
            files.sort_by(|left, right| left.path.as_bytes().cmp(right.path.as_bytes()));
        }
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

    fn check(order: SessionOrder, expected: &[(&str, u32)]) {
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
            SessionOrder::Newest,
            &[
                ("/s/a.jsonl", 0),
                ("/s/b.jsonl", 0),
                ("/s/b/L/run-0/session.jsonl", 1),
                ("/s/b/L/run-0/session/M/run-0/session.jsonl", 2),
            ],
        );
        check(
            SessionOrder::Oldest,
            &[
                ("/s/b.jsonl", 0),
                ("/s/b/L/run-0/session.jsonl", 1),
                ("/s/b/L/run-0/session/M/run-0/session.jsonl", 2),
                ("/s/a.jsonl", 0),
            ],
        );
        check(
            SessionOrder::Path,
            &[
                ("/s/a.jsonl", 0),
                ("/s/b.jsonl", 0),
                ("/s/b/L/run-0/session.jsonl", 1),
                ("/s/b/L/run-0/session/M/run-0/session.jsonl", 2),
            ],
        );
    }
}
