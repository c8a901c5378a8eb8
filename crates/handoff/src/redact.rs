//! Redaction of common credentials: each one found is replaced in place by
//! `[redacted: KIND]`, and the redactions are counted per kind.
//!
//! Detection is by shape, so it is best effort: a secret written in prose ("my password is
//! hunter2") is not found. What is found: API keys of the major model providers, GitHub,
//! GitLab, Slack, npm, Stripe and Hugging Face tokens, AWS access key ids and the secret keys
//! written next to them, bearer and basic credentials and the credential of an
//! `Authorization` header in any scheme, JWTs, PEM private-key blocks (an unterminated block
//! up to the end of the text), passwords in URLs (up to the last `@` before the host), and
//! the values of `KEY=value` / `KEY: value` assignments whose key names a secret
//! (`PASSWORD`, `PGPASSWORD`, `DB_PASS`, `SECRET`, `TOKEN`, `API_KEY`, `accessToken`, ...;
//! a `KEY: pass phrase` alone on its line to the end of the line) or may name one when the
//! value looks random (`MISTRAL_KEY`, Azure's `AccountKey`, docker's `"auth"`).
//!
//! Every rule is a `regex` (linear time in the text) plus a check on the match; the matches of
//! all rules are found in the same input, overlapping matches are merged into one redaction,
//! and the text is rebuilt once. The marker holds a space and brackets, which no rule matches,
//! so redacting a redacted text changes nothing.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::LazyLock;

use pi_retrospect_core::sanitize::sanitize_for_terminal;
use regex::Regex;

/// The kind of a redacted credential; its name is what `[redacted: KIND]` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SecretKind {
    /// A PEM private-key block (`-----BEGIN ... PRIVATE KEY-----` to its `END` line).
    PrivateKey,
    /// A JSON Web Token (`eyJ...` `.` `eyJ...` `.` signature).
    Jwt,
    /// An Anthropic API key (`sk-ant-...`).
    AnthropicApiKey,
    /// An OpenRouter API key (`sk-or-v1-...`).
    OpenRouterApiKey,
    /// An OpenAI API key (`sk-proj-...`, `sk-svcacct-...`, `sk-admin-...`, legacy `sk-...`).
    OpenAiApiKey,
    /// Another provider's API key with a known prefix (`sk-...`, `pplx-`, `csk-`, `tvly-`,
    /// `fw_`, `r8_`).
    ApiKey,
    /// A Google API key (`AIza...`).
    GoogleApiKey,
    /// A Google OAuth access token (`ya29....`).
    GoogleOauthToken,
    /// An xAI API key (`xai-...`).
    XaiApiKey,
    /// A Groq API key (`gsk_...`).
    GroqApiKey,
    /// A Hugging Face token (`hf_...`).
    HuggingFaceToken,
    /// A GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GithubToken,
    /// A GitLab token (`glpat-` and the other `gl...-` prefixes).
    GitlabToken,
    /// A Slack token (`xoxb-`, `xoxp-`, ..., app-level `xapp-`).
    SlackToken,
    /// A Slack incoming-webhook URL.
    SlackWebhook,
    /// An npm access token (`npm_...`).
    NpmToken,
    /// A Stripe secret or restricted key (`sk_live_`, `rk_test_`, ...).
    StripeKey,
    /// An AWS access key id (`AKIA...`, `ASIA...`).
    AwsAccessKeyId,
    /// An AWS secret access key: 40 base64 characters next to an access key id or after
    /// the word `aws` or `secret`.
    AwsSecretAccessKey,
    /// The credential after `Bearer`.
    BearerToken,
    /// The credential of an `Authorization: Basic` header.
    BasicAuth,
    /// The credential of an `Authorization` header in another scheme (`Token`, `Bearer`
    /// without a digit, `Negotiate`, ...).
    Authorization,
    /// The password of a URL's `user:password@`.
    UrlPassword,
    /// The value of an assignment whose key names a secret.
    SecretAssignment,
}

impl SecretKind {
    /// Returns the kind's name as written in `[redacted: KIND]`.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::PrivateKey => "private-key",
            SecretKind::Jwt => "jwt",
            SecretKind::AnthropicApiKey => "anthropic-api-key",
            SecretKind::OpenRouterApiKey => "openrouter-api-key",
            SecretKind::OpenAiApiKey => "openai-api-key",
            SecretKind::ApiKey => "api-key",
            SecretKind::GoogleApiKey => "google-api-key",
            SecretKind::GoogleOauthToken => "google-oauth-token",
            SecretKind::XaiApiKey => "xai-api-key",
            SecretKind::GroqApiKey => "groq-api-key",
            SecretKind::HuggingFaceToken => "huggingface-token",
            SecretKind::GithubToken => "github-token",
            SecretKind::GitlabToken => "gitlab-token",
            SecretKind::SlackToken => "slack-token",
            SecretKind::SlackWebhook => "slack-webhook",
            SecretKind::NpmToken => "npm-token",
            SecretKind::StripeKey => "stripe-key",
            SecretKind::AwsAccessKeyId => "aws-access-key-id",
            SecretKind::AwsSecretAccessKey => "aws-secret-access-key",
            SecretKind::BearerToken => "bearer-token",
            SecretKind::BasicAuth => "basic-auth",
            SecretKind::Authorization => "authorization",
            SecretKind::UrlPassword => "url-password",
            SecretKind::SecretAssignment => "secret-assignment",
        }
    }
}

/// One redaction in a redacted text: where its marker is and what it replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactedSpan {
    /// What kind of credential was replaced.
    pub kind: SecretKind,
    /// The byte range of the `[redacted: KIND]` marker in [`Redacted::text`].
    pub range: Range<usize>,
}

/// A text with its credentials replaced by markers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redacted {
    /// The text, every credential found replaced by `[redacted: KIND]`.
    pub text: String,
    /// The markers in `text`, in order.
    pub spans: Vec<RedactedSpan>,
}

impl Redacted {
    /// Returns the number of redactions per kind.
    pub fn counts(&self) -> BTreeMap<SecretKind, u64> {
        let mut counts = BTreeMap::new();
        for span in &self.spans {
            *counts.entry(span.kind).or_insert(0) += 1;
        }
        counts
    }

    /// Returns the longest prefix of this text of at most `max_bytes` bytes that ends on a
    /// character boundary and outside every marker, with the markers it holds whole.
    ///
    /// A marker is never split, so a cut shows either a whole marker or none of it; cutting
    /// twice to the same limit gives the same result as cutting once.
    pub fn cut(&self, max_bytes: usize) -> Redacted {
        if self.text.len() <= max_bytes {
            return self.clone();
        }
        let mut end = floor_char_boundary(&self.text, max_bytes);
        if let Some(span) = self
            .spans
            .iter()
            .find(|span| span.range.start < end && end < span.range.end)
        {
            end = span.range.start;
        }
        Redacted {
            text: self.text[..end].to_owned(),
            spans: self
                .spans
                .iter()
                .filter(|span| span.range.end <= end)
                .cloned()
                .collect(),
        }
    }
}

/// Returns `text` stripped of terminal control sequences, C0/C1 controls other than newline
/// and tab, and bidi controls (as [`sanitize_for_terminal`] does), then redacted.
///
/// Stripping comes first, so an escape sequence written into the middle of a key cannot hide
/// it from the rules.
pub fn clean(text: &str) -> Redacted {
    redact(&sanitize_for_terminal(text))
}

/// Returns `text` with every credential the rules find replaced by `[redacted: KIND]`.
pub fn redact(text: &str) -> Redacted {
    let mut redacted = Redacted {
        text: text.to_owned(),
        spans: Vec::new(),
    };
    // Replacing a secret can bring the text that a context rule looks for (an access key id,
    // the word `aws`) nearer to another candidate, so passes repeat until one finds nothing
    // new; that makes redaction idempotent. Every pass replaces at least one non-empty range
    // of text outside the markers, and no rule matches a marker, so this ends; usually the
    // second pass finds nothing.
    loop {
        let spans = &redacted.spans;
        let is_new = |range: &Range<usize>| {
            let first_after = spans.partition_point(|span| span.range.end <= range.start);
            spans
                .get(first_after)
                .is_none_or(|span| span.range.start >= range.end)
        };
        let found: Vec<Found> = find(&redacted.text)
            .into_iter()
            .filter(|found| is_new(&found.range))
            .collect();
        if found.is_empty() {
            return redacted;
        }
        let mut replacements = merge(found);
        replacements.extend(spans.iter().map(|span| (span.range.clone(), span.kind)));
        replacements.sort_by_key(|(range, _)| range.start);
        redacted = rebuild(&redacted.text, replacements);
    }
}

/// Returns every credential the rules find in `text`, overlapping ones included.
fn find(text: &str) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    for (priority, rule) in RULES.iter().enumerate() {
        for captures in rule.regex.captures_iter(text) {
            let Some(secret) = captures.get(rule.group) else {
                continue;
            };
            if secret.is_empty() || !(rule.check)(text, secret.range()) {
                continue;
            }
            found.push(Found {
                range: secret.range(),
                priority,
                kind: rule.kind,
            });
        }
    }
    let assignment_priority = RULES.len();
    for range in assignment_values(text) {
        found.push(Found {
            range,
            priority: assignment_priority,
            kind: SecretKind::SecretAssignment,
        });
    }
    found
}

/// A credential found by one rule.
struct Found {
    range: Range<usize>,
    priority: usize,
    kind: SecretKind,
}

/// Returns the found ranges merged where they overlap, in text order; a merged range takes
/// the kind of its highest-priority (most specific) rule.
fn merge(mut found: Vec<Found>) -> Vec<(Range<usize>, SecretKind)> {
    found.sort_by_key(|item| (item.range.start, item.priority));
    let mut merged: Vec<(Range<usize>, usize, SecretKind)> = Vec::new();
    for item in found {
        match merged.last_mut() {
            Some((range, priority, kind)) if item.range.start < range.end => {
                range.end = range.end.max(item.range.end);
                if item.priority < *priority {
                    *priority = item.priority;
                    *kind = item.kind;
                }
            }
            _ => merged.push((item.range, item.priority, item.kind)),
        }
    }
    merged
        .into_iter()
        .map(|(range, _, kind)| (range, kind))
        .collect()
}

/// Returns `text` with each range replaced by its marker.
fn rebuild(text: &str, redactions: Vec<(Range<usize>, SecretKind)>) -> Redacted {
    if redactions.is_empty() {
        return Redacted {
            text: text.to_owned(),
            spans: Vec::new(),
        };
    }
    let mut out = String::with_capacity(text.len() + 16 * redactions.len());
    let mut spans = Vec::with_capacity(redactions.len());
    let mut copied_to = 0;
    for (range, kind) in redactions {
        out.push_str(&text[copied_to..range.start]);
        let start = out.len();
        out.push_str("[redacted: ");
        out.push_str(kind.as_str());
        out.push(']');
        spans.push(RedactedSpan {
            kind,
            range: start..out.len(),
        });
        copied_to = range.end;
    }
    out.push_str(&text[copied_to..]);
    Redacted { text: out, spans }
}

/// Returns the largest character boundary of `text` at or below `idx`.
fn floor_char_boundary(text: &str, idx: usize) -> usize {
    if idx >= text.len() {
        return text.len();
    }
    let mut idx = idx;
    while !text.is_char_boundary(idx) {
        idx -= 1;
    }
    idx
}

/// Returns the smallest character boundary of `text` at or above `idx`.
fn ceil_char_boundary(text: &str, idx: usize) -> usize {
    let mut idx = idx.min(text.len());
    while !text.is_char_boundary(idx) {
        idx += 1;
    }
    idx
}

/// One shape rule: the credential is capture group `group` of a match of `regex` for which
/// `check` (given the whole text and the credential's range) holds.
struct Rule {
    kind: SecretKind,
    regex: Regex,
    group: usize,
    check: fn(&str, Range<usize>) -> bool,
}

fn always(_: &str, _: Range<usize>) -> bool {
    true
}

/// Returns whether the credential holds a digit: random keys nearly always do, and a long
/// hyphenated word after a known prefix (`sk-this-is-a-slug`) does not.
fn has_digit(text: &str, range: Range<usize>) -> bool {
    text[range].bytes().any(|byte| byte.is_ascii_digit())
}

/// Returns whether a run of base64 characters is an AWS secret access key: exactly 40
/// characters mixing upper and lower case with a digit or `/` or `+` (which rules out hex
/// digests), next to an access key id or after the word `aws` or `secret`.
fn is_aws_secret(text: &str, range: Range<usize>) -> bool {
    let candidate = &text[range.clone()];
    if candidate.len() != 40 {
        return false;
    }
    let has_upper = candidate.bytes().any(|byte| byte.is_ascii_uppercase());
    let has_lower = candidate.bytes().any(|byte| byte.is_ascii_lowercase());
    let has_other = candidate
        .bytes()
        .any(|byte| byte.is_ascii_digit() || byte == b'/' || byte == b'+');
    if !(has_upper && has_lower && has_other) {
        return false;
    }
    let near_start = floor_char_boundary(text, range.start.saturating_sub(256));
    let near_end = ceil_char_boundary(text, range.end + 256);
    if AWS_ACCESS_KEY_ID.is_match(&text[near_start..near_end]) {
        return true;
    }
    // The word in a marker (`[redacted: secret-assignment]`) is no context.
    let before_start = floor_char_boundary(text, range.start.saturating_sub(64));
    let before = MARKER.replace_all(&text[before_start..range.start], "");
    AWS_SECRET_CONTEXT.is_match(&before)
}

/// Returns whether a credential is written out rather than referenced (`$TOKEN`,
/// `${TOKEN}`, `<token>`, `%TOKEN%`, `****`).
fn is_not_reference(text: &str, range: Range<usize>) -> bool {
    !text[range].starts_with(['$', '<', '{', '%', '*'])
}

/// Returns whether what sits between `user:` and the last `@` is a password rather than a
/// port and a path (`https://host:443/users/@name`): a password holding `/` must not start
/// with digits only before it.
fn is_url_password(text: &str, range: Range<usize>) -> bool {
    let candidate = &text[range];
    match candidate.split_once('/') {
        Some((before_slash, _)) => !before_slash.bytes().all(|byte| byte.is_ascii_digit()),
        None => true,
    }
}

static MARKER: LazyLock<Regex> = LazyLock::new(|| compile(r"\[redacted: [a-z-]+\]"));

static AWS_ACCESS_KEY_ID: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)"));

static AWS_SECRET_CONTEXT: LazyLock<Regex> = LazyLock::new(|| compile(r"(?i)aws|secret"));

/// Returns the compiled `pattern`.
///
/// The rules use ASCII word boundaries (`(?-u:\b)`): a key glued to a letter outside ASCII
/// (`AKIA...é`) is still a key.
fn compile(pattern: &str) -> Regex {
    // Every pattern is a literal in this file, and every test of redaction compiles them all,
    // so an invalid one cannot pass the tests.
    Regex::new(pattern).expect("a valid literal pattern")
}

/// The shape rules, most specific first: where matches of several rules overlap, the first
/// rule's kind names the merged redaction.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |kind, pattern: &str, group, check: fn(&str, Range<usize>) -> bool| Rule {
        kind,
        regex: compile(pattern),
        group,
        check,
    };
    vec![
        rule(
            SecretKind::PrivateKey,
            r"(?s)-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            0,
            always,
        ),
        rule(
            SecretKind::Jwt,
            r"(?-u:\b)eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
            0,
            always,
        ),
        rule(
            SecretKind::AnthropicApiKey,
            r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}",
            0,
            always,
        ),
        rule(
            SecretKind::OpenRouterApiKey,
            r"(?-u:\b)sk-or-v1-[A-Za-z0-9]{20,}",
            0,
            always,
        ),
        rule(
            SecretKind::OpenAiApiKey,
            r"(?-u:\b)sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|(?-u:\b)sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
            0,
            always,
        ),
        rule(
            SecretKind::ApiKey,
            r"(?-u:\b)(?:sk|pplx|csk|tvly)-[A-Za-z0-9]{20,}|(?-u:\b)(?:fw|r8)_[A-Za-z0-9]{20,}",
            0,
            has_digit,
        ),
        rule(
            SecretKind::GoogleApiKey,
            r"(?-u:\b)AIza[0-9A-Za-z_-]{35,}",
            0,
            always,
        ),
        rule(
            SecretKind::GoogleOauthToken,
            r"(?-u:\b)ya29\.[0-9A-Za-z_-]{20,}",
            0,
            always,
        ),
        rule(
            SecretKind::XaiApiKey,
            r"(?-u:\b)xai-[A-Za-z0-9]{20,}",
            0,
            has_digit,
        ),
        rule(
            SecretKind::GroqApiKey,
            r"(?-u:\b)gsk_[A-Za-z0-9]{20,}",
            0,
            has_digit,
        ),
        rule(
            SecretKind::HuggingFaceToken,
            r"(?-u:\b)hf_[A-Za-z0-9]{30,}",
            0,
            has_digit,
        ),
        rule(
            SecretKind::GithubToken,
            r"(?-u:\b)(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|(?-u:\b)github_pat_[A-Za-z0-9_]{30,}",
            0,
            always,
        ),
        rule(
            SecretKind::GitlabToken,
            r"(?-u:\b)gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}",
            0,
            always,
        ),
        rule(
            SecretKind::SlackToken,
            r"(?-u:\b)(?:xox[abposrce]|xapp)-[A-Za-z0-9-]{10,}",
            0,
            has_digit,
        ),
        rule(
            SecretKind::SlackWebhook,
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+",
            0,
            always,
        ),
        rule(
            SecretKind::NpmToken,
            r"(?-u:\b)npm_[A-Za-z0-9]{36,}",
            0,
            always,
        ),
        rule(
            SecretKind::StripeKey,
            r"(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}",
            0,
            always,
        ),
        rule(
            SecretKind::AwsAccessKeyId,
            r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)",
            0,
            always,
        ),
        rule(
            SecretKind::AwsSecretAccessKey,
            r"[A-Za-z0-9/+]+",
            0,
            is_aws_secret,
        ),
        rule(
            SecretKind::BearerToken,
            r"(?i)(?-u:\b)bearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)",
            1,
            has_digit,
        ),
        rule(
            SecretKind::BasicAuth,
            r"(?i)(?-u:\b)authorization[ \t]*:[ \t]*basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})",
            1,
            always,
        ),
        // After the two schemes above, so that their kinds name what both find.
        rule(
            SecretKind::Authorization,
            r#"(?i)(?-u:\b)authorization["']?[ \t]*[:=][ \t]*["']?[A-Za-z][A-Za-z0-9_-]*[ \t]+([^\s"'`,;\[][^\s"'`,;]{7,})"#,
            1,
            is_not_reference,
        ),
        // The password runs to the last `@` that a host (and an optional port) follows, so
        // a password holding `@` or `/` is redacted whole.
        rule(
            SecretKind::UrlPassword,
            r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>]*:([^\s?#"'<>]+)@[A-Za-z0-9._~%\[\]-]+(?::[0-9]+)?(?:[^A-Za-z0-9._~%@:-]|\z)"#,
            1,
            is_url_password,
        ),
    ]
});

/// Finds the key and separator of an assignment; the value is read by hand after it.
static ASSIGNMENT_KEY: LazyLock<Regex> = LazyLock::new(|| {
    compile(r#"(?m)(?:^|[\s"'`{,(;?&-])([A-Za-z_][A-Za-z0-9_.-]{0,63})(["'`]?)[ \t]*([=:])"#)
});

/// Returns the ranges of the values of assignments whose key names a secret:
/// `KEY=value`, `KEY = "value"`, `export KEY=value`, `--key=value`, `?key=value&`,
/// `"key": "value"`, and `KEY: value` alone on its line (YAML, HTTP headers).
fn assignment_values(text: &str) -> Vec<Range<usize>> {
    let mut values = Vec::new();
    for captures in ASSIGNMENT_KEY.captures_iter(text) {
        let (Some(key), Some(quote), Some(separator)) =
            (captures.get(1), captures.get(2), captures.get(3))
        else {
            continue;
        };
        let Some(secrecy) = key_secrecy(key.as_str()) else {
            continue;
        };
        let bytes = text.as_bytes();
        let mut value_start = separator.end();
        let mut is_colon = separator.as_str() == ":";
        match (is_colon, bytes.get(value_start)) {
            // `::` is a path, `==`, `=>` and `=~` are comparisons or arrows.
            (true, Some(b':')) | (false, Some(b'=' | b'>' | b'~')) => continue,
            // Go's `:=` assigns like `=`.
            (true, Some(b'=')) => {
                is_colon = false;
                value_start += 1;
            }
            _ => {}
        }
        let is_key_quoted = !quote.as_str().is_empty();
        if is_colon && !is_key_quoted && !is_alone_on_line(text, key.start()) {
            continue;
        }
        let line_end = text[value_start..]
            .find('\n')
            .map_or(text.len(), |offset| value_start + offset);
        let rest = &text[value_start..line_end];
        let n_blank = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let value_start = value_start + n_blank;
        let rest = &text[value_start..line_end];
        let Some(first) = rest.chars().next() else {
            continue;
        };
        let range = if matches!(first, '"' | '\'' | '`') {
            let inner_start = value_start + first.len_utf8();
            let inner_end = closing_quote(&text[inner_start..line_end], first)
                .map_or(line_end, |offset| inner_start + offset);
            let value = &text[inner_start..inner_end];
            if !is_secret_value(value) || !secrecy.accepts(value) {
                continue;
            }
            inner_start..inner_end
        } else {
            let value = if is_colon {
                let value = rest
                    .trim_end()
                    .trim_end_matches([',', ';'])
                    .trim_end_matches('\r');
                // A passphrase is words; another secret written with blanks is prose.
                if value.contains(char::is_whitespace) && secrecy != KeySecrecy::Password {
                    continue;
                }
                value
            } else {
                let end = rest
                    .find(|character: char| {
                        character.is_whitespace() || "\"'`&;".contains(character)
                    })
                    .unwrap_or(rest.len());
                rest[..end].trim_end_matches([',', ')', '}', ']'])
            };
            if !is_secret_value(value)
                || !secrecy.accepts(value)
                || value.contains(['(', ')', '[', ']', '{', '}', '<', '>'])
                || is_member_access(value)
            {
                continue;
            }
            value_start..value_start + value.len()
        };
        if !range.is_empty() {
            values.push(range);
        }
    }
    values
}

/// Returns whether an unquoted value is code naming where a secret is kept rather than the
/// secret: a member access such as `process.env.API_KEY` or `config.token`.
fn is_member_access(value: &str) -> bool {
    let mut n_segments = 0;
    for segment in value.split('.') {
        let mut characters = segment.chars();
        let is_identifier = characters
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
            && characters.all(|character| character.is_ascii_alphanumeric() || character == '_');
        if !is_identifier {
            return false;
        }
        n_segments += 1;
    }
    n_segments >= 2
}

/// Returns whether only blanks and list or quote markers precede `idx` on its line.
fn is_alone_on_line(text: &str, idx: usize) -> bool {
    let line_start = text[..idx].rfind('\n').map_or(0, |offset| offset + 1);
    text[line_start..idx]
        .chars()
        .all(|character| matches!(character, ' ' | '\t' | '-' | '*' | '>'))
}

/// Returns the offset of the first `quote` in `text` not escaped by a backslash.
fn closing_quote(text: &str, quote: char) -> Option<usize> {
    let mut is_escaped = false;
    for (offset, character) in text.char_indices() {
        if is_escaped {
            is_escaped = false;
        } else if character == '\\' {
            is_escaped = true;
        } else if character == quote {
            return Some(offset);
        }
    }
    None
}

/// Returns whether an assignment's value can be a secret rather than a reference
/// (`$VAR`, `${{ secrets.X }}`, `<your key>`), a placeholder (`****`), a marker, a type
/// (`string`), a literal (`true`, `null`) or a small number (a count).
fn is_secret_value(value: &str) -> bool {
    let Some(first) = value.chars().next() else {
        return false;
    };
    if "$<%{[(*&#".contains(first) {
        return false;
    }
    if value.len() <= 8 && value.bytes().all(|byte| byte.is_ascii_digit()) {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    !matches!(
        lower.as_str(),
        "true"
            | "false"
            | "null"
            | "none"
            | "nil"
            | "undefined"
            | "yes"
            | "no"
            | "string"
            | "str"
            | "&str"
            | "number"
            | "bool"
            | "boolean"
            | "int"
            | "integer"
            | "any"
            | "unknown"
            | "object"
            | "required"
            | "optional"
    )
}

/// Words that name a secret on their own.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "secretkey",
    "credential",
    "credentials",
    "authorization",
];

/// Word pairs that name a secret together (`API_KEY`, `accessKey`).
const SECRET_PAIRS: &[(&str, &str)] = &[
    ("api", "key"),
    ("access", "key"),
    ("private", "key"),
    ("auth", "key"),
    ("signing", "key"),
    ("encryption", "key"),
    ("master", "key"),
    ("session", "key"),
];

/// Words that make a key describe a secret instead of holding one (`token_count`,
/// `password_file`, `secret_name`).
const METADATA_WORDS: &[&str] = &[
    "count",
    "counts",
    "limit",
    "limits",
    "len",
    "length",
    "size",
    "max",
    "min",
    "budget",
    "usage",
    "type",
    "kind",
    "name",
    "names",
    "file",
    "files",
    "path",
    "dir",
    "url",
    "uri",
    "endpoint",
    "env",
    "var",
    "prefix",
    "header",
    "field",
    "hint",
    "policy",
    "expiry",
    "expires",
    "expiration",
    "ttl",
];

/// Words that, before `key`, make it name something other than a secret (`PRIMARY_KEY`,
/// `sort_key`, `public_key`).
const PLAIN_KEY_QUALIFIERS: &[&str] = &[
    "public",
    "primary",
    "foreign",
    "unique",
    "sort",
    "partition",
    "shard",
    "range",
    "row",
    "cache",
    "routing",
    "lookup",
    "map",
    "hash",
    "hot",
    "idempotency",
    "dedup",
    "dedupe",
    "group",
    "object",
    "message",
    "translation",
    "i18n",
];

/// Words that, last in a key of several words, name a password (`DB_PASS`, `MYSQL_PWD`,
/// `ADMIN_PW`); alone they are too common (`PWD` is the working directory).
const PASSWORD_SUFFIXES: &[&str] = &["pass", "pwd", "pw"];

/// How much an assignment's key says about its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeySecrecy {
    /// The key names a password: its value is a secret, and after `KEY:` alone on its line
    /// it may be words (a passphrase) running to the end of the line.
    Password,
    /// The key names a secret (`TOKEN`, `API_KEY`, `client_secret`).
    Secret,
    /// The key may name a secret (`MISTRAL_KEY`, `AccountKey`, docker's `auth`): its value
    /// counts only when it looks random.
    Weak,
}

impl KeySecrecy {
    /// Returns whether `value`, already known not to be a reference or a literal, is taken
    /// as a secret after a key of this kind.
    fn accepts(self, value: &str) -> bool {
        self != KeySecrecy::Weak || looks_random(value)
    }
}

/// Returns whether a value looks like a generated secret: at least 8 bytes without blanks,
/// letters and digits mixed, and not a path.
fn looks_random(value: &str) -> bool {
    value.len() >= 8
        && !value.contains(char::is_whitespace)
        && !value.starts_with(['/', '~', '.'])
        && value.bytes().any(|byte| byte.is_ascii_digit())
        && value.bytes().any(|byte| byte.is_ascii_alphabetic())
}

/// Returns what an assignment key says about its value, or `None` when it names no secret.
///
/// The key is split into words (at `_`, `-`, `.` and case changes). A key holding a metadata
/// word (`token_count`, `password_file`, `secret_name`) names none. A password word, a word
/// ending in one (`PGPASSWORD`) or a password suffix after another word (`DB_PASS`) names a
/// password; a secret word or pair (`TOKEN`, `API_KEY`) a secret; any other `*_KEY` of
/// several words (`MISTRAL_KEY`, `AccountKey`) and a key ending in `auth` may name one.
/// `max_tokens` and `tokenizer` name nothing: `tokens` and `tokenizer` are other words.
fn key_secrecy(key: &str) -> Option<KeySecrecy> {
    let words = split_words(key);
    if words
        .iter()
        .any(|word| METADATA_WORDS.contains(&word.as_str()))
    {
        return None;
    }
    let is_password = |word: &String| {
        ["password", "passwd", "passphrase"]
            .iter()
            .any(|suffix| word.ends_with(suffix))
    };
    let last = words.last()?;
    if words.iter().any(is_password)
        || (words.len() >= 2 && PASSWORD_SUFFIXES.contains(&last.as_str()))
    {
        return Some(KeySecrecy::Password);
    }
    let is_secret = words
        .iter()
        .any(|word| SECRET_WORDS.contains(&word.as_str()))
        || words.windows(2).any(|pair| {
            SECRET_PAIRS
                .iter()
                .any(|&(first, second)| pair[0] == first && pair[1] == second)
        });
    if is_secret {
        return Some(KeySecrecy::Secret);
    }
    let is_plain_key = |qualifier: &String| PLAIN_KEY_QUALIFIERS.contains(&qualifier.as_str());
    match words.as_slice() {
        [.., qualifier, last] if last == "key" && !is_plain_key(qualifier) => {
            Some(KeySecrecy::Weak)
        }
        [.., last] if last == "auth" => Some(KeySecrecy::Weak),
        _ => None,
    }
}

/// Returns the lowercase words of an identifier: `OPENAI_API_KEY` -> `openai api key`,
/// `accessToken` -> `access token`, `APIKey` -> `api key`.
fn split_words(key: &str) -> Vec<String> {
    let characters: Vec<char> = key.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (idx, &character) in characters.iter().enumerate() {
        if !character.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if character.is_ascii_uppercase() && !word.is_empty() {
            let previous = characters[idx - 1];
            let is_next_lower = characters
                .get(idx + 1)
                .is_some_and(char::is_ascii_lowercase);
            if previous.is_ascii_lowercase()
                || previous.is_ascii_digit()
                || (previous.is_ascii_uppercase() && is_next_lower)
            {
                words.push(std::mem::take(&mut word));
            }
        }
        word.push(character.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks that redacting `input` gives `expected`, and that redacting again changes
    /// nothing.
    fn check(input: &str, expected: &str) {
        let redacted = redact(input);
        assert_eq!(redacted.text, expected, "input {input:?}");
        assert_eq!(
            redact(&redacted.text).text,
            redacted.text,
            "not idempotent on {input:?}"
        );
        for span in &redacted.spans {
            assert_eq!(
                &redacted.text[span.range.clone()],
                format!("[redacted: {}]", span.kind.as_str())
            );
        }
    }

    #[test]
    fn words_of_keys() {
        for (key, expected) in [
            ("OPENAI_API_KEY", vec!["openai", "api", "key"]),
            ("accessToken", vec!["access", "token"]),
            ("APIKey", vec!["api", "key"]),
            ("x-api-key", vec!["x", "api", "key"]),
            ("_authToken", vec!["auth", "token"]),
            ("max_tokens", vec!["max", "tokens"]),
            ("db.password", vec!["db", "password"]),
        ] {
            assert_eq!(split_words(key), expected, "{key}");
        }
    }

    #[test]
    fn secret_keys() {
        for (key, expected) in [
            ("PASSWORD", true),
            ("DB_PASSWORD", true),
            ("GITHUB_TOKEN", true),
            ("accessToken", true),
            ("OPENAI_API_KEY", true),
            ("apiKey", true),
            ("APIKEY", true),
            ("client_secret", true),
            ("aws_secret_access_key", true),
            ("x-api-key", true),
            ("Authorization", true),
            ("max_tokens", false),
            ("tokenizer", false),
            ("token_count", false),
            ("password_file", false),
            ("secret_name", false),
            ("public_key", false),
            ("KEY", false),
            ("PWD", false),
            ("author", false),
        ] {
            assert_eq!(key_secrecy(key).is_some(), expected, "{key}");
        }
    }

    #[test]
    fn the_cut_never_splits_a_marker_or_a_character() {
        let redacted = redact("ab ghp_0123456789abcdefghij0123456789abcdef é");
        assert_eq!(redacted.text, "ab [redacted: github-token] é");
        for (max_bytes, expected, n_spans) in [
            (0, "", 0),
            (3, "ab ", 0),
            (4, "ab ", 0),
            (26, "ab ", 0),
            (27, "ab [redacted: github-token]", 1),
            (28, "ab [redacted: github-token] ", 1),
            (29, "ab [redacted: github-token] ", 1),
            (30, "ab [redacted: github-token] é", 1),
            (99, "ab [redacted: github-token] é", 1),
        ] {
            let cut = redacted.cut(max_bytes);
            assert_eq!(cut.text, expected, "max {max_bytes}");
            assert_eq!(cut.spans.len(), n_spans, "max {max_bytes}");
            assert_eq!(cut.cut(max_bytes), cut, "max {max_bytes}");
        }
    }

    #[test]
    fn clean_strips_controls_before_redacting() {
        let cleaned = clean("key ghp_0123456789abcdef\u{1b}[0mghij0123456789abcdef \u{202e}x\r");
        assert_eq!(cleaned.text, "key [redacted: github-token] x");
    }

    #[test]
    fn counts_per_kind() {
        let redacted = redact(
            "AKIAIOSFODNN7EXAMPLE and AKIAI44QH8DHBEXAMPLE, token=abcdef123 https://u:p4ss@h",
        );
        let counts = redacted.counts();
        assert_eq!(counts.get(&SecretKind::AwsAccessKeyId), Some(&2));
        assert_eq!(counts.get(&SecretKind::SecretAssignment), Some(&1));
        assert_eq!(counts.get(&SecretKind::UrlPassword), Some(&1));
        assert_eq!(counts.values().sum::<u64>(), 4);
    }

    #[test]
    fn credentials_are_redacted() {
        for (input, expected) in [
            // Model providers.
            (
                "key sk-proj-Ab3dEf6hIj9kLmNoPqRsTuVwXyZ012345_678-9",
                "key [redacted: openai-api-key]",
            ),
            (
                "sk-abcdefghijklmnopqrstT3BlbkFJabcdefghijklmnopqrst",
                "[redacted: openai-api-key]",
            ),
            (
                "sk-ant-api03-AbCdEf0123456789_-AbCdEf0123456789AbCdEf-xyzAA",
                "[redacted: anthropic-api-key]",
            ),
            (
                "OPENROUTER sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "OPENROUTER [redacted: openrouter-api-key]",
            ),
            (
                "deepseek sk-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d",
                "deepseek [redacted: api-key]",
            ),
            (
                "AIzaSyA-1234567890abcdefghijklmnopqrstu",
                "[redacted: google-api-key]",
            ),
            (
                "ya29.a0AfH6SMBx1234567890abcdefghijklmn",
                "[redacted: google-oauth-token]",
            ),
            (
                "xai-AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789",
                "[redacted: xai-api-key]",
            ),
            (
                "gsk_AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789wxyz",
                "[redacted: groq-api-key]",
            ),
            (
                "pplx-AbCdEf0123456789AbCdEf0123456789AbCdEf012345",
                "[redacted: api-key]",
            ),
            (
                "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
                "[redacted: huggingface-token]",
            ),
            // Code hosts and chat.
            (
                "git clone https://ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/o/r",
                "git clone https://[redacted: github-token]@github.com/o/r",
            ),
            (
                "gho_0123456789abcdefghijABCDEFGHIJ012345",
                "[redacted: github-token]",
            ),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV",
                "[redacted: github-token]",
            ),
            ("glpat-AbCdEf0123456789xYz_", "[redacted: gitlab-token]"),
            (
                "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
                "[redacted: slack-token]",
            ),
            (
                "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now",
                "post to [redacted: slack-webhook] now",
            ),
            (
                "npm_AbCdEf0123456789AbCdEf0123456789AbCd",
                "[redacted: npm-token]",
            ),
            ("sk_live_AbCdEf0123456789AbCdEf01", "[redacted: stripe-key]"),
            // AWS.
            (
                "id AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "id [redacted: aws-access-key-id] secret [redacted: aws-secret-access-key]",
            ),
            ("ASIAY34FZKBOKMUTVV7A", "[redacted: aws-access-key-id]"),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key = [redacted: aws-secret-access-key]",
            ),
            (
                "PASSWORD = token wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "PASSWORD = [redacted: secret-assignment] wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            ),
            // Context that a redaction brings near: the second pass finds the secret key.
            (
                &format!(
                    "aws eyJhbGciOiJIUzI1NiJ9.eyJ{}.sig wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                    "a".repeat(100)
                ),
                "aws [redacted: jwt] [redacted: aws-secret-access-key]",
            ),
            // HTTP credentials and JWTs.
            (
                "Authorization: Bearer abcdef0123456789abcdef0123456789",
                "Authorization: Bearer [redacted: bearer-token]",
            ),
            (
                "curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='",
                "curl -H 'Authorization: Basic [redacted: basic-auth]'",
            ),
            (
                "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "Bearer [redacted: jwt]",
            ),
            // Private keys, terminated or cut.
            (
                "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\ndone",
                "key:\n[redacted: private-key]\ndone",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA",
                "[redacted: private-key]",
            ),
            (
                "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK----- ok",
                "[redacted: private-key] ok",
            ),
            // Passwords in URLs.
            (
                "DATABASE postgres://app:s3cr%40t@db.internal:5432/app",
                "DATABASE postgres://app:[redacted: url-password]@db.internal:5432/app",
            ),
            (
                "redis://:hunter2@cache:6379",
                "redis://:[redacted: url-password]@cache:6379",
            ),
            // Assignments whose key names a secret.
            (
                "export DB_PASSWORD=hunter2",
                "export DB_PASSWORD=[redacted: secret-assignment]",
            ),
            (
                "MY_SECRET=\"two words\" next",
                "MY_SECRET=\"[redacted: secret-assignment]\" next",
            ),
            (
                "OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLmNoPqRsTuVwXyZ012345 npm test",
                "OPENAI_API_KEY=[redacted: openai-api-key] npm test",
            ),
            (
                "PASSWORD=pre:ghp_0123456789abcdefghijABCDEFGHIJ012345",
                "PASSWORD=[redacted: github-token]",
            ),
            (
                "password: hunter2\nuser: me",
                "password: [redacted: secret-assignment]\nuser: me",
            ),
            (
                "  - api_key: abc123def,",
                "  - api_key: [redacted: secret-assignment],",
            ),
            (
                r#"{"apiKey": "abc 123", "accessToken":"tok-1"}"#,
                r#"{"apiKey": "[redacted: secret-assignment]", "accessToken":"[redacted: secret-assignment]"}"#,
            ),
            (
                "X-Api-Key: 0123abcd",
                "X-Api-Key: [redacted: secret-assignment]",
            ),
            (
                "curl 'https://x.test/cb?access_token=abc123&state=1'",
                "curl 'https://x.test/cb?access_token=[redacted: secret-assignment]&state=1'",
            ),
            (
                "password = Summer.2024",
                "password = [redacted: secret-assignment]",
            ),
            (
                "tool --password=hunter2 --verbose",
                "tool --password=[redacted: secret-assignment] --verbose",
            ),
            (
                "token := \"abc\"",
                "token := \"[redacted: secret-assignment]\"",
            ),
            (
                "client_secret = 'a\\'b' rest",
                "client_secret = '[redacted: secret-assignment]' rest",
            ),
        ] {
            check(input, expected);
        }
    }

    #[test]
    fn look_alikes_are_kept() {
        for input in [
            // Hashes, ids and digests.
            "commit 3f786850e387550fdab836ed7e6dc881de23001b",
            "git show 3f786850e387550fdab836ed7e6dc881de23001b:src/main.rs",
            "session 01a22b41-c0ec-73ac-b3e0-0959dd92f796",
            "uuid 123e4567-e89b-12d3-a456-426614174000",
            "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "md5 d41d8cd98f00b204e9800998ecf8427e",
            // Base64 that is not a key (a PNG header, a long blob).
            "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw",
            "data: aGVsbG8gd29ybGQgdGhpcyBpcyBub3QgYSBzZWNyZXQgYXQgYWxs",
            // The words in prose.
            "The token: it expires after an hour, so refresh it.",
            "Use a bearer token in the header; the secret is kept in the vault.",
            "The bearer of bad news",
            "We count tokens: max_tokens=4096 and token_count: 12",
            "Set the API key in your environment, never in code.",
            "the password_file: /run/secrets/db and secret_name: prod-db",
            // References, placeholders, types and code.
            "GITHUB_TOKEN=$GITHUB_TOKEN",
            "token: ${{ secrets.GITHUB_TOKEN }}",
            "\"apiKey\": \"<your key here>\"",
            "PASSWORD=********",
            "password: string;",
            "pub token: String,",
            "if token == expected {",
            "let token = get_token(&config);",
            "const API_KEY = process.env.API_KEY;",
            "let password = settings.db.password;",
            "api_key = os.environ[\"OPENAI_API_KEY\"]",
            "match kind { Token::Ident => 1 }",
            "has_password: false",
            // Prefixes without a key behind them.
            "scikit-learn, sk-learn, risk-assessment, desk-top-application-settings",
            "sk-this-is-a-long-hyphenated-slug-name",
            "AKIA is the prefix of AWS access key ids",
            "ghp_ is a GitHub prefix",
            "eyJ is base64 for {\"",
            "ssh://git@github.com/o/r.git and http://localhost:8080/path",
            "https://user@example.com/x",
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@host",
            "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        ] {
            check(input, input);
        }
    }

    /// Review M1 (issue 15): credential shapes the first rules missed.
    #[test]
    fn m1_more_credential_shapes_are_redacted() {
        for (input, expected) in [
            // Keys that end in a password word, or glue one on.
            (
                "PGPASSWORD=Zq8vLm3xR1 psql",
                "PGPASSWORD=[redacted: secret-assignment] psql",
            ),
            (
                "DB_PASS=hunter2xyz",
                "DB_PASS=[redacted: secret-assignment]",
            ),
            (
                "smtp_pass: Zq8vLm3xR1",
                "smtp_pass: [redacted: secret-assignment]",
            ),
            (
                "MYSQL_PWD=hunter2xyz",
                "MYSQL_PWD=[redacted: secret-assignment]",
            ),
            (
                "ADMIN_PW=Zq8vLm3xR1",
                "ADMIN_PW=[redacted: secret-assignment]",
            ),
            (
                "MYSQL_ROOT_PASSWORD=Zq8vLm3xR1",
                "MYSQL_ROOT_PASSWORD=[redacted: secret-assignment]",
            ),
            (
                "DB_HOST=localhost\nDB_PASS=Zq8vLm3xR1\nDB_USER=app",
                "DB_HOST=localhost\nDB_PASS=[redacted: secret-assignment]\nDB_USER=app",
            ),
            // Any `*_KEY` whose value looks random.
            (
                "MISTRAL_KEY=Zq8vLm3xR1abcdefghijklmnop",
                "MISTRAL_KEY=[redacted: secret-assignment]",
            ),
            (
                "export OPENAI_KEY=notaprefix0123456789abcdef",
                "export OPENAI_KEY=[redacted: secret-assignment]",
            ),
            (
                "Mistral_Key: Zq8vLm3xR1abc",
                "Mistral_Key: [redacted: secret-assignment]",
            ),
            (
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net",
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[redacted: secret-assignment];EndpointSuffix=core.windows.net",
            ),
            // Docker's config.json.
            (
                r#"{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcm5hbWU6cGFzc3dvcmQxMjM0NQ=="}}}"#,
                r#"{"auths":{"https://index.docker.io/v1/":{"auth":"[redacted: secret-assignment]"}}}"#,
            ),
            // A passphrase of words, to the end of its line.
            (
                "password: correct horse battery staple\nuser: me",
                "password: [redacted: secret-assignment]\nuser: me",
            ),
            (
                "  db_passphrase: correct horse battery staple  ",
                "  db_passphrase: [redacted: secret-assignment]  ",
            ),
            // A label alone on its line is read as the value, even when it is prose: a
            // passphrase cannot be told from a sentence by its shape.
            (
                "Password: please rotate it before Friday",
                "Password: [redacted: secret-assignment]",
            ),
            // Every authorization scheme.
            (
                "Authorization: Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b",
                "Authorization: Token [redacted: authorization]",
            ),
            (
                "-H 'authorization: token 0123456789abcdef0123456789abcdef01234567'",
                "-H 'authorization: token [redacted: authorization]'",
            ),
            (
                "Authorization: Bearer abcdefghijklmnopqrstuvwxyzABCDEF",
                "Authorization: Bearer [redacted: authorization]",
            ),
            (
                "Authorization: Bearer abcDEF123456ghiJKL789mno",
                "Authorization: Bearer [redacted: bearer-token]",
            ),
            (
                "Proxy-Authorization: Negotiate YIIGhgYGKwYBBQUCoIIGejCCBnagMDAu",
                "Proxy-Authorization: Negotiate [redacted: authorization]",
            ),
            // Slack app-level tokens.
            (
                "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef0123456789",
                "[redacted: slack-token]",
            ),
            // URL passwords holding `@` or `/`: the last `@` before the host ends them.
            (
                "postgres://admin:p4ss@word@db.example.com/app",
                "postgres://admin:[redacted: url-password]@db.example.com/app",
            ),
            (
                "https://user:ab/cd3f9@host.example.com/",
                "https://user:[redacted: url-password]@host.example.com/",
            ),
            (
                "mysql://u:p@ss/w0rd@db:3306/app?x=a@b",
                "mysql://u:[redacted: url-password]@db:3306/app?x=a@b",
            ),
        ] {
            check(input, expected);
        }
    }

    /// Review M1: what the wider rules must still leave alone.
    #[test]
    fn m1_look_alikes_are_kept() {
        for input in [
            "KEY_COUNT=3",
            "max_tokens=4096",
            "PRIMARY_KEY=id",
            "SORT_KEY=created_at",
            "PUBLIC_KEY=ssh-ed25519",
            "SSH_KEY=~/.ssh/id_ed25519",
            "KEY=value1234567",
            "PWD=/home/me/project2",
            "DB_PASS=$DB_PASS",
            "cache_key: 42",
            "auth: true",
            "\"auth\": {\"type\": \"oauth2\"}",
            "auth=required",
            "Token: please rotate it before Friday",
            "The password: it is in the vault",
            "passwordless login is fine",
            "Authorization: Bearer $TOKEN",
            "Authorization header, see the docs",
            "https://example.com:443/users/@alice/posts",
            "https://user@example.com/x@y",
            "git@github.com:org/repo.git",
            "SECRET_NAME=my-db-creds",
            "access_token_expires_in=3600",
            // The reviewer's false-positive set.
            "const apiKey = process.env.OPENAI_API_KEY;",
            "password: ${{ secrets.DB_PASSWORD }}",
            "I use the key: value syntax",
            "author: John Secret",
            "tokenizer=cl100k_base",
            "export PATH=/usr/bin:$PATH",
            "DATABASE_URL=postgres://localhost/db",
            "docker run -e TOKEN=$TOKEN image",
            "Token limit: 200000",
            "secret = None",
        ] {
            check(input, input);
        }
    }

    proptest::proptest! {
        /// Redaction never panics, keeps text valid, leaves no secret it found in place,
        /// and is idempotent, on text built from credential-like pieces.
        #[test]
        fn redaction_is_total_and_idempotent(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "ghp_0123456789abcdefghijABCDEFGHIJ012345", "AKIAIOSFODNN7EXAMPLE",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "Bearer ", "token", "=", ": ", "\"",
                "'", "\n", " ", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
                "https://u:", "@", "é", "日本", "[redacted: jwt]", "sk-", "abc123", "PASSWORD",
                "eyJhbGciOiJIUzI1NiJ9", ".", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", "\u{1b}[0m", "\u{202e}",
            ]), 0..24),
            noise in "[ -~é\n]{0,40}",
        ) {
            // Pieces are separated by spaces: a key glued to a word is another word.
            let mut input: String = pieces.join(" ");
            input.push(' ');
            input.push_str(&noise);
            let cleaned = clean(&input);
            proptest::prop_assert!(!cleaned.text.contains("ghp_0123456789abcdefghij"));
            proptest::prop_assert!(!cleaned.text.contains("AKIAIOSFODNN7EXAMPLE"));
            proptest::prop_assert_eq!(&clean(&cleaned.text).text, &cleaned.text);
            for span in &cleaned.spans {
                proptest::prop_assert!(cleaned.text[span.range.clone()].starts_with("[redacted: "));
            }
        }

        /// A cut is a prefix within the bound, on a character boundary, idempotent, and
        /// never splits a marker.
        #[test]
        fn cuts_stay_within_the_bound(
            text in "(ghp_0123456789abcdefghijABCDEFGHIJ012345|[a-zé日 ]){0,40}",
            max_bytes in 0usize..200,
        ) {
            let redacted = redact(&text);
            let cut = redacted.cut(max_bytes);
            proptest::prop_assert!(cut.text.len() <= max_bytes);
            proptest::prop_assert!(redacted.text.starts_with(&cut.text));
            proptest::prop_assert_eq!(cut.cut(max_bytes), cut.clone());
            // Only markers hold brackets here, so a split marker would leave a lone one.
            proptest::prop_assert_eq!(cut.text.matches('[').count(), cut.spans.len());
            proptest::prop_assert_eq!(cut.text.matches(']').count(), cut.spans.len());
            if redacted.text.len() <= max_bytes {
                proptest::prop_assert_eq!(&cut.text, &redacted.text);
            }
        }

        /// Arbitrary text never makes redaction panic, and redaction is idempotent on it.
        #[test]
        fn arbitrary_text(text in "\\PC{0,80}") {
            let once = clean(&text);
            proptest::prop_assert_eq!(&redact(&once.text).text, &once.text);
        }
    }
}
