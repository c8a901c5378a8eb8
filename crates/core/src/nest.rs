//! Containment nesting: attaching subagent transcripts to the session that launched them.
//!
//! Every transcript found under a session's container is attached to the transcript whose
//! container is its deepest ancestor directory, or to the session itself when none is. So a
//! transcript is never reported under two parents, and a nested launch that does not sit under
//! its parent's container falls back to the nearest session that does contain it.
//!
//! The work is linear in the total length of the transcripts' paths: the containers form a
//! trie of path components, and each transcript walks its own path down it once instead of
//! testing every other transcript (the reference implementation's quadratic scan takes tens
//! of seconds for one session with 5,000 runs) or hashing every ancestor prefix whole (cubic
//! in the depth of nested runs).
//! Nothing recurses: the tree is assembled and sorted with explicit work lists, so its depth
//! is bounded by memory, not by the thread's stack.

use std::collections::HashMap;

use crate::listing::{Session, SessionRow, sort_sessions};
use crate::path::container_of;

/// Returns the transcripts found under `root_container`, nested by containment and sorted.
///
/// Every row's path must lie strictly inside `root_container`; a row outside it is attached
/// at the top level (it cannot be placed anywhere more specific).
pub fn nest(root_container: &str, transcripts: Vec<SessionRow>) -> Vec<Session> {
    nest_counting(root_container, transcripts).0
}

/// Returns what [`nest`] returns and the bytes of path it examined to find every parent.
fn nest_counting(root_container: &str, transcripts: Vec<SessionRow>) -> (Vec<Session>, usize) {
    // Every path that can nest lies below `root_container`, so the trie holds only what
    // follows it: the shared prefix (the store, the project, the session's container) is
    // never hashed, which keeps a listing of shallow runs as cheap as a map lookup per run.
    let mut containers = ContainerTrie::default();
    for (idx, row) in transcripts.iter().enumerate() {
        if let Some(container) = container_of(&row.path).and_then(|c| below(c, root_container)) {
            containers.insert(container, idx);
        }
    }
    let parents: Vec<Option<usize>> = transcripts
        .iter()
        .map(|row| {
            below(&row.path, root_container)
                .and_then(|relative| containers.deepest_container(relative))
        })
        .collect();
    let work = containers.work;

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
    // Children are attached before their parents (reverse pre-order) with an explicit stack, so
    // runs nested thousands of levels deep cannot overflow the thread's stack.
    let mut order = Vec::with_capacity(slots.len());
    let mut stack: Vec<usize> = top_level.iter().rev().copied().collect();
    while let Some(idx) = stack.pop() {
        order.push(idx);
        stack.extend(children_of[idx].iter().rev());
    }
    for &idx in order.iter().rev() {
        let children: Vec<Session> = children_of[idx]
            .iter()
            .filter_map(|&child| slots[child].take())
            .collect();
        if let Some(session) = &mut slots[idx] {
            session.subagent_sessions = children;
        }
    }
    let mut nested: Vec<Session> = top_level
        .into_iter()
        .filter_map(|idx| slots[idx].take())
        .collect();
    sort_sessions(&mut nested);
    (nested, work)
}

/// The transcripts' containers as a trie of path components, so that finding the deepest
/// container above a path walks that path once, component by component, instead of hashing
/// every ancestor prefix whole (that was cubic in the depth of nested runs).
#[derive(Default)]
struct ContainerTrie<'a> {
    /// The child of a node (by index; node 0 stands for no component at all) named by one
    /// path component.
    children: HashMap<(usize, &'a str), usize>,
    /// The transcript whose container each node is, if any (the last one given wins).
    owners: Vec<Option<usize>>,
    /// Bytes of path examined so far: each component costs its length and one.
    work: usize,
}

impl<'a> ContainerTrie<'a> {
    /// Records that transcript `idx` has `container` as its container.
    fn insert(&mut self, container: &'a str, idx: usize) {
        if self.owners.is_empty() {
            self.owners.push(None);
        }
        let mut node = 0;
        for component in container.split('/') {
            self.work += component.len() + 1;
            let next_node = self.owners.len();
            node = *self.children.entry((node, component)).or_insert(next_node);
            if node == next_node {
                self.owners.push(None);
            }
        }
        self.owners[node] = Some(idx);
    }

    /// Returns the index of the transcript whose container is the deepest strict ancestor
    /// directory of `relative` (a path relative to the root container), if any.
    fn deepest_container(&mut self, relative: &str) -> Option<usize> {
        let (directory, _file_name) = relative.rsplit_once('/')?;
        let mut deepest = None;
        let mut node = 0;
        for component in directory.split('/') {
            self.work += component.len() + 1;
            let Some(&child) = self.children.get(&(node, component)) else {
                break;
            };
            node = child;
            if let Some(owner) = self.owners[node] {
                deepest = Some(owner);
            }
        }
        deepest
    }
}

/// Returns `path` relative to `root` (without the separator) when it lies strictly below it.
fn below<'a>(path: &'a str, root: &str) -> Option<&'a str> {
    path.strip_prefix(root)?
        .strip_prefix('/')
        .filter(|rest| !rest.is_empty())
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

    /// Runs `work` on a thread with a 128 KiB stack: recursion once per level of a chain a
    /// few thousand deep overflows it, a work list does not.
    fn on_a_small_stack(work: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(work)
            .expect("spawn")
            .join()
            .expect("no stack overflow");
    }

    /// Runs nested thousands of levels deep (each in the container of the one before)
    /// are nested, sorted and dropped without recursion. Paths grow with the depth, so the
    /// chain is 5,000 deep here; deeper chains are built directly below.
    #[test]
    fn a_deep_chain_of_runs_nests_without_recursion() {
        on_a_small_stack(|| {
            let depth = 5_000;
            let mut container = "/r/p/s".to_owned();
            let mut rows = Vec::with_capacity(depth);
            for level in 0..depth {
                rows.push(row(&format!("{container}.jsonl"), (level % 60) as u32));
                container.push_str("/s");
            }
            rows.reverse();
            let nested = nest("/r/p", rows);
            assert_eq!(nested.len(), 1);
            let mut session = &nested[0];
            let mut n_levels = 1;
            while let [child] = session.subagent_sessions.as_slice() {
                assert!(
                    child
                        .path
                        .starts_with(session.path.trim_end_matches(".jsonl"))
                );
                session = child;
                n_levels += 1;
            }
            assert!(session.subagent_sessions.is_empty());
            assert_eq!(n_levels, depth);
        });
    }

    /// A chain of 100,000 runs built in memory is sorted at every level and dropped
    /// without recursion.
    #[test]
    fn a_chain_100_000_deep_sorts_and_drops_without_recursion() {
        on_a_small_stack(|| {
            let mut chain = vec![row("/r/p/leaf.jsonl", 0), row("/r/p/z.jsonl", 1)]
                .into_iter()
                .map(Session::from_row)
                .collect::<Vec<_>>();
            chain.reverse();
            for level in 0..100_000u32 {
                let mut parent = Session::from_row(row(&format!("/r/p/{level}.jsonl"), 2));
                parent.subagent_sessions = chain;
                chain = vec![parent];
            }
            sort_sessions(&mut chain);
            let mut session = &chain[0];
            while let [child] = session.subagent_sessions.as_slice() {
                session = child;
            }
            let paths: Vec<&str> = session
                .subagent_sessions
                .iter()
                .map(|run| run.path.as_str())
                .collect();
            assert_eq!(paths, ["/r/p/leaf.jsonl", "/r/p/z.jsonl"]);
            drop(chain);
        });
    }

    /// Runs nested a thousand levels deep, two per level, none
    /// inside another's container, so each one's parent is the session at the top. Finding
    /// the parents examines each path a bounded number of times (linear in the total length of
    /// the paths), not every ancestor prefix of every path (cubic in the depth: about 1.3e9
    /// bytes here, against 4e6 of paths).
    #[test]
    fn nesting_deep_runs_is_linear_in_the_length_of_their_paths() {
        let depth = 1_000;
        let mut dir = "/r/p/s".to_owned();
        let mut rows = vec![row("/r/p/s.jsonl", 0)];
        for level in 0..depth {
            rows.push(row(&format!("{dir}/a.jsonl"), (level % 60) as u32));
            rows.push(row(&format!("{dir}/b.jsonl"), (level % 60) as u32));
            dir.push_str("/c");
        }
        let total_path_bytes: usize = rows.iter().map(|row| row.path.len()).sum();
        let (nested, work) = nest_counting("/r/p", rows);
        assert_eq!(nested.len(), 1);
        assert_eq!(nested[0].subagent_sessions.len(), 2 * depth);
        assert!(
            work <= 2 * total_path_bytes,
            "examined {work} bytes of path for {total_path_bytes} bytes of paths"
        );
    }

    #[test]
    fn many_siblings_nest_in_linear_time() {
        // One session with thousands of runs. Correctness only;
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
