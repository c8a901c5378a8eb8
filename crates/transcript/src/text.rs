//! Small text helpers shared by the views: previews, literal case-insensitive matching and
//! snippets around a match.

/// Returns the first `max_chars` characters of `text` and whether anything was cut.
pub(crate) fn truncate_chars(text: &str, max_chars: usize) -> (String, bool) {
    match text.char_indices().nth(max_chars) {
        Some((byte_idx, _)) => (text[..byte_idx].to_owned(), true),
        None => (text.to_owned(), false),
    }
}

/// Returns `text` cut to `max_chars` characters, with runs of whitespace folded to one space.
pub(crate) fn preview(text: &str, max_chars: usize) -> String {
    let mut folded = String::with_capacity(text.len().min(max_chars * 4));
    let mut n_chars = 0;
    let mut is_pending_space = false;
    for character in text.chars() {
        if character.is_whitespace() {
            is_pending_space = !folded.is_empty();
            continue;
        }
        if is_pending_space {
            if n_chars == max_chars {
                break;
            }
            folded.push(' ');
            n_chars += 1;
            is_pending_space = false;
        }
        if n_chars == max_chars {
            break;
        }
        folded.push(character);
        n_chars += 1;
    }
    folded
}

/// Returns a needle matcher for literal search, folding case unless `is_case_sensitive`.
#[derive(Debug, Clone)]
pub(crate) struct Needle {
    folded: String,
    is_case_sensitive: bool,
}

impl Needle {
    pub(crate) fn new(needle: &str, is_case_sensitive: bool) -> Self {
        let folded = if is_case_sensitive {
            needle.to_owned()
        } else {
            needle.to_lowercase()
        };
        Needle {
            folded,
            is_case_sensitive,
        }
    }

    /// Returns the character offset of the first match in `haystack`.
    pub(crate) fn find_char_offset(&self, haystack: &str) -> Option<usize> {
        if self.is_case_sensitive {
            let byte_idx = haystack.find(&self.folded)?;
            return Some(haystack[..byte_idx].chars().count());
        }
        let folded = haystack.to_lowercase();
        let byte_idx = folded.find(&self.folded)?;
        // Lowercasing can change the length of some characters; the character count of the
        // folded prefix is close enough to place a snippet.
        Some(folded[..byte_idx].chars().count())
    }

    pub(crate) fn is_match(&self, haystack: &str) -> bool {
        if self.is_case_sensitive {
            haystack.contains(&self.folded)
        } else {
            haystack.to_lowercase().contains(&self.folded)
        }
    }
}

/// Returns up to `max_chars` characters of `text` around character offset `at`.
pub(crate) fn snippet_around(text: &str, at: usize, max_chars: usize) -> String {
    let start = at.saturating_sub(max_chars / 4);
    let tail: String = text.chars().skip(start).collect();
    preview(&tail, max_chars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_fold_whitespace_and_cut() {
        assert_eq!(preview("  a\n\n b  c ", 240), "a b c");
        assert_eq!(preview("abcdef", 3), "abc");
        assert_eq!(preview("ab cd", 2), "ab");
        assert_eq!(preview("ab cd", 3), "ab ");
        assert_eq!(preview("ééé", 2), "éé");
    }

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate_chars("héllo", 2), ("hé".to_owned(), true));
        assert_eq!(truncate_chars("hé", 2), ("hé".to_owned(), false));
    }

    #[test]
    fn matches_literally() {
        assert!(Needle::new("FOO.", false).is_match("a foo. b"));
        assert!(!Needle::new("FOO.", true).is_match("a foo. b"));
        assert!(!Needle::new("f.o", false).is_match("foo"));
        assert_eq!(Needle::new("b", false).find_char_offset("ééB"), Some(2));
    }
}
