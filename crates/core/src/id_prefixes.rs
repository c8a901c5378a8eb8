//! Each session id's shortest unique prefix among a set of ids ([`IdPrefixes`]): what
//! `list --long` and the stats table show, so that every id they print works as a handle.
//!
//! A store holds tens of thousands of ids, and the set is built on every `--long` listing,
//! so it is laid out for that: the ids are copied once into one buffer ([`IdBuffer`]) and
//! grouped by their first [`MIN_ID_WIDTH`] bytes in one table of indices; only the ids that
//! share those with another id are sorted (by integer keys rather than by comparing scattered
//! strings) to find their neighbours.

use std::hash::BuildHasher;

use crate::listing::MIN_ID_WIDTH;

/// Ids copied one after another into one buffer, in the order given (duplicates included):
/// the input of [`IdPrefixes::from_ids`], cheap to fill from borrowed ids before the set is
/// sorted elsewhere (on another thread, say).
#[derive(Debug, Clone, Default)]
pub struct IdBuffer {
    /// The ids' text, one after another.
    text: String,
    /// Where each id ends in `text`; it starts where the one before ends.
    ends: Vec<usize>,
}

impl IdBuffer {
    /// Returns an empty buffer with room for `n_ids` ids of `n_bytes` bytes in all.
    pub fn with_capacity(n_ids: usize, n_bytes: usize) -> IdBuffer {
        IdBuffer {
            text: String::with_capacity(n_bytes),
            ends: Vec::with_capacity(n_ids),
        }
    }

    /// Appends a copy of `id`.
    pub fn push(&mut self, id: &str) {
        self.text.push_str(id);
        self.ends.push(self.text.len());
    }

    /// Returns the id numbered `idx` (in the order pushed).
    fn id(&self, idx: usize) -> &str {
        let (start, end) = self.span(idx);
        self.text.get(start..end).unwrap_or_default()
    }

    /// Returns where the id numbered `idx` (in the order pushed) lies in the text.
    fn span(&self, idx: usize) -> (usize, usize) {
        let start = idx
            .checked_sub(1)
            .and_then(|before| self.ends.get(before))
            .copied()
            .unwrap_or(0);
        (start, self.ends.get(idx).copied().unwrap_or(start))
    }
}

impl<'a> FromIterator<&'a str> for IdBuffer {
    fn from_iter<I: IntoIterator<Item = &'a str>>(ids: I) -> IdBuffer {
        let mut buffer = IdBuffer::default();
        for id in ids {
            buffer.push(id);
        }
        buffer
    }
}

/// The ids of a set of sessions, for finding the shortest prefix that names each one alone:
/// what `list --long` shows, so every id it prints works as a handle.
///
/// An id is shown by at least [`MIN_ID_WIDTH`] characters, so only the ids that share that
/// many with another id need their neighbours in sorted order; in a store of random ids they
/// are few. The ids are grouped by their first [`MIN_ID_WIDTH`] bytes when those are ASCII
/// (one integer key, one table probe); the ids of a group of two or more, and the ids whose
/// first bytes are not all ASCII, are sorted apart (`SortedIds`).
#[derive(Debug, Clone, Default)]
pub struct IdPrefixes {
    /// The ids as given (duplicates included); groups name them by number.
    ids: IdBuffer,
    /// An open addressing table (linear probing, at most half full, a power of two long) of
    /// the groups, by key. Empty when the set is empty or too long for 32-bit numbers (then
    /// every id is in `crowded`).
    groups: Vec<Group>,
    /// The ids of the groups of two distinct ids or more, and those longer than
    /// [`MIN_ID_WIDTH`] bytes without an ASCII key: every id that shares its first
    /// [`MIN_ID_WIDTH`] characters with another id of the set is here, and so is that other.
    crowded: SortedIds,
    /// The hash of `groups`, seeded per process, so that a hostile store cannot choose ids
    /// whose keys all land on one slot.
    hasher: foldhash::fast::RandomState,
}

/// The ids of an [`IdPrefixes`] set whose first [`MIN_ID_WIDTH`] bytes are the same ASCII
/// characters: a slot of its table.
#[derive(Debug, Clone, Copy, Default)]
struct Group {
    /// The first [`MIN_ID_WIDTH`] bytes, little-endian.
    key: u64,
    /// The number of the group's first id plus one; zero is an empty slot.
    first: u32,
    /// Whether the group holds another id than its first (its ids are then in `crowded`).
    is_crowded: bool,
}

// A group's key holds the first `MIN_ID_WIDTH` bytes.
const _: () = assert!(MIN_ID_WIDTH == size_of::<u64>());

/// Returns the first [`MIN_ID_WIDTH`] bytes of `id` as an integer when there are that many
/// and all are ASCII (then they are its first [`MIN_ID_WIDTH`] characters).
fn ascii_key(id: &str) -> Option<u64> {
    let first: [u8; MIN_ID_WIDTH] = id.as_bytes().get(..MIN_ID_WIDTH)?.try_into().ok()?;
    let key = u64::from_le_bytes(first);
    (key & 0x8080_8080_8080_8080 == 0).then_some(key)
}

impl PartialEq for IdPrefixes {
    /// Two sets are equal when they hold the same distinct ids.
    fn eq(&self, other: &IdPrefixes) -> bool {
        self.distinct() == other.distinct()
    }
}

impl Eq for IdPrefixes {}

impl IdPrefixes {
    /// Returns the set of `ids` (duplicates count once).
    pub fn new<'a>(ids: impl Iterator<Item = &'a str>) -> IdPrefixes {
        IdPrefixes::from_ids(ids.collect())
    }

    /// Returns the set of the ids in `ids` (duplicates count once), taking their buffer.
    pub fn from_ids(ids: IdBuffer) -> IdPrefixes {
        let n_ids = ids.ends.len();
        let hasher = foldhash::fast::RandomState::default();
        let mut groups = Vec::new();
        if n_ids > 0 && u32::try_from(n_ids).is_ok() {
            groups = vec![Group::default(); (n_ids * 2).next_power_of_two()];
        }
        let mask = groups.len().wrapping_sub(1);
        let mut crowded = IdBuffer::default();
        for idx in 0..n_ids {
            let id = ids.id(idx);
            if id.len() < MIN_ID_WIDTH {
                // Fewer than `MIN_ID_WIDTH` characters: shown whole, and no other id shares
                // that many with it.
                continue;
            }
            let Some(key) = ascii_key(id).filter(|_| !groups.is_empty()) else {
                crowded.push(id);
                continue;
            };
            let mut slot = hasher.hash_one(key) as usize & mask;
            loop {
                let group = &mut groups[slot];
                if group.first == 0 {
                    // `n_ids` fits in 32 bits (checked above), and so does `idx + 1`.
                    *group = Group {
                        key,
                        first: (idx + 1) as u32,
                        is_crowded: false,
                    };
                    break;
                }
                if group.key == key {
                    if !group.is_crowded {
                        let first = ids.id(group.first as usize - 1);
                        if first == id {
                            break;
                        }
                        group.is_crowded = true;
                        crowded.push(first);
                    }
                    crowded.push(id);
                    break;
                }
                // The table is at most half full, so the probe ends at an empty slot.
                slot = (slot + 1) & mask;
            }
        }
        IdPrefixes {
            ids,
            groups,
            crowded: SortedIds::from_ids(crowded),
            hasher,
        }
    }

    /// Returns how many characters of `id` (at least [`MIN_ID_WIDTH`], at most all of it) no
    /// other id in the set starts with: the shortest prefix that is a handle for `id` alone.
    pub fn unique_len(&self, id: &str) -> usize {
        if id.len() <= MIN_ID_WIDTH {
            // At most `MIN_ID_WIDTH` characters, all shown.
            return id.chars().count();
        }
        let Some(key) = ascii_key(id).filter(|_| !self.groups.is_empty()) else {
            return self.crowded.unique_len(id);
        };
        let mask = self.groups.len() - 1;
        let mut slot = self.hasher.hash_one(key) as usize & mask;
        while let Some(group) = self.groups.get(slot) {
            if group.first == 0 {
                // No id of the set shares its first `MIN_ID_WIDTH` characters.
                return MIN_ID_WIDTH;
            }
            if group.key == key {
                if group.is_crowded {
                    return self.crowded.unique_len(id);
                }
                let other = self.ids.id(group.first as usize - 1);
                return if other == id {
                    MIN_ID_WIDTH
                } else {
                    prefix_len(id, Some(other), None)
                };
            }
            slot = (slot + 1) & mask;
        }
        self.crowded.unique_len(id)
    }

    /// Returns the distinct ids of the set, sorted.
    fn distinct(&self) -> Vec<&str> {
        let mut distinct: Vec<&str> = (0..self.ids.ends.len())
            .map(|idx| self.ids.id(idx))
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        distinct
    }
}

/// One distinct id of an [`IdPrefixes`] set, in sorted order.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Where the id starts in the set's text.
    start: usize,
    /// Where the id ends in the set's text.
    end: usize,
    /// The answer of [`IdPrefixes::unique_len`] for this id, worked out once from its sorted
    /// neighbours.
    unique_len: usize,
}

/// Distinct ids, sorted, each with its answer: the part of an [`IdPrefixes`] set whose ids
/// share their first [`MIN_ID_WIDTH`] characters with another id, or whose first characters
/// are not all ASCII.
#[derive(Debug, Clone, Default)]
struct SortedIds {
    /// The ids' text as given (duplicates included); entries point into it.
    text: String,
    /// The distinct ids, sorted bytewise, with their answers.
    sorted: Vec<Entry>,
    /// An open addressing table (linear probing, at most half full, a power of two long)
    /// from an id's hash to its place in `sorted`: each slot holds that index plus one (zero
    /// is an empty slot) and the high half of the hash, which spares most comparisons of
    /// text with an id that lands on a slot it does not own. Empty when `sorted` is empty or
    /// too long for 32-bit indices; a lookup that finds no id falls back to a binary search.
    table: Vec<(u32, u32)>,
    /// The hash of the table, seeded per process, so that a hostile store cannot choose
    /// ids that all land on one slot.
    hasher: foldhash::fast::RandomState,
}

impl SortedIds {
    /// Returns the distinct ids of `ids`, sorted, with their answers.
    fn from_ids(ids: IdBuffer) -> SortedIds {
        let order = sorted_distinct(&ids);
        let sorted = with_unique_lens(&ids, &order);
        let mut set = SortedIds {
            text: ids.text,
            sorted,
            table: Vec::new(),
            hasher: foldhash::fast::RandomState::default(),
        };
        set.fill_table();
        set
    }

    /// Returns the answer of [`IdPrefixes::unique_len`] for `id` among these ids.
    fn unique_len(&self, id: &str) -> usize {
        if let Some(entry) = self.find(id) {
            return entry.unique_len;
        }
        let position = self.sorted.partition_point(|entry| self.id(entry) < id);
        // In sorted order, the longest prefix `id` shares with another id is shared with a
        // neighbour.
        let before = position.checked_sub(1).and_then(|idx| self.sorted.get(idx));
        let after = self.sorted.get(position);
        prefix_len(
            id,
            before.map(|entry| self.id(entry)),
            after.map(|entry| self.id(entry)),
        )
    }

    /// Returns the text of `entry`.
    fn id(&self, entry: &Entry) -> &str {
        self.text.get(entry.start..entry.end).unwrap_or_default()
    }

    /// Returns the table slot an id of hash `hash` is looked for first, and the hash's high
    /// half kept in the slot.
    fn home(&self, hash: u64) -> (usize, u32) {
        // The table's length is a power of two, so the mask keeps the hash's low bits.
        let mask = self.table.len().wrapping_sub(1);
        let low = hash as usize & mask;
        (low, (hash >> 32) as u32)
    }

    /// Fills the lookup table with the index of every id in `sorted`.
    fn fill_table(&mut self) {
        if self.sorted.is_empty() || u32::try_from(self.sorted.len()).is_err() {
            return;
        }
        let n_slots = (self.sorted.len() * 2).next_power_of_two();
        self.table = vec![(0, 0); n_slots];
        for (idx, entry) in self.sorted.iter().enumerate() {
            let hash = self.hasher.hash_one(self.id(entry));
            let (mut slot, tag) = self.home(hash);
            // The table is at most half full, so the probe ends at an empty slot; the ids
            // are distinct, so none is there already.
            while self.table[slot].0 != 0 {
                slot = (slot + 1) & (n_slots - 1);
            }
            // `sorted.len()` fits in 32 bits (checked above), and so does `idx + 1`.
            self.table[slot] = ((idx + 1) as u32, tag);
        }
    }

    /// Returns the entry of `id` when the set holds it.
    fn find(&self, id: &str) -> Option<&Entry> {
        if self.table.is_empty() {
            return None;
        }
        let (mut slot, tag) = self.home(self.hasher.hash_one(id));
        loop {
            let (index, slot_tag) = *self.table.get(slot)?;
            // An empty slot ends the probe: the set does not hold `id`.
            let idx = (index as usize).checked_sub(1)?;
            if slot_tag == tag
                && let Some(entry) = self.sorted.get(idx)
                && self.id(entry) == id
            {
                return Some(entry);
            }
            slot = (slot + 1) & (self.table.len() - 1);
        }
    }
}

/// Returns the numbers of the distinct ids of `ids`, in bytewise order of their text.
///
/// Each id is keyed by one integer: its first bytes, big-endian and padded with zeros, in the
/// high bits and its number in the low bits. Sorting those integers orders the ids by their
/// first bytes (a shorter id before a longer one that starts with it), so only a run of ids
/// whose first bytes are equal needs its text compared.
fn sorted_distinct(ids: &IdBuffer) -> Vec<usize> {
    let n_ids = ids.ends.len();
    // The number takes 32 bits when it fits, leaving 12 bytes of the id in the key.
    let number_bits = if u32::try_from(n_ids).is_ok() { 32 } else { 64 };
    let n_key_bytes = (128 - number_bits) / 8;
    let number_mask = u128::MAX >> (128 - number_bits);
    let text = ids.text.as_bytes();
    let mut keys: Vec<u128> = (0..n_ids)
        .map(|idx| {
            let (start, end) = ids.span(idx);
            let mut first = [0u8; 16];
            let n_first = (end - start).min(n_key_bytes);
            first[..n_first].copy_from_slice(&text[start..start + n_first]);
            let prefix = u128::from_be_bytes(first) & !number_mask;
            prefix | idx as u128
        })
        .collect();
    keys.sort_unstable();
    let id_of = |key: u128| {
        let (start, end) = ids.span((key & number_mask) as usize);
        &text[start..end]
    };
    // Ids with equal first bytes are neighbours now; such a run is put in order by text.
    let mut run_start = 0;
    while run_start < keys.len() {
        let prefix = keys[run_start] & !number_mask;
        let run_len = keys[run_start..]
            .iter()
            .take_while(|key| *key & !number_mask == prefix)
            .count();
        if run_len > 1 {
            keys[run_start..run_start + run_len]
                .sort_unstable_by(|left, right| id_of(*left).cmp(id_of(*right)));
        }
        run_start += run_len;
    }
    let mut distinct: Vec<usize> = Vec::with_capacity(keys.len());
    let mut previous: Option<u128> = None;
    for key in keys {
        // Equal ids have equal first bytes, so only then is the text compared.
        let is_repeat = previous.is_some_and(|previous| {
            previous & !number_mask == key & !number_mask && id_of(previous) == id_of(key)
        });
        if !is_repeat {
            distinct.push((key & number_mask) as usize);
        }
        previous = Some(key);
    }
    distinct
}

/// Returns the entries of the ids numbered `order` (distinct, sorted), each with the prefix
/// length that tells it from its neighbours.
fn with_unique_lens(ids: &IdBuffer, order: &[usize]) -> Vec<Entry> {
    let text = ids.text.as_str();
    let id_at = |position: usize| {
        let (start, end) = ids.span(order[position]);
        &text[start..end]
    };
    // `common[i]` is how many characters ids `i` and `i + 1` share at the start.
    let common: Vec<usize> = (1..order.len())
        .map(|position| common_chars(id_at(position - 1), id_at(position)))
        .collect();
    (0..order.len())
        .map(|position| {
            let (start, end) = ids.span(order[position]);
            let before = position.checked_sub(1).map_or(0, |idx| common[idx]);
            let after = common.get(position).copied().unwrap_or(0);
            Entry {
                start,
                end,
                unique_len: clamp(before.max(after) + 1, &text[start..end]),
            }
        })
        .collect()
}

/// Returns how many characters of `id` tell it from its sorted neighbours `before` and
/// `after` (at least [`MIN_ID_WIDTH`], at most all of it).
fn prefix_len(id: &str, before: Option<&str>, after: Option<&str>) -> usize {
    let n_common = |other: Option<&str>| other.map_or(0, |other| common_chars(id, other));
    clamp(n_common(before).max(n_common(after)) + 1, id)
}

/// Returns `needed` characters, but at least [`MIN_ID_WIDTH`] and at most all of `id`.
fn clamp(needed: usize, id: &str) -> usize {
    let n_chars = if id.is_ascii() {
        id.len()
    } else {
        id.chars().count()
    };
    needed.max(MIN_ID_WIDTH).min(n_chars)
}

/// Returns how many characters `left` and `right` share at the start.
pub(crate) fn common_chars(left: &str, right: &str) -> usize {
    let n_bytes = left
        .bytes()
        .zip(right.bytes())
        .take_while(|(left, right)| left == right)
        .count();
    // The shared bytes end inside a character when the two differ within it; that character
    // is not shared. Both are valid UTF-8, so their character boundaries agree up to there.
    let mut boundary = n_bytes;
    while !left.is_char_boundary(boundary) {
        boundary -= 1;
    }
    let shared = &left[..boundary];
    if shared.is_ascii() {
        shared.len()
    } else {
        shared.chars().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_prefix_of_each_id() {
        let set = IdPrefixes::new(
            [
                "0199aaaa-1111",
                "0199bbbb-2222",
                "019a0000-0000-7000-8000-000000000201",
                "019a0000-0000-7000-8000-000000000202",
                "019a0000-0000-7000-8000-000000000202",
                "short",
            ]
            .into_iter(),
        );
        let check = |id: &str, expected: usize| assert_eq!(set.unique_len(id), expected, "{id}");
        check("0199aaaa-1111", 8);
        check("0199bbbb-2222", 8);
        check("019a0000-0000-7000-8000-000000000201", 36);
        check("019a0000-0000-7000-8000-000000000202", 36);
        check("short", 5);
        // An id outside the set gets the prefix that tells it from the set's ids.
        check("019a0000-0000-7fff", 16);
        assert_eq!(IdPrefixes::default().unique_len("abcdefghij"), 8);
    }

    #[test]
    fn sets_of_the_same_ids_are_equal() {
        let one = IdPrefixes::new(["b", "a", "b"].into_iter());
        let other = IdPrefixes::new(["a", "b"].into_iter());
        assert_eq!(one, other);
        assert_ne!(one, IdPrefixes::new(["a"].into_iter()));
    }

    /// Returns the shortest prefix of `id` (at least [`MIN_ID_WIDTH`] characters, at most
    /// all of it) that no other id of `set` starts with, by trying every length.
    fn naive_unique_len(set: &[String], id: &str) -> usize {
        let chars: Vec<char> = id.chars().collect();
        (1..=chars.len())
            .find(|&len| {
                let prefix: String = chars[..len].iter().collect();
                !set.iter()
                    .any(|other| other != id && other.starts_with(&prefix))
            })
            .unwrap_or(chars.len())
            .max(MIN_ID_WIDTH)
            .min(chars.len())
    }

    /// Returns a strategy for sets of ids that share long prefixes, repeat, hold non-ASCII
    /// characters (some sharing their first UTF-8 bytes) and start other ids of the set.
    fn id_sets() -> impl proptest::strategy::Strategy<Value = Vec<String>> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just("0".to_owned()),
            Just("01".to_owned()),
            Just("019a0000-0000-7000-".to_owned()),
            Just("a".to_owned()),
            Just("é".to_owned()),
            Just("è".to_owned()),
            Just("€".to_owned()),
            Just("😀".to_owned()),
            Just("\0".to_owned()),
            "[0-9a-f]{1,4}",
        ];
        proptest::collection::vec(
            proptest::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat()),
            0..24,
        )
        .prop_flat_map(|ids| {
            // Some ids are repeated: duplicates count once.
            let n_ids = ids.len();
            (Just(ids), proptest::collection::vec(0..n_ids.max(1), 0..4)).prop_map(
                |(mut ids, repeats)| {
                    for idx in repeats {
                        if let Some(id) = ids.get(idx).cloned() {
                            ids.push(id);
                        }
                    }
                    ids
                },
            )
        })
    }

    proptest::proptest! {
        #[test]
        fn unique_len_is_the_shortest_prefix_no_other_id_starts_with(
            ids in id_sets(),
            absent in id_sets(),
        ) {
            let set = IdPrefixes::new(ids.iter().map(String::as_str));
            // Every id of the set, every prefix of one (some in the set, most not) and ids
            // drawn apart from it (mostly absent).
            let prefixes = ids.iter().flat_map(|id| {
                id.char_indices().map(|(end, _)| id[..end].to_owned()).collect::<Vec<_>>()
            });
            for id in ids.iter().cloned().chain(prefixes).chain(absent) {
                proptest::prop_assert_eq!(
                    set.unique_len(&id),
                    naive_unique_len(&ids, &id),
                    "{:?} in {:?}",
                    id,
                    ids
                );
            }
        }
    }
}
