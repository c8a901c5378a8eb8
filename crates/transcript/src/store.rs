//! The compact in-memory form of entry envelopes.
//!
//! A session can hold a million tiny entries, so each envelope is one variable-length record
//! in a single byte buffer instead of a struct with a dozen owned strings: numbers are
//! LEB128 varints, the ids and timestamp are stored inline, and the low-variety strings (entry
//! types, roles, providers, models, tool names, ...) are interned once and referred to by
//! number. A record costs about 20 bytes plus its ids for a small entry, against several
//! hundred bytes for owned strings. Reading an [`Entry`] back decodes the record into a
//! copyable view whose strings borrow from the buffer; nothing is allocated.

use std::collections::HashMap;

use crate::entry::{ContentShape, Entry, EntryKind, MessageMeta, Role};

/// The longest string that is interned; longer ones are stored inline.
const MAX_INTERNED_BYTES: usize = 64;
/// The most distinct strings interned: a file with more distinct model or tool names than this
/// (only a hostile one) stores the rest inline, so the table stays small.
const MAX_SYMBOLS: usize = 4096;

/// Interned strings, numbered in order of first use.
#[derive(Debug, Default)]
struct Symbols {
    names: Vec<Box<str>>,
    numbers: HashMap<Box<str>, u32>,
}

impl Symbols {
    fn intern(&mut self, text: &str) -> Option<u32> {
        if let Some(&number) = self.numbers.get(text) {
            return Some(number);
        }
        if text.len() > MAX_INTERNED_BYTES || self.names.len() >= MAX_SYMBOLS {
            return None;
        }
        let number = u32::try_from(self.names.len()).ok()?;
        self.names.push(text.into());
        self.numbers.insert(text.into(), number);
        Some(number)
    }
}

/// Every entry envelope of one file, in file order.
#[derive(Debug, Default)]
pub(crate) struct EntryStore {
    /// The records, back to back.
    bytes: Vec<u8>,
    /// Where each record starts in `bytes`.
    starts: Vec<u64>,
    symbols: Symbols,
    /// How many entries have an id.
    n_ids: usize,
}

/// The kind tags of a record; the order is part of the encoding.
const KIND_MESSAGE: u8 = 0;
const KIND_MODEL_CHANGE: u8 = 1;
const KIND_THINKING_LEVEL_CHANGE: u8 = 2;
const KIND_USAGE: u8 = 3;
const KIND_COMPACTION: u8 = 4;
const KIND_CONTEXT_EDIT: u8 = 5;
const KIND_BRANCH_SUMMARY: u8 = 6;
const KIND_CUSTOM: u8 = 7;
const KIND_CUSTOM_MESSAGE: u8 = 8;
const KIND_LABEL: u8 = 9;
const KIND_SESSION_INFO: u8 = 10;
const KIND_UNKNOWN: u8 = 11;

/// Role tags; `ROLE_UNKNOWN` is followed by the role's text.
const ROLES: [Role<'static>; 8] = [
    Role::System,
    Role::User,
    Role::Assistant,
    Role::ToolResult,
    Role::BashExecution,
    Role::Custom,
    Role::BranchSummary,
    Role::CompactionSummary,
];
const ROLE_UNKNOWN: u8 = 8;

impl EntryStore {
    /// Returns the number of entries.
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Appends `entry`.
    pub(crate) fn push(&mut self, entry: &Entry<'_>) {
        self.n_ids += usize::from(entry.id.is_some());
        self.starts.push(self.bytes.len() as u64);
        let mut writer = Writer {
            bytes: &mut self.bytes,
            symbols: &mut self.symbols,
        };
        writer.entry(entry);
    }

    /// Returns entry `idx` (which must be below [`EntryStore::len`]).
    pub(crate) fn get(&self, idx: usize) -> Entry<'_> {
        self.reader(idx).entry()
    }

    /// Returns the line number of entry `idx`, decoding nothing else.
    pub(crate) fn line_no(&self, idx: usize) -> u64 {
        self.reader(idx).varint()
    }

    /// Returns the stored id of entry `idx`, decoding only what precedes it.
    pub(crate) fn id(&self, idx: usize) -> Option<&str> {
        self.ids(idx).0
    }

    /// Returns the stored id and parent id of entry `idx`, decoding only what precedes them.
    pub(crate) fn ids(&self, idx: usize) -> (Option<&str>, Option<&str>) {
        let mut reader = self.reader(idx);
        reader.skip_line_span();
        reader.symbol();
        let id = reader.optional_str();
        (id, reader.optional_str())
    }

    /// Returns how many entries have an id.
    pub(crate) fn n_ids(&self) -> usize {
        self.n_ids
    }

    /// Releases spare capacity once every entry is in.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.starts.shrink_to_fit();
    }

    /// Returns the bytes held, for the memory accounting in tests and benches.
    #[cfg(test)]
    pub(crate) fn n_bytes(&self) -> usize {
        self.bytes.len() + self.starts.len() * 8
    }

    fn reader(&self, idx: usize) -> Reader<'_> {
        // `starts` only holds offsets of records pushed into `bytes`.
        let start = usize::try_from(self.starts[idx]).unwrap_or(usize::MAX);
        Reader {
            bytes: self.bytes.get(start..).unwrap_or_default(),
            names: &self.symbols.names,
        }
    }
}

/// Appends one record.
struct Writer<'s> {
    bytes: &'s mut Vec<u8>,
    symbols: &'s mut Symbols,
}

impl Writer<'_> {
    fn varint(&mut self, mut value: u64) {
        loop {
            let byte = (value & 0x7F) as u8;
            value >>= 7;
            if value == 0 {
                self.bytes.push(byte);
                return;
            }
            self.bytes.push(byte | 0x80);
        }
    }

    fn byte(&mut self, value: u8) {
        self.bytes.push(value);
    }

    fn str(&mut self, text: &str) {
        self.varint(text.len() as u64);
        self.bytes.extend_from_slice(text.as_bytes());
    }

    /// `0` for none, else the length plus one and the bytes.
    fn optional_str(&mut self, text: Option<&str>) {
        match text {
            None => self.varint(0),
            Some(text) => {
                self.varint(text.len() as u64 + 1);
                self.bytes.extend_from_slice(text.as_bytes());
            }
        }
    }

    /// `0` for none, `1` and the text inline, or the symbol's number plus two.
    fn optional_symbol(&mut self, text: Option<&str>) {
        match text {
            None => self.varint(0),
            Some(text) => match self.symbols.intern(text) {
                Some(number) => self.varint(u64::from(number) + 2),
                None => {
                    self.varint(1);
                    self.str(text);
                }
            },
        }
    }

    fn entry(&mut self, entry: &Entry<'_>) {
        self.varint(entry.line_no);
        self.varint(entry.byte_offset);
        self.varint(entry.byte_len);
        self.varint(entry.byte_len.saturating_sub(entry.n_chars));
        self.optional_symbol(Some(entry.entry_type));
        self.optional_str(entry.id);
        self.optional_str(entry.parent_id);
        self.optional_str(entry.timestamp);
        match entry.kind {
            EntryKind::Message(meta) => {
                self.byte(KIND_MESSAGE);
                self.message(&meta);
            }
            EntryKind::ModelChange { provider, model_id } => {
                self.byte(KIND_MODEL_CHANGE);
                self.optional_symbol(provider);
                self.optional_symbol(model_id);
            }
            EntryKind::ThinkingLevelChange { thinking_level } => {
                self.byte(KIND_THINKING_LEVEL_CHANGE);
                self.optional_symbol(thinking_level);
            }
            EntryKind::Usage { kind } => {
                self.byte(KIND_USAGE);
                self.optional_symbol(kind);
            }
            EntryKind::Compaction {
                first_kept_entry_id,
                first_kept_entry_index,
                has_system_message,
            } => {
                self.byte(KIND_COMPACTION);
                self.optional_str(first_kept_entry_id);
                match first_kept_entry_index {
                    None => self.byte(0),
                    Some(index) => {
                        self.byte(1);
                        self.varint(index);
                    }
                }
                self.byte(u8::from(has_system_message));
            }
            EntryKind::ContextEdit { target_id, omits } => {
                self.byte(KIND_CONTEXT_EDIT);
                self.optional_str(target_id);
                self.byte(u8::from(omits));
            }
            EntryKind::BranchSummary {
                from_id,
                has_summary,
            } => {
                self.byte(KIND_BRANCH_SUMMARY);
                self.optional_str(from_id);
                self.byte(u8::from(has_summary));
            }
            EntryKind::Custom { custom_type } => {
                self.byte(KIND_CUSTOM);
                self.optional_symbol(custom_type);
            }
            EntryKind::CustomMessage {
                custom_type,
                display,
            } => {
                self.byte(KIND_CUSTOM_MESSAGE);
                self.optional_symbol(custom_type);
                self.byte(u8::from(display));
            }
            EntryKind::Label { target_id, label } => {
                self.byte(KIND_LABEL);
                self.optional_str(target_id);
                self.optional_str(label);
            }
            EntryKind::SessionInfo { name } => {
                self.byte(KIND_SESSION_INFO);
                self.optional_str(name);
            }
            EntryKind::Unknown => self.byte(KIND_UNKNOWN),
        }
    }

    fn message(&mut self, meta: &MessageMeta<'_>) {
        match ROLES.iter().position(|role| *role == meta.role) {
            Some(tag) => self.byte(tag as u8),
            None => {
                self.byte(ROLE_UNKNOWN);
                self.optional_symbol(Some(meta.role.as_str()));
            }
        }
        let flags = u8::from(meta.shape.is_string)
            | u8::from(meta.exclude_from_context) << 1
            | u8::from(meta.is_error) << 2;
        self.byte(flags);
        self.varint(u64::from(meta.shape.n_text));
        self.varint(u64::from(meta.shape.n_thinking));
        self.varint(u64::from(meta.shape.n_tool_calls));
        self.varint(u64::from(meta.shape.n_images));
        self.optional_symbol(meta.provider);
        self.optional_symbol(meta.model);
        self.optional_symbol(meta.stop_reason);
        self.optional_symbol(meta.tool_name);
        self.optional_symbol(meta.custom_type);
    }
}

/// Reads one record. Records are only ever written by [`Writer`], so a short or malformed
/// record cannot occur; should it, the reader yields zeros and empty strings rather than panic.
struct Reader<'a> {
    bytes: &'a [u8],
    names: &'a [Box<str>],
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&byte, rest)) => {
                self.bytes = rest;
                byte
            }
            None => 0,
        }
    }

    fn varint(&mut self) -> u64 {
        let mut value = 0u64;
        let mut shift = 0u32;
        loop {
            let byte = self.byte();
            if shift < 64 {
                value |= u64::from(byte & 0x7F) << shift;
            }
            if byte & 0x80 == 0 {
                return value;
            }
            shift += 7;
        }
    }

    fn bytes(&mut self, len: u64) -> &'a str {
        let len = usize::try_from(len)
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        let (text, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        // Only `&str` values are written, so the bytes are UTF-8.
        std::str::from_utf8(text).unwrap_or_default()
    }

    fn optional_str(&mut self) -> Option<&'a str> {
        match self.varint() {
            0 => None,
            len => Some(self.bytes(len - 1)),
        }
    }

    fn symbol(&mut self) -> Option<&'a str> {
        match self.varint() {
            0 => None,
            1 => {
                let len = self.varint();
                Some(self.bytes(len))
            }
            number => {
                let idx = usize::try_from(number - 2).unwrap_or(usize::MAX);
                Some(self.names.get(idx).map_or("", |name| &**name))
            }
        }
    }

    fn flag(&mut self) -> bool {
        self.byte() != 0
    }

    fn skip_line_span(&mut self) {
        for _ in 0..4 {
            self.varint();
        }
    }

    fn entry(&mut self) -> Entry<'a> {
        let line_no = self.varint();
        let byte_offset = self.varint();
        let byte_len = self.varint();
        let n_chars = byte_len.saturating_sub(self.varint());
        let entry_type = self.symbol().unwrap_or_default();
        let id = self.optional_str();
        let parent_id = self.optional_str();
        let timestamp = self.optional_str();
        let kind = match self.byte() {
            KIND_MESSAGE => EntryKind::Message(self.message()),
            KIND_MODEL_CHANGE => EntryKind::ModelChange {
                provider: self.symbol(),
                model_id: self.symbol(),
            },
            KIND_THINKING_LEVEL_CHANGE => EntryKind::ThinkingLevelChange {
                thinking_level: self.symbol(),
            },
            KIND_USAGE => EntryKind::Usage {
                kind: self.symbol(),
            },
            KIND_COMPACTION => EntryKind::Compaction {
                first_kept_entry_id: self.optional_str(),
                first_kept_entry_index: if self.flag() {
                    Some(self.varint())
                } else {
                    None
                },
                has_system_message: self.flag(),
            },
            KIND_CONTEXT_EDIT => EntryKind::ContextEdit {
                target_id: self.optional_str(),
                omits: self.flag(),
            },
            KIND_BRANCH_SUMMARY => EntryKind::BranchSummary {
                from_id: self.optional_str(),
                has_summary: self.flag(),
            },
            KIND_CUSTOM => EntryKind::Custom {
                custom_type: self.symbol(),
            },
            KIND_CUSTOM_MESSAGE => EntryKind::CustomMessage {
                custom_type: self.symbol(),
                display: self.flag(),
            },
            KIND_LABEL => EntryKind::Label {
                target_id: self.optional_str(),
                label: self.optional_str(),
            },
            KIND_SESSION_INFO => EntryKind::SessionInfo {
                name: self.optional_str(),
            },
            _ => EntryKind::Unknown,
        };
        Entry {
            line_no,
            byte_offset,
            byte_len,
            n_chars,
            id,
            parent_id,
            timestamp,
            entry_type,
            kind,
        }
    }

    fn message(&mut self) -> MessageMeta<'a> {
        let tag = self.byte();
        let role = match ROLES.get(usize::from(tag)) {
            Some(role) => *role,
            None => Role::Unknown(self.symbol().unwrap_or_default()),
        };
        let flags = self.byte();
        let mut count = || u32::try_from(self.varint()).unwrap_or(u32::MAX);
        let shape = ContentShape {
            is_string: flags & 1 != 0,
            n_text: count(),
            n_thinking: count(),
            n_tool_calls: count(),
            n_images: count(),
        };
        MessageMeta {
            role,
            shape,
            provider: self.symbol(),
            model: self.symbol(),
            stop_reason: self.symbol(),
            tool_name: self.symbol(),
            custom_type: self.symbol(),
            exclude_from_context: flags & 2 != 0,
            is_error: flags & 4 != 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9]{0,10}",
            "\\PC{0,80}",
            (0usize..300).prop_map(|n| "x".repeat(n))
        ]
    }

    fn any_role() -> impl Strategy<Value = usize> {
        0usize..=ROLES.len()
    }

    proptest! {
        /// Every envelope reads back exactly as written, whatever its strings and numbers.
        #[test]
        fn records_round_trip(
            numbers in proptest::array::uniform4(any::<u64>()),
            texts in proptest::collection::vec(proptest::option::of(any_text()), 8),
            counts in proptest::array::uniform4(any::<u32>()),
            flags in proptest::array::uniform3(any::<bool>()),
            kind in 0u8..=11,
            role in any_role(),
            index in proptest::option::of(any::<u64>()),
        ) {
            let text = |idx: usize| texts[idx].as_deref();
            let meta = MessageMeta {
                role: ROLES.get(role).copied().unwrap_or(Role::Unknown(text(0).unwrap_or("odd"))),
                shape: ContentShape {
                    is_string: flags[0],
                    n_text: counts[0],
                    n_thinking: counts[1],
                    n_tool_calls: counts[2],
                    n_images: counts[3],
                },
                provider: text(1),
                model: text(2),
                stop_reason: text(3),
                tool_name: text(4),
                custom_type: text(5),
                exclude_from_context: flags[1],
                is_error: flags[2],
            };
            let kind = match kind {
                0 => EntryKind::Message(meta),
                1 => EntryKind::ModelChange { provider: text(1), model_id: text(2) },
                2 => EntryKind::ThinkingLevelChange { thinking_level: text(3) },
                3 => EntryKind::Usage { kind: text(4) },
                4 => EntryKind::Compaction {
                    first_kept_entry_id: text(5),
                    first_kept_entry_index: index,
                    has_system_message: flags[0],
                },
                5 => EntryKind::ContextEdit { target_id: text(6), omits: flags[1] },
                6 => EntryKind::BranchSummary { from_id: text(7), has_summary: flags[2] },
                7 => EntryKind::Custom { custom_type: text(0) },
                8 => EntryKind::CustomMessage { custom_type: text(1), display: flags[0] },
                9 => EntryKind::Label { target_id: text(2), label: text(3) },
                10 => EntryKind::SessionInfo { name: text(4) },
                _ => EntryKind::Unknown,
            };
            let byte_len = numbers[2];
            let entry = Entry {
                line_no: numbers[0],
                byte_offset: numbers[1],
                byte_len,
                n_chars: numbers[3].min(byte_len),
                id: text(5),
                parent_id: text(6),
                timestamp: text(7),
                entry_type: text(0).unwrap_or("message"),
                kind,
            };
            let mut store = EntryStore::default();
            store.push(&entry);
            store.push(&entry);
            prop_assert_eq!(store.get(0), entry);
            prop_assert_eq!(store.get(1), entry);
            prop_assert_eq!(store.line_no(1), entry.line_no);
            prop_assert_eq!(store.id(1), entry.id);
        }
    }

    /// A small entry costs a few dozen bytes, not a few hundred.
    #[test]
    fn small_entries_are_small() {
        let mut store = EntryStore::default();
        for n in 0..1000u64 {
            let id = format!("{n:08x}");
            let parent = format!("{:08x}", n.saturating_sub(1));
            store.push(&Entry {
                line_no: n + 2,
                byte_offset: n * 120,
                byte_len: 119,
                n_chars: 119,
                id: Some(&id),
                parent_id: Some(&parent),
                timestamp: Some("2026-01-01T00:00:01.000Z"),
                entry_type: "message",
                kind: EntryKind::Message(MessageMeta {
                    role: Role::Assistant,
                    shape: ContentShape {
                        n_text: 1,
                        ..ContentShape::default()
                    },
                    provider: Some("anthropic"),
                    model: Some("claude-x"),
                    stop_reason: Some("stop"),
                    tool_name: None,
                    custom_type: None,
                    exclude_from_context: false,
                    is_error: false,
                }),
            });
        }
        let per_entry = store.n_bytes() / 1000;
        assert!(per_entry <= 80, "{per_entry} bytes per entry");
    }
}
