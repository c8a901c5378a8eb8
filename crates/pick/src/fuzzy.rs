//! Fuzzy matching of the typed filter against an entry's haystack (nucleo's matcher, with
//! fzf's syntax: words separated by spaces must all match; `'exact`, `^prefix`, `suffix$` and
//! `!not` work as in fzf), and the matched characters for highlighting.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// A parsed filter and the matcher that runs it.
pub(crate) struct Fuzzy {
    pattern: Pattern,
    matcher: Matcher,
    chars: Vec<char>,
    is_empty: bool,
}

impl std::fmt::Debug for Fuzzy {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Fuzzy")
            .field("is_empty", &self.is_empty)
            .finish_non_exhaustive()
    }
}

impl Fuzzy {
    /// Returns the matcher of `query`: smart case (case-sensitive only when the query has an
    /// upper-case letter), accents folded.
    pub fn new(query: &str) -> Fuzzy {
        Fuzzy {
            pattern: Pattern::parse(query, CaseMatching::Smart, Normalization::Smart),
            matcher: Matcher::new(Config::DEFAULT),
            chars: Vec::new(),
            is_empty: query.trim().is_empty(),
        }
    }

    /// Returns whether the filter is empty (everything matches, equally).
    pub fn is_empty(&self) -> bool {
        self.is_empty
    }

    /// Returns the score of `haystack`, `None` when it does not match.
    pub fn score(&mut self, haystack: &str) -> Option<u32> {
        if self.is_empty {
            return Some(0);
        }
        let text = utf32(haystack, &mut self.chars);
        self.pattern.score(text, &mut self.matcher)
    }

    /// Returns the matched character positions of `haystack`, sorted, or `None` when it does
    /// not match.
    pub fn indices(&mut self, haystack: &str) -> Option<Vec<u32>> {
        if self.is_empty {
            return Some(Vec::new());
        }
        let text = utf32(haystack, &mut self.chars);
        let mut indices = Vec::new();
        self.pattern
            .indices(text, &mut self.matcher, &mut indices)?;
        indices.sort_unstable();
        indices.dedup();
        Some(indices)
    }
}

/// Returns `text` as the matcher reads it, one position per character (not per grapheme, so
/// that positions map straight back onto the text).
fn utf32<'a>(text: &'a str, chars: &'a mut Vec<char>) -> Utf32Str<'a> {
    if text.is_ascii() {
        return Utf32Str::Ascii(text.as_bytes());
    }
    chars.clear();
    chars.extend(text.chars());
    Utf32Str::Unicode(chars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_and_marks_characters() {
        // (query, haystack, matched positions or None)
        let cases: [(&str, &str, Option<&[u32]>); 7] = [
            ("", "anything", Some(&[])),
            ("prs", "fix the parser", Some(&[8, 10, 11])),
            (
                "fix parser",
                "fix the parser",
                Some(&[0, 1, 2, 8, 9, 10, 11, 12, 13]),
            ),
            ("zzz", "fix the parser", None),
            ("Parser", "fix the parser", None),
            ("cafe", "un café noir", Some(&[3, 4, 5, 6])),
            ("élan", "x élan", Some(&[2, 3, 4, 5])),
        ];
        for (query, haystack, expected) in cases {
            let mut fuzzy = Fuzzy::new(query);
            let indices = fuzzy.indices(haystack);
            assert_eq!(indices.as_deref(), expected, "{query:?} in {haystack:?}");
            assert_eq!(fuzzy.score(haystack).is_some(), expected.is_some());
        }
    }

    #[test]
    fn closer_matches_score_higher() {
        let mut fuzzy = Fuzzy::new("parser");
        let exact = fuzzy.score("the parser").expect("match");
        let spread = fuzzy.score("pa r s e r").expect("match");
        assert!(exact > spread);
    }
}
