//! Containment nesting: attaching subagent transcripts to the session that launched them.
//!
//! Every transcript found under a session's container is attached to the transcript whose
//! container is its deepest ancestor directory, or to the session itself when none is. So a
//! transcript is never reported under two parents, and a nested launch that does not sit under
//! its parent's container falls back to the nearest session that does contain it.
//!
//! The work is linear in the number of transcripts times their path depth: each transcript
//! looks its ancestors up in a map instead of testing every other transcript (the reference
//! implementation's quadratic scan takes tens of seconds for one session with 5,000 runs).

use std::collections::HashMap;

use crate::listing::{Session, SessionRow, sort_sessions};
use crate::path::container_of;

/// Returns the transcripts found under `root_container`, nested by containment and sorted.
///
/// Every row's path must lie strictly inside `root_container`; a row outside it is attached
/// at the top level (it cannot be placed anywhere more specific).
pub fn nest(root_container: &str, transcripts: Vec<SessionRow>) -> Vec<Session> {
    let index_by_container: HashMap<&str, usize> = transcripts
        .iter()
        .enumerate()
        .filter_map(|(idx, row)| container_of(&row.path).map(|container| (container, idx)))
        .collect();

    let parents: Vec<Option<usize>> = transcripts
        .iter()
        .map(|row| deepest_container(&row.path, root_container, &index_by_container))
        .collect();

    let mut children_of: Vec<Vec<usize>> = vec![Vec::new(); transcripts.len()];
    let mut top_level = Vec::new();
    for (idx, parent) in parents.iter().enumerate() {
        match parent {
            Some(parent) => children_of[*parent].push(idx),
            None => top_level.push(idx),
        }
    }

    let mut slots: Vec<Option<Session>> = transcripts
        .into_iter()
        .map(|row| Some(Session::from_row(row)))
        .collect();
    let mut nested: Vec<Session> = top_level
        .into_iter()
        .filter_map(|idx| build(idx, &children_of, &mut slots))
        .collect();
    sort_sessions(&mut nested);
    nested
}

/// Returns the index of the transcript whose container is the deepest strict ancestor
/// directory of `path` below `root_container`, if any.
fn deepest_container(
    path: &str,
    root_container: &str,
    index_by_container: &HashMap<&str, usize>,
) -> Option<usize> {
    let mut ancestor = path;
    while let Some(slash) = ancestor.rfind('/') {
        ancestor = &ancestor[..slash];
        if ancestor.len() <= root_container.len() {
            return None;
        }
        if let Some(idx) = index_by_container.get(ancestor) {
            return Some(*idx);
        }
    }
    None
}

fn build(idx: usize, children_of: &[Vec<usize>], slots: &mut [Option<Session>]) -> Option<Session> {
    let mut session = slots[idx].take()?;
    session.subagent_sessions = children_of[idx]
        .iter()
        .filter_map(|child| build(*child, children_of, slots))
        .collect();
    Some(session)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::HeaderFields;
    use crate::timestamp;

    fn row(path: &str, second: u32) -> SessionRow {
        let text = format!("2026-01-01T00:00:{second:02}Z");
        SessionRow {
            path: path.to_owned(),
            header: HeaderFields {
                id: format!("id-{second}"),
                instant: timestamp::parse(&text).expect("valid"),
                timestamp: text,
                cwd: "/w".to_owned(),
                parent_session_path: None,
            },
        }
    }

    fn outline(sessions: &[Session], depth: usize, out: &mut Vec<String>) {
        for session in sessions {
            out.push(format!("{}{}", "  ".repeat(depth), session.path));
            outline(&session.subagent_sessions, depth + 1, out);
        }
    }

    fn check(rows: &[(&str, u32)], expected: &[&str]) {
        let rows: Vec<SessionRow> = rows.iter().map(|(path, sec)| row(path, *sec)).collect();
        let mut forward = Vec::new();
        outline(&nest("/r/p", rows.clone()), 0, &mut forward);
        assert_eq!(forward, expected);
        let mut reversed_rows = rows;
        reversed_rows.reverse();
        let mut backward = Vec::new();
        outline(&nest("/r/p", reversed_rows), 0, &mut backward);
        assert_eq!(backward, expected, "input order must not matter");
    }

    #[test]
    fn runs_sit_flat_under_the_session_in_time_order() {
        check(
            &[
                ("/r/p/L/run-1/session.jsonl", 5),
                ("/r/p/L/run-0/session.jsonl", 3),
            ],
            &["/r/p/L/run-0/session.jsonl", "/r/p/L/run-1/session.jsonl"],
        );
    }

    #[test]
    fn a_transcript_goes_to_its_deepest_container() {
        check(
            &[
                ("/r/p/L/run-0/session.jsonl", 1),
                ("/r/p/L/run-0/session/M/run-0/session.jsonl", 2),
                ("/r/p/forks/f.jsonl", 3),
                ("/r/p/forks/f/N/run-0/session.jsonl", 4),
                ("/r/p/forks/f/N/run-0/session/O/run-0/session.jsonl", 5),
            ],
            &[
                "/r/p/L/run-0/session.jsonl",
                "  /r/p/L/run-0/session/M/run-0/session.jsonl",
                "/r/p/forks/f.jsonl",
                "  /r/p/forks/f/N/run-0/session.jsonl",
                "    /r/p/forks/f/N/run-0/session/O/run-0/session.jsonl",
            ],
        );
    }

    #[test]
    fn a_container_prefix_that_is_not_a_directory_boundary_does_not_nest() {
        check(
            &[
                ("/r/p/a/session.jsonl", 1),
                ("/r/p/a/sessionx/session.jsonl", 2),
            ],
            &["/r/p/a/session.jsonl", "/r/p/a/sessionx/session.jsonl"],
        );
    }

    #[test]
    fn many_siblings_nest_in_linear_time() {
        // Regression guard for issue 4: one session with thousands of runs. Correctness only;
        // the speed is measured in the benches.
        let rows: Vec<SessionRow> = (0..5000)
            .map(|n| row(&format!("/r/p/L/run-{n}/session.jsonl"), (n % 60) as u32))
            .collect();
        let nested = nest("/r/p", rows);
        assert_eq!(nested.len(), 5000);
        assert!(
            nested
                .windows(2)
                .all(|pair| pair[0].chronological_cmp(&pair[1]).is_lt())
        );
    }
}
