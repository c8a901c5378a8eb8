//! The pattern a search looks for and the exact matcher built from it.
//!
//! A [`Pattern`] is literal by default (agents search for error messages full of regular
//! expression metacharacters) or a regular expression of the `regex` crate. Case follows the
//! one rule of `read::searchable` ([`CaseMode`]): smart case by default (case is folded, by
//! Unicode simple case folding, only when the pattern has at least one literal character and
//! none of them is uppercase). `is_whole_word` asks, like `rg -w`, for a match with no word character
//! (Unicode `\w`) just before or just after it.
//!
//! The [`Matcher`] runs on decoded text. `^` and `$` match at the start and end of each line
//! of a text, and `.` does not match a newline, but a newline in the pattern (`\n`, or a
//! literal line break) matches across lines.

use std::ops::Range;

use regex_syntax::ast::{self, Ast};
use regex_syntax::hir::Hir;

use crate::error::SearchError;
pub use pi_retrospect_read::searchable::CaseMode;

/// The largest compiled program a `-E` pattern may become, in bytes. A bounded repetition
/// such as `[\s\S]{0,3000}` multiplies the program; past this size the regex crate refuses
/// it at once, where a larger program would make every search of the store crawl.
pub const REGEX_SIZE_LIMIT: usize = 2 * (1 << 20);

/// The compiled bytes a literal pattern may take per byte of its text: a literal's program
/// grows with its length only (no repetition multiplies it), so a long literal (a pasted
/// stack trace or command) is searched as `inspect search` and `entries --grep` search it.
pub const LITERAL_SIZE_PER_BYTE: usize = 1024;

/// The most memory the lazy DFA of one pattern may use, in bytes; past it the regex crate
/// falls back to slower engines rather than growing.
pub const REGEX_DFA_SIZE_LIMIT: usize = 16 * (1 << 20);

/// Returns how the pattern's text is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Syntax {
    /// Every character stands for itself.
    #[default]
    Literal,
    /// A regular expression in the syntax of the `regex` crate.
    Regex,
}

/// Returns what to look for: the typed form of `PATTERN`, `-E`, `-s`, `-i` and `-w`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pattern {
    /// The pattern as the user wrote it.
    pub text: String,
    /// Literal text or a regular expression.
    pub syntax: Syntax,
    /// How case is compared.
    pub case: CaseMode,
    /// Whether a match must not touch a word character on either side.
    pub is_whole_word: bool,
}

impl Pattern {
    /// Returns a literal pattern for `text`, smart case.
    pub fn literal(text: impl Into<String>) -> Pattern {
        Pattern {
            text: text.into(),
            ..Pattern::default()
        }
    }

    /// Returns a regular expression pattern for `text`, smart case.
    pub fn regex(text: impl Into<String>) -> Pattern {
        Pattern {
            text: text.into(),
            syntax: Syntax::Regex,
            ..Pattern::default()
        }
    }

    /// Returns the pattern with case compared as `case`.
    pub fn with_case(self, case: CaseMode) -> Pattern {
        Pattern { case, ..self }
    }

    /// Returns the pattern matching whole words only.
    pub fn whole_word(self) -> Pattern {
        Pattern {
            is_whole_word: true,
            ..self
        }
    }
}

/// Returns the compiled form of a [`Pattern`]: finds matches in decoded text.
#[derive(Debug, Clone)]
pub struct Matcher {
    regex: regex::Regex,
    hir: Hir,
    is_case_insensitive: bool,
    size_limit: usize,
}

impl Matcher {
    /// Returns the matcher for `pattern`, or why the pattern cannot be compiled.
    pub fn new(pattern: &Pattern) -> Result<Matcher, SearchError> {
        let invalid = |message: String| SearchError::Pattern {
            pattern: pattern.text.clone(),
            message,
        };
        let size_limit = match pattern.syntax {
            Syntax::Literal => {
                REGEX_SIZE_LIMIT.max(pattern.text.len().saturating_mul(LITERAL_SIZE_PER_BYTE))
            }
            Syntax::Regex => REGEX_SIZE_LIMIT,
        };
        let expression = match pattern.syntax {
            Syntax::Literal => regex::escape(&pattern.text),
            Syntax::Regex => pattern.text.clone(),
        };
        let is_case_insensitive = match pattern.case {
            CaseMode::Sensitive => false,
            CaseMode::Insensitive => true,
            CaseMode::Smart => is_all_lowercase(&expression),
        };
        // A syntax error is reported on the pattern as given, so that its caret points into
        // the caller's text rather than into the group added below.
        if pattern.syntax == Syntax::Regex {
            regex_syntax::ParserBuilder::new()
                .build()
                .parse(&expression)
                .map_err(|error| invalid(error.to_string()))?;
        }
        // The group keeps an alternation inside the word checks; ripgrep's `-w` uses the same
        // half boundaries, so a pattern that starts or ends with a non-word character works.
        let full = if pattern.is_whole_word {
            format!(r"\b{{start-half}}(?:{expression})\b{{end-half}}")
        } else {
            format!("(?:{expression})")
        };
        let regex = regex::RegexBuilder::new(&full)
            .case_insensitive(is_case_insensitive)
            .multi_line(true)
            .size_limit(size_limit)
            .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
            .build()
            .map_err(|error| invalid(compile_message(&error)))?;
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(is_case_insensitive)
            .multi_line(true)
            .build()
            .parse(&full)
            .map_err(|error| invalid(error.to_string()))?;
        Ok(Matcher {
            regex,
            hir,
            is_case_insensitive,
            size_limit,
        })
    }

    /// Returns the largest program the pattern may compile to, in bytes (larger for a long
    /// literal; see [`LITERAL_SIZE_PER_BYTE`]).
    pub(crate) fn size_limit(&self) -> usize {
        self.size_limit
    }

    /// Returns whether case is ignored (after resolving smart case).
    pub fn is_case_insensitive(&self) -> bool {
        self.is_case_insensitive
    }

    /// Returns whether `text` holds a match.
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// Returns the byte range of the first match in `text`.
    pub fn find(&self, text: &str) -> Option<Range<usize>> {
        self.regex.find(text).map(|found| found.range())
    }

    /// Returns the first match in `text` and how many non-overlapping matches it holds.
    pub fn find_counting(&self, text: &str) -> Option<(Range<usize>, u64)> {
        let mut matches = self.regex.find_iter(text);
        let first = matches.next()?.range();
        Some((first, 1 + matches.count() as u64))
    }

    /// Returns the pattern as parsed, for the raw-byte prefilter.
    pub(crate) fn hir(&self) -> &Hir {
        &self.hir
    }
}

/// Returns what the regex crate said, said plainly when the pattern is too large.
fn compile_message(error: &regex::Error) -> String {
    match error {
        regex::Error::CompiledTooBig(limit) => format!(
            "the pattern compiles to more than {limit} bytes (the size limit); use a \
             smaller repetition count or a narrower character class"
        ),
        other => other.to_string(),
    }
}

/// Returns whether smart case folds case for `expression`: it has at least one literal
/// character and none of them is uppercase. Escapes such as `\W` or `\S` are not literals. A
/// pattern that does not parse is left case-sensitive (compiling it reports the error).
fn is_all_lowercase(expression: &str) -> bool {
    let Ok(ast) = ast::parse::Parser::new().parse(expression) else {
        return false;
    };
    let mut analysis = CaseAnalysis::default();
    analysis.visit(&ast);
    analysis.has_literal && !analysis.has_uppercase
}

/// Accumulates what [`is_all_lowercase`] asks about the literal characters of a pattern.
#[derive(Default)]
struct CaseAnalysis {
    has_literal: bool,
    has_uppercase: bool,
}

impl CaseAnalysis {
    fn literal(&mut self, character: char) {
        self.has_literal = true;
        self.has_uppercase |= character.is_uppercase();
    }

    /// Visits every node; the parser's nesting limit bounds the recursion.
    fn visit(&mut self, ast: &Ast) {
        match ast {
            Ast::Literal(literal) => self.literal(literal.c),
            Ast::ClassBracketed(class) => self.visit_class_set(&class.kind),
            Ast::Repetition(repetition) => self.visit(&repetition.ast),
            Ast::Group(group) => self.visit(&group.ast),
            Ast::Alternation(alternation) => {
                alternation.asts.iter().for_each(|ast| self.visit(ast))
            }
            Ast::Concat(concat) => concat.asts.iter().for_each(|ast| self.visit(ast)),
            Ast::Empty(_)
            | Ast::Flags(_)
            | Ast::Dot(_)
            | Ast::Assertion(_)
            | Ast::ClassUnicode(_)
            | Ast::ClassPerl(_) => {}
        }
    }

    fn visit_class_set(&mut self, set: &ast::ClassSet) {
        match set {
            ast::ClassSet::Item(item) => self.visit_class_item(item),
            ast::ClassSet::BinaryOp(op) => {
                self.visit_class_set(&op.lhs);
                self.visit_class_set(&op.rhs);
            }
        }
    }

    fn visit_class_item(&mut self, item: &ast::ClassSetItem) {
        match item {
            ast::ClassSetItem::Literal(literal) => self.literal(literal.c),
            ast::ClassSetItem::Range(range) => {
                self.literal(range.start.c);
                self.literal(range.end.c);
            }
            ast::ClassSetItem::Bracketed(class) => self.visit_class_set(&class.kind),
            ast::ClassSetItem::Union(union) => {
                union
                    .items
                    .iter()
                    .for_each(|item| self.visit_class_item(item));
            }
            ast::ClassSetItem::Empty(_)
            | ast::ClassSetItem::Ascii(_)
            | ast::ClassSetItem::Unicode(_)
            | ast::ClassSetItem::Perl(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the matches of `pattern` in `text`: the first match's text and the count.
    fn check(pattern: Pattern, text: &str, expected: Option<(&str, u64)>) {
        let matcher = Matcher::new(&pattern).expect("pattern compiles");
        let actual = matcher
            .find_counting(text)
            .map(|(range, count)| (&text[range], count));
        assert_eq!(actual, expected, "{pattern:?} in {text:?}");
        assert_eq!(matcher.is_match(text), expected.is_some());
    }

    #[test]
    fn literal_is_the_default_and_metacharacters_are_plain() {
        check(Pattern::literal("a.c"), "abc a.c", Some(("a.c", 1)));
        check(
            Pattern::literal("f(x)[0]*"),
            "call f(x)[0]* now",
            Some(("f(x)[0]*", 1)),
        );
        check(Pattern::literal("a.c"), "abc", None);
        check(Pattern::regex("a.c"), "abc a.c", Some(("abc", 2)));
        check(Pattern::literal(""), "ab", Some(("", 3)));
    }

    #[test]
    fn case_rules_follow_ripgrep() {
        let sensitive = Pattern::literal("Error");
        check(sensitive.clone(), "error Error", Some(("Error", 1)));
        check(
            sensitive.with_case(CaseMode::Insensitive),
            "error Error",
            Some(("error", 2)),
        );
        // Smart case: all lowercase folds, any uppercase literal keeps case.
        let smart = |text: &str| Pattern::literal(text).with_case(CaseMode::Smart);
        check(smart("error"), "ERROR", Some(("ERROR", 1)));
        check(smart("Error"), "ERROR error", None);
        check(smart("Error"), "an Error", Some(("Error", 1)));
        // Escapes are not literals: `\W` keeps `foo` lowercase, so case folds.
        let smart_regex = |text: &str| Pattern::regex(text).with_case(CaseMode::Smart);
        check(smart_regex(r"foo\W"), "FOO!", Some(("FOO!", 1)));
        check(smart_regex(r"[A-Z]x"), "Ax ax", Some(("Ax", 1)));
        check(smart_regex(r"\w+"), "ABC", Some(("ABC", 1)));
        // Unicode: case folding covers non-ASCII letters.
        check(smart("straße"), "STRAßE", Some(("STRAßE", 1)));
        check(smart("émile"), "ÉMILE", Some(("ÉMILE", 1)));
        check(smart("Émile"), "émile", None);
    }

    #[test]
    fn whole_words_need_no_word_character_on_either_side() {
        let word = |text: &str| Pattern::literal(text).whole_word();
        check(word("cat"), "concat cat cats", Some(("cat", 1)));
        check(word("cat"), "concatenate", None);
        check(word("-v"), "run -v now", Some(("-v", 1)));
        check(word("-v"), "x-vy", None);
        check(word("über"), "überall über", Some(("über", 1)));
        check(word("a b"), "a b, xa b", Some(("a b", 1)));
        check(
            Pattern::regex("foo|foobar").whole_word(),
            "foobar",
            Some(("foobar", 1)),
        );
    }

    #[test]
    fn lines_anchor_and_newlines_match_across_lines() {
        check(Pattern::regex("^b"), "a\nb", Some(("b", 1)));
        check(Pattern::regex("a$"), "a\nb", Some(("a", 1)));
        check(Pattern::regex("a.b"), "a\nb", None);
        check(Pattern::literal("a\nb"), "xa\nby", Some(("a\nb", 1)));
        check(Pattern::regex(r"a\sb"), "a\nb", Some(("a\nb", 1)));
    }

    #[test]
    fn invalid_regex_is_an_error_naming_the_pattern() {
        let error = Matcher::new(&Pattern::regex("a(")).expect_err("unclosed group");
        assert!(
            error.to_string().starts_with("invalid pattern \"a(\""),
            "{error}"
        );
        // The caret points into the pattern as given, never into a group added around it.
        assert!(!error.to_string().contains("(?:"), "{error}");
        assert!(error.to_string().contains("\n    a(\n     ^"), "{error}");
        assert!(Matcher::new(&Pattern::literal("a(")).is_ok());
    }

    #[test]
    fn a_pattern_past_the_size_limit_is_an_error_naming_it() {
        let text = r"[\s\S]{0,3000}q";
        let error = Matcher::new(&Pattern::regex(text)).expect_err("too large");
        let message = error.to_string();
        assert!(message.contains(&format!("{text:?}")), "{message}");
        assert!(message.contains("size limit"), "{message}");
        // The same repetition of a small class stays within the limit.
        assert!(Matcher::new(&Pattern::regex("a{0,3000}q")).is_ok());
    }
}
