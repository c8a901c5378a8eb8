//! The property that makes the fast path exact: on generated sessions (texts full of quotes,
//! backslashes, newlines, controls, Unicode and escapes, written canonically as Pi writes or
//! with escapes other writers use), searching only the lines the raw-byte prefilter picks
//! finds exactly the hits that decoding every line finds.

use pi_retrospect_search::{
    CaseMode, FieldKinds, Mode, Pattern, Query, Scope, SearchFile, Searcher, Syntax,
};
use proptest::prelude::*;

/// Characters that stress escaping: JSON's escaped characters, `/`, non-ASCII of every
/// width, case-folding oddities (Kelvin sign, sharp s), U+2028 and U+FFFD.
const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'A', 'B', ' ', ' ', '"', '\\', '\n', '\t', '\r', '\u{1b}', '\u{0}', '\u{8}',
    '/', 'é', 'É', '日', '😀', '\u{212A}', 'k', 'ß', '\u{2028}', '\u{FFFD}', '_', '.',
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ALPHABET), 0..24)
        .prop_map(|chars| chars.into_iter().collect())
}

/// How a writer escapes strings.
#[derive(Debug, Clone, Copy)]
enum Style {
    /// As Pi (`JSON.stringify`) and serde_json write.
    Canonical,
    /// Canonical, except that `/` is written `\/`.
    Slashes,
    /// Escapes that are valid JSON but not canonical: `\u0062` for `b`, `\u` escapes (and
    /// surrogate pairs) for everything beyond ASCII, `\/`, uppercase hex.
    Other,
}

fn encode(text: &str, style: Style) -> String {
    match style {
        Style::Canonical => serde_json::to_string(text).expect("a string serialises"),
        Style::Slashes => encode(text, Style::Canonical).replace('/', "\\/"),
        Style::Other => {
            let mut out = String::from("\"");
            for character in text.chars() {
                match character {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '/' => out.push_str("\\/"),
                    'b' => out.push_str("\\u0062"),
                    '\n' => out.push_str("\\u000A"),
                    character if u32::from(character) < 0x20 => {
                        out.push_str(&format!("\\u{:04X}", u32::from(character)));
                    }
                    character if !character.is_ascii() => {
                        let mut units = [0u16; 2];
                        for unit in character.encode_utf16(&mut units) {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    character => out.push(character),
                }
            }
            out.push('"');
            out
        }
    }
}

/// One generated entry: which shape, and its texts.
#[derive(Debug, Clone)]
struct Generated {
    shape: u8,
    texts: Vec<String>,
    style: u8,
    parent: Option<usize>,
}

fn entry() -> impl Strategy<Value = Generated> {
    (
        0u8..15,
        prop::collection::vec(text(), 3),
        0u8..3,
        prop::option::of(0usize..8),
        prop::bool::weighted(0.25),
    )
        .prop_map(|(shape, mut texts, style, parent, is_long)| {
            // A long line takes the searcher's typed peek before the full decode.
            if is_long {
                texts[1].push_str(&"x".repeat(4200));
            }
            Generated {
                shape,
                texts,
                style,
                parent,
            }
        })
}

/// Returns the JSONL line of entry `idx`.
fn line(idx: usize, generated: &Generated) -> String {
    let style = [Style::Canonical, Style::Slashes, Style::Other][usize::from(generated.style)];
    let [a, b, c] = [0, 1, 2].map(|n| encode(&generated.texts[n], style));
    let parent = match generated.parent {
        Some(parent) if parent < idx => format!("\"e{parent}\""),
        _ => "null".to_owned(),
    };
    let base =
        format!(r#""id":"e{idx}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z""#);
    let message = |body: String| format!(r#"{{"type":"message",{base},"message":{body}}}"#);
    match generated.shape {
        0 => message(format!(r#"{{"role":"user","content":{a}}}"#)),
        1 => message(format!(
            r#"{{"role":"user","content":[{{"type":"text","text":{a}}},{{"type":"image","data":{b},"mimeType":{c}}}]}}"#
        )),
        2 => message(format!(
            r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":{a},"thinkingSignature":{b}}},{{"type":"text","text":{c}}},{{"type":"toolCall","id":{b},"name":"bash","arguments":{{{a}:{c},"n":[{b},1]}}}}],"provider":"p","model":"m"}}"#
        )),
        3 => message(format!(
            r#"{{"role":"toolResult","toolCallId":{c},"toolName":"read","content":[{{"type":"text","text":{a}}}],"details":{{"x":{b}}}}}"#
        )),
        4 => message(format!(
            r#"{{"role":"bashExecution","command":{a},"output":{b}}}"#
        )),
        5 => message(format!(
            r#"{{"role":"system","content":{a},"sections":{{{b}:{c}}},"toolsAdded":[{{"name":{b},"description":{c}}}]}}"#
        )),
        6 => format!(
            r#"{{"type":"compaction",{base},"summary":{a},"firstKeptEntryId":{b},"systemMessage":{{"role":"system","content":{c}}}}}"#
        ),
        7 => format!(r#"{{"type":"branch_summary",{base},"fromId":{b},"summary":{a}}}"#),
        8 => format!(
            r#"{{"type":"custom_message",{base},"customType":{b},"content":{a},"details":{{{c}:{c}}}}}"#
        ),
        9 => format!(r#"{{"type":"label",{base},"targetId":{b},"label":{a}}}"#),
        10 => format!(r#"{{"type":"session_info",{base},"name":{a}}}"#),
        11 => format!(r#"{{"type":"custom",{base},"customType":{a},"data":{{{b}:{c}}}}}"#),
        12 => message(format!(r#"{{"role":{b},"content":{a}}}"#)),
        // A failed response: its error is searched by default.
        13 => message(format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":{c}}}],"provider":"p","model":"m","stopReason":"error","errorMessage":{a}}}"#
        )),
        // A damaged line: the start of an entry, cut inside its text.
        _ => {
            let whole = message(format!(r#"{{"role":"user","content":{a}}}"#));
            whole[..whole.len() - 3].to_owned()
        }
    }
}

/// Returns a pattern: a piece of a generated text (so that it matches), or short random text,
/// as a literal or a regular expression, with random case and word rules.
/// A generated pattern: which piece of which text (entry, field, start), random text, the
/// syntax choice, the case choice and whether whole words are asked for.
type PatternChoice = (Option<(usize, usize, usize)>, String, u8, u8, bool);

fn pattern() -> impl Strategy<Value = PatternChoice> {
    (
        prop::option::weighted(0.8, (0usize..8, 0usize..3, 0usize..24)),
        text(),
        0u8..4,
        0u8..3,
        prop::bool::weighted(0.25),
    )
}

const REGEXES: &[&str] = &[
    r"a.b",
    r"\s",
    r#"["\\]"#,
    r"^b",
    r"c$",
    r"日.",
    r"(?i)k",
    r"[^a-z ]+",
    r"\w+\W",
    r"a|\n",
    r"/",
    r"\x00",
    r"[\x00-\x1F]",
    r"\u{FFFD}",
    r"b{2,}",
    r"\\.",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_fast_path_agrees_with_decoding_every_line(
        entries in prop::collection::vec(entry(), 1..8),
        (piece, random, syntax, case, is_whole_word) in pattern(),
        is_all_kinds in any::<bool>(),
    ) {
        let mut contents = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
        );
        contents.push('\n');
        for (idx, generated) in entries.iter().enumerate() {
            contents.push_str(&line(idx, generated));
            contents.push('\n');
        }
        let text = match piece {
            Some((entry, field, start)) => {
                let source = &entries[entry % entries.len()].texts[field];
                let chars: Vec<char> = source.chars().collect();
                let start = if chars.is_empty() { 0 } else { start % chars.len() };
                let end = (start + 1 + random.chars().count() % 5).min(chars.len());
                chars[start..end].iter().collect()
            }
            None => random.clone(),
        };
        let (syntax, text) = match syntax {
            0 | 1 => (Syntax::Literal, text),
            2 => (Syntax::Regex, regex::escape(&text)),
            _ => (Syntax::Regex, REGEXES[random.len() % REGEXES.len()].to_owned()),
        };
        let pattern = Pattern {
            text,
            syntax,
            case: [CaseMode::Sensitive, CaseMode::Insensitive, CaseMode::Smart][case as usize],
            is_whole_word,
        };
        let mut query = Query::new(pattern);
        query.context_chars = 8;
        query.scope = Scope {
            kinds: if is_all_kinds { FieldKinds::all() } else { FieldKinds::default_kinds() },
            ..Scope::default()
        };
        let searcher = Searcher::new(&query).expect("generated patterns compile");
        let file = SearchFile { path: "/generated.jsonl".to_owned(), depth: 0 };
        let bytes = contents.as_bytes();
        for mode in [Mode::Hits, Mode::Count, Mode::FilesWithMatches] {
            let fast = searcher.search_bytes(&file, bytes, mode, None);
            let reference = searcher.search_bytes_decoding_every_line(&file, bytes, mode, None);
            prop_assert_eq!(&fast.hits, &reference.hits, "{:?}", mode);
            prop_assert_eq!(fast.n_hits, reference.n_hits);
            // Damaged lines are reported only when they could hold a match.
            for warning in &fast.warnings {
                prop_assert!(reference.warnings.contains(warning), "{:?}", warning);
            }
        }
    }
}
