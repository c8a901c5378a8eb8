//! The entry tree, resolved once at parse time and always a forest: missing parents, parent
//! cycles and duplicate ids are repaired (and reported) so that every later walk terminates.
//!
//! The build is linear in the number of entries whatever the damage: ids are looked up in an
//! open-addressing table over the compact store, the cause of a missing parent is found with
//! one hash look-up and one binary search (a scan of every malformed line per orphan made a
//! 38 MB file take over 300 s), and cycles are found in one pass that visits every
//! entry once. The tree is stored in flat arrays of `u32`/`usize` (children in one shared
//! array), a few bytes per entry.

use std::collections::HashMap;
use std::hash::BuildHasher;

use crate::store::EntryStore;
use crate::warning::{WarningKind, Warnings};

/// The most entries one transcript indexes: tree links are `u32` with `u32::MAX` for none.
pub(crate) const MAX_ENTRIES: usize = (u32::MAX - 1) as usize;
const NONE: u32 = u32::MAX;
/// The most salvaged ids of malformed lines remembered to explain missing parents; beyond it a
/// missing parent is explained by the nearest malformed line before it.
const MAX_SALVAGED_IDS: usize = 10_000;
/// Characters of an id kept in a warning message.
const ID_CHARS_IN_MESSAGES: usize = 80;
/// Line numbers of a cycle listed in its warning.
const CYCLE_LINES_IN_MESSAGES: usize = 10;

/// Returns `text` cut to [`ID_CHARS_IN_MESSAGES`] characters, for a warning message.
pub(crate) fn short(text: &str) -> String {
    match text.char_indices().nth(ID_CHARS_IN_MESSAGES) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// What the parser remembers of malformed lines, to explain the entries they orphaned, in
/// memory bounded by the entries rather than by the bad lines.
#[derive(Debug, Default)]
pub(crate) struct MalformedLines {
    /// Ids that malformed lines seem to carry, with their lines (the first few thousand).
    salvaged: HashMap<Box<str>, u64>,
    /// `(first entry, line)`: the last malformed line before entries from `first entry` on;
    /// a new element only when a malformed line came between two entries.
    last_before: Vec<(u32, u64)>,
    /// The last malformed line seen so far.
    last_line: Option<u64>,
}

impl MalformedLines {
    /// Notes a malformed (or over-long) line and the id it seems to carry.
    pub(crate) fn note(&mut self, line_no: u64, salvaged_id: Option<String>) {
        self.last_line = Some(line_no);
        if let Some(id) = salvaged_id
            && self.salvaged.len() < MAX_SALVAGED_IDS
        {
            self.salvaged.entry(id.into_boxed_str()).or_insert(line_no);
        }
    }

    /// Notes that entry `idx` was read, after every malformed line noted so far.
    pub(crate) fn entry_read(&mut self, idx: usize) {
        let Some(line) = self.last_line else {
            return;
        };
        if self
            .last_before
            .last()
            .is_none_or(|&(_, last)| last != line)
        {
            // `idx` is below `MAX_ENTRIES`, so it fits.
            self.last_before
                .push((u32::try_from(idx).unwrap_or(u32::MAX), line));
        }
    }

    /// Returns why entry `idx` cannot find its parent `parent_id`.
    fn cause(&self, parent_id: &str, idx: usize) -> String {
        if let Some(line) = self.salvaged.get(parent_id) {
            return format!("it was on malformed line {line}");
        }
        let position = self
            .last_before
            .partition_point(|&(first, _)| first as usize <= idx);
        match position.checked_sub(1).map(|at| self.last_before[at].1) {
            Some(line) => format!("it may have been on malformed line {line}"),
            None => "no line of the file holds it".to_owned(),
        }
    }
}

/// An open-addressing table from ids to entries; the ids themselves stay in the store.
///
/// Each slot holds the entry index plus one in its low 32 bits (0: empty) and the high 32
/// bits of the id's hash in its high bits, so a probe compares ids (a random read of the
/// store) only when the hashes agree.
#[derive(Debug, Default)]
struct IdIndex {
    /// The slots; the length is a power of two.
    slots: Vec<u64>,
    hasher: std::hash::RandomState,
}

impl IdIndex {
    fn with_capacity(n_ids: usize) -> Self {
        // At most half full, so a probe sequence stays short: at three quarters a linear
        // probe takes about eight steps on average, and the fuzz test's bound of eight steps
        // an entry failed now and then with the random hash.
        let n_slots = (2 * n_ids + 1).next_power_of_two().max(8);
        IdIndex {
            slots: vec![0; n_slots],
            hasher: std::hash::RandomState::new(),
        }
    }

    /// Returns the slot that holds `id`, or the empty slot where it would go, the hash tag to
    /// store with it, and the probes taken.
    fn slot_of(&self, store: &EntryStore, id: &str) -> (usize, u64, u64) {
        let hash = self.hasher.hash_one(id);
        let tag = hash & !u64::from(u32::MAX);
        if self.slots.is_empty() {
            return (0, tag, 0);
        }
        let mask = self.slots.len() - 1;
        // Truncating the hash is fine: only its low bits choose the slot.
        let mut slot = hash as usize & mask;
        let mut n_probes = 1;
        loop {
            let held = self.slots[slot];
            let held_idx = held & u64::from(u32::MAX);
            if held_idx == 0
                || (held & !u64::from(u32::MAX) == tag
                    && store.id(held_idx as usize - 1) == Some(id))
            {
                return (slot, tag, n_probes);
            }
            slot = (slot + 1) & mask;
            n_probes += 1;
        }
    }

    /// Maps `id` to `idx`, returning the entry it named before, if any.
    fn insert(
        &mut self,
        store: &EntryStore,
        id: &str,
        idx: usize,
        steps: &mut u64,
    ) -> Option<usize> {
        let (slot, tag, n_probes) = self.slot_of(store, id);
        *steps += n_probes;
        let previous = Self::entry_in(self.slots[slot]);
        // `idx` is below `MAX_ENTRIES`, so `idx + 1` fits in 32 bits.
        self.slots[slot] = tag | (idx as u64 + 1);
        previous
    }

    fn get(&self, store: &EntryStore, id: &str) -> Option<usize> {
        let (slot, _, _) = self.slot_of(store, id);
        Self::entry_in(*self.slots.get(slot)?)
    }

    /// Returns the entry a slot holds.
    fn entry_in(slot: u64) -> Option<usize> {
        (slot & u64::from(u32::MAX))
            .checked_sub(1)
            .map(|idx| idx as usize)
    }
}

/// The repaired entry tree.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    ids: IdIndex,
    parents: Vec<u32>,
    /// Where each entry's children start in `children`; one more element than entries.
    child_starts: Vec<u32>,
    children: Vec<usize>,
    roots: Vec<usize>,
    /// Elementary steps the build took, to test that it stays linear.
    n_build_steps: u64,
}

impl Tree {
    /// Returns the tree of the entries in `store`, reporting what it repaired.
    pub(crate) fn build(
        store: &EntryStore,
        is_linear: bool,
        malformed: &MalformedLines,
        warnings: &mut Warnings<'_>,
    ) -> Tree {
        let n_entries = store.len();
        let mut tree = Tree {
            parents: vec![NONE; n_entries],
            ..Tree::default()
        };
        if is_linear {
            for (idx, parent) in tree.parents.iter_mut().enumerate().skip(1) {
                *parent = (idx - 1) as u32;
            }
            tree.n_build_steps += n_entries as u64;
        } else {
            let has_duplicates = tree.index_ids(store, warnings);
            tree.link_parents(store, has_duplicates, malformed, warnings);
            tree.cut_cycles(store, warnings);
        }
        tree.link_children();
        tree
    }

    /// Indexes every id; returns whether some id is used twice.
    fn index_ids(&mut self, store: &EntryStore, warnings: &mut Warnings<'_>) -> bool {
        self.ids = IdIndex::with_capacity(store.n_ids());
        let mut has_duplicates = false;
        for idx in 0..store.len() {
            self.n_build_steps += 1;
            let Some(id) = store.id(idx) else {
                let entry = store.get(idx);
                warnings.push(Some(entry.line_no), WarningKind::MissingId, || {
                    format!(
                        "the {} entry on line {} has no id; nothing can continue from it",
                        short(entry.entry_type),
                        entry.line_no
                    )
                });
                continue;
            };
            if let Some(previous) = self.ids.insert(store, id, idx, &mut self.n_build_steps) {
                has_duplicates = true;
                let line_no = store.line_no(idx);
                warnings.push(Some(line_no), WarningKind::DuplicateId, || {
                    format!(
                        "id {} on line {line_no} was already used on line {}; the later entry wins lookups, as in Pi",
                        short(id),
                        store.line_no(previous)
                    )
                });
            }
        }
        has_duplicates
    }

    fn link_parents(
        &mut self,
        store: &EntryStore,
        has_duplicates: bool,
        malformed: &MalformedLines,
        warnings: &mut Warnings<'_>,
    ) {
        let mut previous_id = None;
        for idx in 0..store.len() {
            self.n_build_steps += 1;
            let (id, parent_id) = store.ids(idx);
            let before = std::mem::replace(&mut previous_id, id);
            let Some(parent_id) = parent_id else {
                continue;
            };
            // Pi appends each entry below the one before it, so that one is tried first
            // (sequential memory, no hashing); without duplicate ids it is the entry the id
            // names (with them, the later of the two wins, so the table decides).
            if !has_duplicates && before == Some(parent_id) {
                self.parents[idx] = (idx - 1) as u32;
                continue;
            }
            match self.ids.get(store, parent_id) {
                Some(parent) => self.parents[idx] = parent as u32,
                None => {
                    let entry = store.get(idx);
                    // One hash look-up and one binary search, whatever the damage.
                    self.n_build_steps += 1;
                    warnings.push(Some(entry.line_no), WarningKind::MissingParent, || {
                        format!(
                            "entry {} on line {} names parent {}, which is missing ({}); kept as an extra root, where Pi drops the history above it",
                            short(&entry.handle()),
                            entry.line_no,
                            short(parent_id),
                            malformed.cause(parent_id, idx)
                        )
                    });
                }
            }
        }
    }

    /// Cuts every parent cycle at its earliest entry (file order), in one pass: each entry is
    /// visited once, by the first walk up from it or from a descendant.
    fn cut_cycles(&mut self, store: &EntryStore, warnings: &mut Warnings<'_>) {
        let n_entries = store.len();
        // The walk (start index + 1) that first visited an entry; 0 for none yet.
        let mut walk_of = vec![0u32; n_entries];
        let mut path: Vec<usize> = Vec::new();
        for start in 0..n_entries {
            if walk_of[start] != 0 {
                continue;
            }
            let walk = start as u32 + 1;
            path.clear();
            let mut current = Some(start);
            while let Some(idx) = current {
                self.n_build_steps += 1;
                if walk_of[idx] == walk {
                    // `idx` is on this walk twice: the path from its first visit is a cycle.
                    let cycle_start = path.iter().position(|&member| member == idx).unwrap_or(0);
                    let cycle = &path[cycle_start..];
                    let first = cycle.iter().copied().min().unwrap_or(idx);
                    warnings.push(Some(store.line_no(first)), WarningKind::Cycle, || {
                        cycle_message(store, cycle, first)
                    });
                    self.parents[first] = NONE;
                    break;
                }
                if walk_of[idx] != 0 {
                    // Reached a part of the forest an earlier walk already checked.
                    break;
                }
                walk_of[idx] = walk;
                path.push(idx);
                current = self.parent(idx);
            }
        }
    }

    /// Fills `child_starts`, `children` and `roots` from `parents` (children in file order).
    fn link_children(&mut self) {
        let n_entries = self.parents.len();
        let mut starts = vec![0u32; n_entries + 1];
        for &parent in &self.parents {
            if parent != NONE {
                starts[parent as usize + 1] += 1;
            }
        }
        for idx in 0..n_entries {
            starts[idx + 1] += starts[idx];
        }
        let mut next = starts.clone();
        let mut children = vec![0usize; starts[n_entries] as usize];
        for (idx, &parent) in self.parents.iter().enumerate() {
            self.n_build_steps += 1;
            if parent == NONE {
                self.roots.push(idx);
            } else {
                let slot = &mut next[parent as usize];
                children[*slot as usize] = idx;
                *slot += 1;
            }
        }
        self.child_starts = starts;
        self.children = children;
        self.roots.shrink_to_fit();
    }

    /// Returns the resolved parent of `idx`.
    pub(crate) fn parent(&self, idx: usize) -> Option<usize> {
        match self.parents[idx] {
            NONE => None,
            parent => Some(parent as usize),
        }
    }

    /// Returns the children of `idx` in file order.
    pub(crate) fn children(&self, idx: usize) -> &[usize] {
        let start = self.child_starts[idx] as usize;
        let end = self.child_starts[idx + 1] as usize;
        &self.children[start..end]
    }

    /// Returns the roots in file order.
    pub(crate) fn roots(&self) -> &[usize] {
        &self.roots
    }

    /// Returns the entry with `id` (the later one for duplicates).
    pub(crate) fn find_id(&self, store: &EntryStore, id: &str) -> Option<usize> {
        self.ids.get(store, id)
    }

    /// Returns the elementary steps the build took.
    pub(crate) fn n_build_steps(&self) -> u64 {
        self.n_build_steps
    }
}

fn cycle_message(store: &EntryStore, cycle: &[usize], first: usize) -> String {
    let entry = store.get(first);
    if cycle.len() == 1 {
        return format!(
            "entry {} on line {} is its own parent (Pi loops forever on it); made a root",
            short(&entry.handle()),
            entry.line_no
        );
    }
    let mut lines: Vec<String> = cycle
        .iter()
        .take(CYCLE_LINES_IN_MESSAGES)
        .map(|&member| store.line_no(member).to_string())
        .collect();
    if cycle.len() > CYCLE_LINES_IN_MESSAGES {
        lines.push(format!(
            "and {} more",
            cycle.len() - CYCLE_LINES_IN_MESSAGES
        ));
    }
    format!(
        "entries on lines {} form a parent cycle; entry {} on line {} was made a root",
        lines.join(", "),
        short(&entry.handle()),
        entry.line_no
    )
}
