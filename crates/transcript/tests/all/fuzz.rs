//! Fuzzing that runs in every `cargo test` (a proptest stand-in for `cargo fuzz`).
//!
//! The transcript parser gets damaged copies of every committed fixture (lines cut, joined,
//! duplicated, swapped, bytes flipped, junk inserted) and lines assembled from JSON-ish pieces;
//! the cursor decoder gets arbitrary text. Nothing may panic, and what comes out must hold
//! together: entries inside the file and in line order, a forest whose every entry is reached
//! once from the roots, bounded warnings whose counts add up, views that build, and raw rows
//! that are strict JSON. `PROPTEST_CASES` runs more cases.

use std::path::Path;
use std::sync::OnceLock;

use pi_retrospect_transcript::{
    Cursor, EntriesFilter, InspectPageRequest, InspectView, KEPT_PER_KIND, Transcript, WarningKind,
    entries, inspect,
};
use proptest::prelude::*;

/// Returns the bytes of every `.jsonl` file under `fixtures/`: the seed corpus.
fn corpus() -> &'static [Vec<u8>] {
    static CORPUS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut files = Vec::new();
        let mut pending = vec![root];
        while let Some(dir) = pending.pop() {
            let Ok(listing) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut paths: Vec<_> = listing
                .filter_map(|entry| entry.ok())
                .map(|e| e.path())
                .collect();
            paths.sort();
            for path in paths {
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|ext| ext == "jsonl")
                    && let Ok(bytes) = std::fs::read(&path)
                {
                    files.push(bytes);
                }
            }
        }
        assert!(files.len() > 20, "the fixtures are the seed corpus");
        files
    })
}

/// One change to a file's bytes; positions are fractions of the length, so a change applies
/// to a file of any size.
#[derive(Debug, Clone)]
enum Mutation {
    /// Cut the bytes from one point to another.
    Cut(f64, f64),
    /// Insert bytes at a point.
    Insert(f64, Vec<u8>),
    /// Repeat the line around a point.
    DuplicateLine(f64),
    /// Swap the lines around two points.
    SwapLines(f64, f64),
    /// XOR one byte.
    Flip(f64, u8),
    /// Stop the file at a point (a write cut short).
    Truncate(f64),
}

fn at(bytes: &[u8], fraction: f64) -> usize {
    ((bytes.len() as f64) * fraction) as usize
}

fn line_around(bytes: &[u8], position: usize) -> (usize, usize) {
    let start = bytes[..position]
        .iter()
        .rposition(|&byte| byte == b'\n')
        .map_or(0, |at| at + 1);
    let end = bytes[position..]
        .iter()
        .position(|&byte| byte == b'\n')
        .map_or(bytes.len(), |at| position + at + 1);
    (start, end)
}

fn apply(mut bytes: Vec<u8>, mutation: &Mutation) -> Vec<u8> {
    match mutation {
        Mutation::Cut(from, to) => {
            let (from, to) = (at(&bytes, *from), at(&bytes, *to));
            bytes.drain(from.min(to)..from.max(to));
        }
        Mutation::Insert(point, inserted) => {
            let point = at(&bytes, *point);
            bytes.splice(point..point, inserted.iter().copied());
        }
        Mutation::DuplicateLine(point) => {
            let (start, end) = line_around(&bytes, at(&bytes, *point));
            let line = bytes[start..end].to_vec();
            bytes.splice(end..end, line);
        }
        Mutation::SwapLines(first, second) => {
            let first = line_around(&bytes, at(&bytes, *first));
            let second = line_around(&bytes, at(&bytes, *second));
            if first.1 <= second.0 {
                let mut out = bytes[..first.0].to_vec();
                out.extend_from_slice(&bytes[second.0..second.1]);
                out.extend_from_slice(&bytes[first.1..second.0]);
                out.extend_from_slice(&bytes[first.0..first.1]);
                out.extend_from_slice(&bytes[second.1..]);
                bytes = out;
            }
        }
        Mutation::Flip(point, mask) => {
            let point = at(&bytes, *point);
            if let Some(byte) = bytes.get_mut(point) {
                *byte ^= mask;
            }
        }
        Mutation::Truncate(point) => {
            let point = at(&bytes, *point);
            bytes.truncate(point);
        }
    }
    bytes
}

/// Pieces that make JSON, broken JSON and the damage the issue lists.
const PIECES: [&str; 28] = [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\n",
    "\r\n",
    "\t",
    "\u{0}",
    "\u{1b}[2J",
    r#""type":"message""#,
    r#""type":"session""#,
    r#""type":"compaction""#,
    r#""type":"label""#,
    r#""id":"a""#,
    r#""id":"b""#,
    r#""parentId":"a""#,
    r#""parentId":"b""#,
    r#""message":{"role":"assistant","content":[{"type":"toolCall","name":"x"}]}"#,
    r#""message":{"role":"toolResult","content":"out"}"#,
    r#""firstKeptEntryId":"a""#,
    r#""targetId":"b""#,
    r#""\ud800""#,
    "\\x",
    "\u{feff}",
    "\u{2028}",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let fraction = 0.0..=1.0f64;
    let junk = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40),
        proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 0..12)
            .prop_map(|pieces| pieces.concat().into_bytes()),
    ];
    prop_oneof![
        (fraction.clone(), fraction.clone()).prop_map(|(a, b)| Mutation::Cut(a, b)),
        (fraction.clone(), junk).prop_map(|(a, bytes)| Mutation::Insert(a, bytes)),
        fraction.clone().prop_map(Mutation::DuplicateLine),
        (fraction.clone(), fraction.clone()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (fraction.clone(), 1..=255u8).prop_map(|(a, mask)| Mutation::Flip(a, mask)),
        fraction.prop_map(Mutation::Truncate),
    ]
}

/// Checks everything a parse must hold whatever the input.
fn check_transcript(bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let n_bytes = bytes.len() as u64;
    let session = Transcript::from_bytes(bytes);
    let n_entries = session.entries().len();
    let mut last_line = 0;
    for entry in session.entries() {
        prop_assert!(entry.line_no > last_line, "lines in order");
        last_line = entry.line_no;
        prop_assert!(entry.byte_offset + entry.byte_len <= n_bytes);
        prop_assert!(entry.n_chars <= entry.byte_len);
    }
    // A forest: every entry reached exactly once from the roots, parents and children agree.
    let mut seen = vec![false; n_entries];
    let mut stack: Vec<usize> = session.roots().to_vec();
    let mut n_seen = 0;
    while let Some(idx) = stack.pop() {
        prop_assert!(!seen[idx], "entry {} reached twice", idx);
        seen[idx] = true;
        n_seen += 1;
        for &child in session.children(idx) {
            prop_assert_eq!(session.parent(child), Some(idx));
            stack.push(child);
        }
    }
    prop_assert_eq!(n_seen, n_entries);
    prop_assert!(session.n_build_steps() <= 8 * n_entries as u64 + 8);
    // Bounded warnings whose counts add up.
    let warnings = session.warnings();
    let represented: u64 = warnings.iter().map(|warning| warning.n_represented()).sum();
    prop_assert_eq!(represented, session.warning_counts().total());
    for warning in warnings {
        if warning.kind != WarningKind::Omitted {
            let n_kept = warnings
                .iter()
                .filter(|other| other.kind == warning.kind)
                .count();
            prop_assert!(n_kept <= KEPT_PER_KIND);
        }
    }
    // The views build, and raw rows are strict JSON.
    let _ = session.context();
    let _ = pi_retrospect_transcript::facts(&session);
    let filter = EntriesFilter {
        include_raw: true,
        ..EntriesFilter::default()
    };
    let rows =
        entries(&session, &filter).map_err(|error| TestCaseError::fail(error.to_string()))?;
    prop_assert_eq!(rows.len(), n_entries);
    for row in &rows {
        let raw = row.raw.as_ref().map(|raw| raw.get()).unwrap_or("null");
        prop_assert!(
            serde_json::from_str::<serde_json::Value>(raw).is_ok(),
            "raw {}",
            raw
        );
        prop_assert!(!raw.contains('\n') && !raw.contains('\r'));
        let line =
            serde_json::to_string(row).map_err(|error| TestCaseError::fail(error.to_string()))?;
        prop_assert!(serde_json::from_str::<serde_json::Value>(&line).is_ok());
    }
    for view in [
        InspectView::Overview,
        InspectView::Ancestors { entry: None },
        InspectView::Search {
            query: "a".to_owned(),
        },
    ] {
        let page = inspect(&session, &InspectPageRequest::new(view));
        prop_assert!(page.is_ok(), "{:?}", page.err());
    }
    Ok(())
}

proptest! {
    /// Damaged copies of the committed fixtures.
    #[test]
    fn damaged_fixtures_parse_into_a_sound_transcript(
        pick in any::<prop::sample::Index>(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let corpus = corpus();
        let mut bytes = corpus[pick.index(corpus.len())].clone();
        for mutation in &mutations {
            bytes = apply(bytes, mutation);
        }
        check_transcript(bytes)?;
    }

    /// Lines assembled from JSON-ish pieces.
    #[test]
    fn json_ish_lines_parse_into_a_sound_transcript(
        lines in proptest::collection::vec(
            proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 0..10),
            0..30,
        ),
    ) {
        let mut text = format!("{}\n", pi_retrospect_testkit::Header::new("s"));
        for pieces in lines {
            let body = pieces.concat();
            text.push_str(&format!("{{\"type\":\"message\",{body}}}\n"));
        }
        check_transcript(text.into_bytes())?;
    }

    /// Arbitrary bytes.
    #[test]
    fn arbitrary_bytes_parse_into_a_sound_transcript(
        bytes in proptest::collection::vec(any::<u8>(), 0..2000),
    ) {
        check_transcript(bytes)?;
    }

    /// The cursor decoder never panics, and what it accepts encodes back to itself.
    #[test]
    fn cursors_decode_or_are_refused(text in "(c1\\.)?[0-9a-fx.]{0,40}|\\PC{0,40}") {
        if let Ok(cursor) = Cursor::decode(&text) {
            let again = Cursor::decode(&cursor.encode()).map_err(|error| TestCaseError::fail(error.to_string()))?;
            prop_assert_eq!(again, cursor);
        }
    }

    /// Every cursor the tool writes decodes to itself.
    #[test]
    fn cursors_round_trip(bytes in any::<u64>(), offset in any::<u32>(), fingerprint in any::<u64>()) {
        let text = format!("c1.{bytes:x}.{offset:x}.{fingerprint:016x}");
        let cursor = Cursor::decode(&text).map_err(|error| TestCaseError::fail(error.to_string()))?;
        prop_assert_eq!(cursor.snapshot_bytes, bytes);
        prop_assert_eq!(cursor.offset, offset as usize);
        prop_assert_eq!(cursor.encode(), text);
    }
}
