//! The picker's index: every session and subagent run as one flat list of entries with their
//! tree links, and the text the filter searches, filled in as the listing and the body facts
//! (names, first messages) arrive.

use std::collections::HashMap;
use std::ops::Range;

use pi_retrospect_app::picker::redact;
use pi_retrospect_core::{Listing, Session, SessionSummary};
use pi_retrospect_render::text::{field, one_line};

/// Characters of a first user message kept for the filter and the list.
const MAX_TITLE_CHARS: usize = 200;

/// Characters of a name or first message read for its title, credentials redacted: more than
/// are shown, so that a key cut by the title's end is still long enough to be recognised.
const TITLE_WINDOW_CHARS: usize = 4 * MAX_TITLE_CHARS;

/// One session or run of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The session file: the handle the picker hands back.
    pub path: String,
    /// The header's id, escaped for the terminal.
    pub id: String,
    /// The header's cwd as stored (compared with the current directory).
    pub cwd: String,
    /// The header's timestamp as stored.
    pub timestamp: String,
    /// 0 for a top-level session, 1 for a run it launched, and so on.
    pub depth: usize,
    /// The entry this run nests under.
    pub parent: Option<usize>,
    /// The runs this entry launched, oldest first.
    pub children: Vec<usize>,
    /// Whether the body facts have been read.
    pub has_summary: bool,
    /// The filter's text: the name, the first user message, the cwd and the id, each made one
    /// safe line, separated by spaces.
    pub haystack: String,
    /// Where each field lies in `haystack`, in characters.
    pub fields: Fields,
}

/// Character ranges of the fields inside an entry's haystack.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Fields {
    /// The session's name (Pi's `/name`).
    pub name: Range<usize>,
    /// The first user message.
    pub first_message: Range<usize>,
    /// The working directory.
    pub cwd: Range<usize>,
    /// The id.
    pub id: Range<usize>,
}

impl Entry {
    fn new(session: &Session, depth: usize, parent: Option<usize>) -> Entry {
        let mut entry = Entry {
            path: session.path.clone(),
            id: field(&session.id).into_owned(),
            cwd: session.cwd.clone(),
            timestamp: session.timestamp.clone(),
            depth,
            parent,
            children: Vec::new(),
            has_summary: false,
            haystack: String::new(),
            fields: Fields::default(),
        };
        entry.set_texts(None, None);
        entry
    }

    /// Rebuilds the haystack from the name and first message (raw, as read).
    fn set_texts(&mut self, name: Option<&str>, first_message: Option<&str>) {
        let name = name.map(title);
        let first = first_message.map(title);
        let cwd = field(&self.cwd).into_owned();
        let mut haystack = String::new();
        let mut n_chars = 0;
        let mut n_fields = 0;
        let mut push = |text: &str, haystack: &mut String| {
            if n_fields > 0 {
                haystack.push(' ');
                n_chars += 1;
            }
            n_fields += 1;
            let start = n_chars;
            haystack.push_str(text);
            n_chars += text.chars().count();
            start..n_chars
        };
        let name_range = push(name.as_deref().unwrap_or(""), &mut haystack);
        let first_range = push(first.as_deref().unwrap_or(""), &mut haystack);
        let cwd_range = push(&cwd, &mut haystack);
        let id_range = push(&self.id.clone(), &mut haystack);
        self.haystack = haystack;
        self.fields = Fields {
            name: name_range,
            first_message: first_range,
            cwd: cwd_range,
            id: id_range,
        };
    }

    /// Returns the text the filter `query` is matched against: the whole haystack when the
    /// query names an id (a word of four or more hex digits and dashes), else the haystack without
    /// the id, whose random hex letters would match nearly any short word.
    pub fn filter_text(&self, query: &str) -> &str {
        if looks_like_id(query) {
            return &self.haystack;
        }
        self.haystack[..char_to_byte(&self.haystack, self.fields.id.start)].trim_end()
    }

    /// Returns the text of a field of the haystack.
    pub fn text(&self, range: &Range<usize>) -> &str {
        let start = char_to_byte(&self.haystack, range.start);
        let end = char_to_byte(&self.haystack, range.end);
        &self.haystack[start..end]
    }

    /// Returns the name, when one was read.
    pub fn name(&self) -> Option<&str> {
        Some(self.text(&self.fields.name)).filter(|name| !name.is_empty())
    }

    /// Returns the first user message, when one was read.
    pub fn first_message(&self) -> Option<&str> {
        Some(self.text(&self.fields.first_message)).filter(|first| !first.is_empty())
    }

    /// Returns the cwd, escaped for the terminal.
    pub fn cwd_text(&self) -> &str {
        self.text(&self.fields.cwd)
    }
}

/// Returns `text` (a name or first message, raw) as the list and the preview's title show it
/// and the filter searches it: one safe line with its credentials redacted as the preview's
/// messages are, cut to [`MAX_TITLE_CHARS`] characters.
fn title(text: &str) -> String {
    let (window, is_cut) = match text.char_indices().nth(TITLE_WINDOW_CHARS) {
        Some((cut, _)) => (&text[..cut], true),
        None => (text, false),
    };
    // Made safe first, so that no control sequence inside a key hides it from the rules.
    let redacted = redact(&one_line(window, TITLE_WINDOW_CHARS)).text;
    match redacted.char_indices().nth(MAX_TITLE_CHARS) {
        Some((cut, _)) => format!("{}…", &redacted[..cut]),
        None if is_cut => format!("{redacted}…"),
        None => redacted,
    }
}

/// Returns the byte offset of character `n_chars` of `text` (its length past the end).
/// Returns whether a filter query looks like it names a session id: one of its words, without
/// fzf's operators (`'exact`, `^prefix`, `suffix$`), is at least four hex digits and dashes
/// with a decimal digit or a dash among them, or at least eight hex letters. Words made of hex
/// letters (`face`, `added`, `decade`) are words: the start of a random id has a decimal digit
/// in it nearly always.
pub(crate) fn looks_like_id(query: &str) -> bool {
    query.split_whitespace().any(|word| {
        let word = word.trim_start_matches(['\'', '^']).trim_end_matches('$');
        let n_chars = word.chars().count();
        let is_hex = word
            .chars()
            .all(|character| character.is_ascii_hexdigit() || character == '-');
        let has_digit_or_dash = word
            .chars()
            .any(|character| character.is_ascii_digit() || character == '-');
        is_hex && ((n_chars >= 4 && has_digit_or_dash) || n_chars >= 8)
    })
}

fn char_to_byte(text: &str, n_chars: usize) -> usize {
    text.char_indices()
        .nth(n_chars)
        .map_or(text.len(), |(offset, _)| offset)
}

/// Every session and run the picker knows, newest session first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Index {
    /// All entries; a run comes after the entry it nests under.
    pub entries: Vec<Entry>,
    /// The top-level sessions, newest first.
    pub tops: Vec<usize>,
    /// Entries by path.
    by_path: HashMap<String, usize>,
}

impl Index {
    /// Returns the index of a listing (sessions in the contract's order, oldest first).
    pub fn from_listing(listing: &Listing) -> Index {
        let mut index = Index::default();
        for session in listing.sessions.iter().rev() {
            let top = index.add(session, 0, None);
            index.tops.push(top);
        }
        index
    }

    fn add(&mut self, session: &Session, depth: usize, parent: Option<usize>) -> usize {
        let idx = self.entries.len();
        self.entries.push(Entry::new(session, depth, parent));
        self.by_path.insert(session.path.clone(), idx);
        for run in &session.subagent_sessions {
            let child = self.add(run, depth + 1, Some(idx));
            self.entries[idx].children.push(child);
        }
        idx
    }

    /// Returns the entry of `path`.
    pub fn find(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    /// Records the body facts read for `path`; returns whether `path` is known.
    pub fn set_summary(&mut self, path: &str, summary: &SessionSummary) -> bool {
        let Some(idx) = self.find(path) else {
            return false;
        };
        let entry = &mut self.entries[idx];
        entry.has_summary = true;
        entry.set_texts(
            summary.name.as_deref(),
            summary.first_user_message.as_deref(),
        );
        true
    }

    /// Returns the paths whose body facts are still to be read, in the order to read them:
    /// the sessions of `cwd` with their runs first, then every other session, then the other
    /// sessions' runs.
    pub fn paths_to_read(&self, cwd: &str) -> Vec<String> {
        let mut first = Vec::new();
        let mut tops = Vec::new();
        let mut runs = Vec::new();
        for &top in &self.tops {
            if self.entries[top].cwd == cwd {
                self.subtree(top, &mut first);
            } else {
                tops.push(top);
                for &child in &self.entries[top].children {
                    self.subtree(child, &mut runs);
                }
            }
        }
        first
            .into_iter()
            .chain(tops)
            .chain(runs)
            .filter(|&idx| !self.entries[idx].has_summary)
            .map(|idx| self.entries[idx].path.clone())
            .collect()
    }

    /// Pushes `idx` and every entry below it, depth first.
    pub fn subtree(&self, idx: usize, out: &mut Vec<usize>) {
        out.push(idx);
        for &child in &self.entries[idx].children {
            self.subtree(child, out);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use pi_retrospect_core::{HeaderFields, SessionRow, Timestamp};

    /// Returns a session at `/s/<id>.jsonl` started at second `second`, in `cwd`, with runs.
    pub fn session(id: &str, second: i64, cwd: &str, runs: Vec<Session>) -> Session {
        let mut session = Session::from_row(SessionRow {
            path: format!("/s/{id}.jsonl"),
            header: HeaderFields {
                id: id.to_owned(),
                timestamp: format!("2026-11-30T10:{:02}:{:02}.000Z", second / 60, second % 60),
                instant: Timestamp {
                    seconds: 1_795_000_000 + second,
                    nanos: 0,
                },
                cwd: cwd.to_owned(),
                parent_session_path: None,
            },
        });
        session.subagent_sessions = runs;
        session
    }

    #[test]
    fn index_orders_newest_first_and_reads_here_first() {
        let listing = Listing {
            sessions: vec![
                session("a", 1, "/w", vec![session("a1", 2, "/w", vec![])]),
                session("b", 3, "/x", vec![session("b1", 4, "/x", vec![])]),
                session("c", 5, "/w", vec![]),
            ],
            warnings: Vec::new(),
        };
        let index = Index::from_listing(&listing);
        let tops: Vec<&str> = index
            .tops
            .iter()
            .map(|&idx| index.entries[idx].id.as_str())
            .collect();
        assert_eq!(tops, ["c", "b", "a"]);
        let order = index.paths_to_read("/w");
        assert_eq!(
            order,
            [
                "/s/c.jsonl",
                "/s/a.jsonl",
                "/s/a1.jsonl",
                "/s/b.jsonl",
                "/s/b1.jsonl"
            ]
        );
        let a1 = index.find("/s/a1.jsonl").expect("a1");
        assert_eq!(index.entries[a1].depth, 1);
        assert_eq!(index.entries[a1].parent, index.find("/s/a.jsonl"));
    }

    /// The fuzzy filter looks at the id only when the query looks like one, so a short word,
    /// even one of hex letters, does not match the random hex of every id.
    #[test]
    fn the_id_is_filtered_only_by_a_query_that_looks_like_one() {
        let mut index = Index::from_listing(&Listing {
            sessions: vec![session("0199abcd-ef01", 1, "/w", vec![])],
            warnings: Vec::new(),
        });
        index.set_summary(
            "/s/0199abcd-ef01.jsonl",
            &SessionSummary {
                name: Some("fix the parser".to_owned()),
                ..SessionSummary::default()
            },
        );
        let entry = &index.entries[0];
        for (query, expected) in [
            ("bad", "fix the parser  /w"),
            ("abc", "fix the parser  /w"),
            ("fix", "fix the parser  /w"),
            ("0199ab", "fix the parser  /w 0199abcd-ef01"),
            ("abcd-ef", "fix the parser  /w 0199abcd-ef01"),
            ("'abcd", "fix the parser  /w"),
            ("face", "fix the parser  /w"),
            ("decade", "fix the parser  /w"),
            ("'0199", "fix the parser  /w 0199abcd-ef01"),
            ("abcdef01", "fix the parser  /w 0199abcd-ef01"),
            ("deadbeef", "fix the parser  /w 0199abcd-ef01"),
            ("fix ^0199", "fix the parser  /w 0199abcd-ef01"),
        ] {
            assert_eq!(entry.filter_text(query), expected, "{query}");
        }
    }

    #[test]
    fn haystack_fields_are_safe_single_lines() {
        let cases = [
            (
                Some("fix\nthe  parser"),
                Some("hello\u{1b}[31m red"),
                "fix the parser hello red /w a",
                "fix the parser",
                "hello red",
            ),
            (None, Some("first"), " first /w a", "", "first"),
            (None, None, "  /w a", "", ""),
        ];
        for (name, first, haystack, name_text, first_text) in cases {
            let mut index = Index::from_listing(&Listing {
                sessions: vec![session("a", 1, "/w", vec![])],
                warnings: Vec::new(),
            });
            index.set_summary(
                "/s/a.jsonl",
                &SessionSummary {
                    name: name.map(str::to_owned),
                    first_user_message: first.map(str::to_owned),
                    last_activity: None,
                    last_activity_unknown: None,
                },
            );
            let entry = &index.entries[0];
            assert_eq!(entry.haystack, haystack);
            assert_eq!(entry.text(&entry.fields.name), name_text);
            assert_eq!(entry.text(&entry.fields.first_message), first_text);
            assert_eq!(entry.text(&entry.fields.cwd), "/w");
            assert_eq!(entry.text(&entry.fields.id), "a");
        }
    }
    /// A credential in a name or first message is redacted in the text
    /// the list and the preview's title show (and the filter searches), as in the preview's
    /// messages; also one cut by the title's end, or hidden by an escape sequence.
    #[test]
    fn titles_redact_credentials() {
        let key = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
        let marker = "[redacted: anthropic-api-key]";
        let long_key = format!("sk-ant-api03-{}", "B".repeat(400));
        let cases = [
            (format!("my key is {key}"), format!("my key is {marker}")),
            (
                format!("key\u{1b}[31m {key} end"),
                format!("key {marker} end"),
            ),
            (
                format!("{} {long_key} tail", "x".repeat(150)),
                format!("{} {marker} tail", "x".repeat(150)),
            ),
            (
                format!("{} {long_key}{}", "x".repeat(150), "C".repeat(900)),
                format!("{} {marker}…", "x".repeat(150)),
            ),
            (
                "y".repeat(TITLE_WINDOW_CHARS + 10),
                format!("{}…", "y".repeat(MAX_TITLE_CHARS)),
            ),
        ];
        for (raw, shown) in cases {
            let mut index = Index::from_listing(&Listing {
                sessions: vec![session("a", 1, "/w", vec![])],
                warnings: Vec::new(),
            });
            index.set_summary(
                "/s/a.jsonl",
                &SessionSummary {
                    name: Some(raw.clone()),
                    first_user_message: Some(raw.clone()),
                    last_activity: None,
                    last_activity_unknown: None,
                },
            );
            let entry = &index.entries[0];
            assert_eq!(entry.name(), Some(shown.as_str()), "{raw}");
            assert_eq!(entry.first_message(), Some(shown.as_str()), "{raw}");
            assert!(!entry.haystack.contains("sk-ant"), "{}", entry.haystack);
        }
    }
}
