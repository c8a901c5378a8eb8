//! Turns and checkpoints. A turn is one assistant response plus the tool results that answer
//! its tool calls; its checkpoint is the turn's last entry. Only complete turns (every tool
//! call answered) have checkpoints.

use serde::Serialize;

use crate::entry::Role;
use crate::session::Transcript;

/// Returns one turn of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// The assistant message that opens the turn.
    pub assistant: usize,
    /// The tool results that follow it, in order.
    pub tool_results: Vec<usize>,
    /// The turn's last entry.
    pub last: usize,
    /// Every tool call has its result (or the response made none).
    pub is_complete: bool,
}

impl Turn {
    /// Returns the checkpoint entry: the turn's last entry, when the turn is complete.
    pub fn checkpoint(&self) -> Option<usize> {
        self.is_complete.then_some(self.last)
    }
}

/// Marks an entry that belongs to no turn in `turn_of_entry`.
const NO_TURN: u32 = u32::MAX;

/// Returns every turn of a session with lookups from entries to turns.
#[derive(Debug, Clone)]
pub struct Turns {
    turns: Vec<Turn>,
    /// The turn of each entry, or [`NO_TURN`]: four bytes per entry, since a session can hold
    /// millions of entries. There are fewer turns than entries, which fit a `u32`.
    turn_of_entry: Vec<u32>,
}

impl Turns {
    /// Returns the turns of `session` in file order of their assistant message.
    pub fn new(session: &Transcript) -> Turns {
        let mut turns = Vec::new();
        let mut turn_of_entry = vec![NO_TURN; session.entries().len()];
        for (assistant, entry) in session.entries().iter().enumerate() {
            let Some(meta) = entry.message() else {
                continue;
            };
            if meta.role != Role::Assistant {
                continue;
            }
            let mut tool_results = Vec::new();
            let mut current = assistant;
            // Follow the tool results; at a fork among them, the latest appended one.
            while let Some(&next) = session
                .children(current)
                .iter()
                .rev()
                .find(|&&child| session.entry(child).has_role(&Role::ToolResult))
            {
                tool_results.push(next);
                current = next;
            }
            let n_calls = meta.shape.n_tool_calls as usize;
            let is_complete = tool_results.len() >= n_calls;
            let turn_idx = turns.len() as u32;
            turn_of_entry[assistant] = turn_idx;
            for &tool_result in &tool_results {
                turn_of_entry[tool_result] = turn_idx;
            }
            turns.push(Turn {
                assistant,
                tool_results,
                last: current,
                is_complete,
            });
        }
        Turns {
            turns,
            turn_of_entry,
        }
    }

    /// Returns every turn.
    pub fn all(&self) -> &[Turn] {
        &self.turns
    }

    /// Returns the turn an entry belongs to.
    pub fn turn_of(&self, idx: usize) -> Option<&Turn> {
        match self.turn_of_entry[idx] {
            NO_TURN => None,
            turn => self.turns.get(turn as usize),
        }
    }

    /// Returns whether `idx` is a checkpoint: the last entry of a complete turn.
    pub fn is_checkpoint(&self, idx: usize) -> bool {
        self.turn_of(idx)
            .is_some_and(|turn| turn.checkpoint() == Some(idx))
    }

    /// Returns the checkpoints in file order of their entry.
    pub fn checkpoints(&self) -> Vec<usize> {
        let mut checkpoints: Vec<usize> = self.turns.iter().filter_map(Turn::checkpoint).collect();
        checkpoints.sort_unstable();
        checkpoints
    }

    /// Returns the nearest checkpoint strictly above `idx`.
    pub fn parent_checkpoint(&self, session: &Transcript, idx: usize) -> Option<usize> {
        let mut current = session.parent(idx);
        while let Some(entry) = current {
            if self.is_checkpoint(entry) {
                return Some(entry);
            }
            current = session.parent(entry);
        }
        None
    }

    /// Returns the first checkpoint on each path below `idx` (not `idx` itself), in file order.
    pub fn child_checkpoints(&self, session: &Transcript, idx: usize) -> Vec<usize> {
        self.child_checkpoints_counted(session, idx, &mut 0)
    }

    /// Does what [`Turns::child_checkpoints`] does, adding the entries visited to `n_steps`.
    pub(crate) fn child_checkpoints_counted(
        &self,
        session: &Transcript,
        idx: usize,
        n_steps: &mut u64,
    ) -> Vec<usize> {
        let mut found = Vec::new();
        let mut stack: Vec<usize> = session.children(idx).iter().rev().copied().collect();
        while let Some(entry) = stack.pop() {
            *n_steps += 1;
            if self.is_checkpoint(entry) {
                found.push(entry);
                continue;
            }
            stack.extend(session.children(entry).iter().rev().copied());
        }
        found.sort_unstable();
        found
    }

    /// Returns the checkpoints on the path from a root to `idx` (inclusive), root first.
    pub fn checkpoints_on_path(&self, session: &Transcript, idx: usize) -> Vec<usize> {
        session
            .path_to(idx)
            .into_iter()
            .filter(|&entry| self.is_checkpoint(entry))
            .collect()
    }
}
