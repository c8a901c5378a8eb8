//! Redaction of common credentials: each one found is replaced in place by
//! `[redacted: KIND]`, and the redactions are counted per kind.
//!
//! Detection is by shape, so it is best effort. What is found: API keys and tokens of the
//! major model providers and of GitHub, GitLab, Slack, npm (also `.npmrc`'s `_authToken=`,
//! `_auth=`, `_password=`), Stripe (`sk_live_`, `whsec_`), Google (`AIza`, `ya29.`,
//! `GOCSPX-`), SendGrid, DigitalOcean, Shopify, PyPI, Docker Hub, Vault, Twilio, Sentry,
//! Hugging Face and age; AWS access key ids and the secret keys written next to them; bearer
//! and basic credentials and the credential of an `Authorization` header in any scheme, key
//! headers (`X-API-Key:`, `PRIVATE-TOKEN:`, ...) and `Cookie:` headers; JWTs; private keys
//! (PEM blocks in four- or five-dash armour, unterminated or without their BEGIN line, bare
//! RSA, PKCS #8 and EC bodies without either line, OpenSSH bodies, PuTTY's private lines); Azure SAS signatures (`sig=`); passwords in URLs
//! (up to the last `@` before the host), on command lines (`mysql -pSECRET`,
//! `curl -u user:SECRET`, `sshpass -p SECRET`) and in prose after "password is" (quoted with blanks too); and the
//! values of `KEY=value` / `KEY: value` assignments whose key names a secret (`PASSWORD`,
//! `PGPASSWORD`, `DB_PASS`, `SECRET`, `TOKEN`, `API_KEY`, `accessToken`, ...; a
//! `KEY: pass phrase` alone on its line to the end of the line; JSON quoted inside a string,
//! `{\"password\":\"...\"}`) or may name one when the value looks random (`MISTRAL_KEY`,
//! Azure's `AccountKey`, docker's `"auth"`). [`clean_blocks`] also finds a token split
//! across two or more text blocks of a message, keeping the text around it as it was.
//!
//! The rules are one table: each carries a sample and what redacting it gives, and a test
//! checks every sample, so a rule is never without the text that proves it.
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
    /// A Google OAuth client secret (`GOCSPX-...`).
    GoogleOauthClientSecret,
    /// A SendGrid API key (`SG.<id>.<secret>`).
    SendgridApiKey,
    /// A DigitalOcean token (`dop_v1_`, `doo_v1_`, `dor_v1_`).
    DigitaloceanToken,
    /// A Shopify access token or shared secret (`shpat_`, `shpss_`, `shpca_`, `shppa_`).
    ShopifyToken,
    /// A PyPI upload token (`pypi-...`).
    PypiToken,
    /// A Docker Hub access token (`dckr_pat_`, `dckr_oat_`).
    DockerToken,
    /// A HashiCorp Vault token (`hvs.`, `hvb.`, `hvr.`).
    VaultToken,
    /// A Twilio API key SID (`SK` and 32 hex digits).
    TwilioApiKey,
    /// A Sentry auth token (`sntrys_`, `sntryu_`).
    SentryToken,
    /// An age encryption secret key (`AGE-SECRET-KEY-1...`).
    AgeSecretKey,
    /// The `sig=` of an Azure shared access signature.
    SasSignature,
    /// The value of a key header (`X-API-Key:`, `X-Auth-Token:`, `PRIVATE-TOKEN:`, ...).
    ApiKeyHeader,
    /// The cookies of a `Cookie:` or `Set-Cookie:` header.
    Cookie,
    /// A password on a command line (`mysql -pSECRET`, `curl -u user:SECRET`, `sshpass -p SECRET`).
    CommandLinePassword,
    /// A password written in prose after "password is".
    ProsePassword,
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
            SecretKind::GoogleOauthClientSecret => "google-oauth-client-secret",
            SecretKind::SendgridApiKey => "sendgrid-api-key",
            SecretKind::DigitaloceanToken => "digitalocean-token",
            SecretKind::ShopifyToken => "shopify-token",
            SecretKind::PypiToken => "pypi-token",
            SecretKind::DockerToken => "docker-token",
            SecretKind::VaultToken => "vault-token",
            SecretKind::TwilioApiKey => "twilio-api-key",
            SecretKind::SentryToken => "sentry-token",
            SecretKind::AgeSecretKey => "age-secret-key",
            SecretKind::SasSignature => "sas-signature",
            SecretKind::ApiKeyHeader => "api-key-header",
            SecretKind::Cookie => "cookie",
            SecretKind::CommandLinePassword => "command-line-password",
            SecretKind::ProsePassword => "prose-password",
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

impl Redacted {
    /// Returns the longest suffix of this text of at most `max_bytes` bytes that starts on a
    /// character boundary and outside every marker, with the markers it holds whole: the end
    /// of a command's output, where its error is.
    pub fn cut_tail(&self, max_bytes: usize) -> Redacted {
        if self.text.len() <= max_bytes {
            return self.clone();
        }
        let mut start = ceil_char_boundary(&self.text, self.text.len() - max_bytes);
        if let Some(span) = self
            .spans
            .iter()
            .find(|span| span.range.start < start && start < span.range.end)
        {
            start = span.range.end;
        }
        Redacted {
            text: self.text[start..].to_owned(),
            spans: self
                .spans
                .iter()
                .filter(|span| span.range.start >= start)
                .map(|span| RedactedSpan {
                    kind: span.kind,
                    range: span.range.start - start..span.range.end - start,
                })
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

/// Returns the text blocks of one message joined by newlines, each stripped as [`clean`]
/// strips, then redacted.
///
/// A model's reply can arrive in several text blocks with a token split between them
/// (`ghp_0123` | `4567...`, or over three blocks); joined by newlines, no piece has the shape
/// of a key. So the blocks are also glued without separators, and a credential of the glued
/// text that reaches across a junction is redacted whole, the newlines it spans included.
/// Everything outside such a token stays as the newline-joined text has it: a block's own
/// complete token followed by a word in the next block (`ghp_...` | `Done`) does not take
/// the word. The one junction left without its newline is where a credential starts the next
/// block and only the end of the previous one makes it one (`Bearer ` | `abc123...`): that
/// is one line cut in two.
pub fn clean_blocks<S: AsRef<str>>(blocks: &[S]) -> Redacted {
    let cleaned: Vec<String> = blocks
        .iter()
        .map(|block| sanitize_for_terminal(block.as_ref()).into_owned())
        .collect();
    if cleaned.len() < 2 {
        return redact(&cleaned.concat());
    }
    let glued = cleaned.concat();
    // Where each block but the last ends in the glued text.
    let junctions: Vec<usize> = cleaned[..cleaned.len() - 1]
        .iter()
        .scan(0, |end, block| {
            *end += block.len();
            Some(*end)
        })
        .collect();
    let glued_found = find(&glued);

    let all_newlines = Joining::new(&cleaned, &junctions, &[]);
    let all_seen = all_newlines.seen();
    let cut_lines: Vec<usize> = glued_found
        .iter()
        .filter(|found| {
            let range = found.range.clone();
            junctions.contains(&range.start)
                && all_newlines.crossed(&range).is_empty()
                && !glued[range.clone()].contains(char::is_whitespace)
                && !covers(&all_seen, &all_newlines.to_joined(&range))
        })
        .map(|found| found.range.start)
        .collect();

    let joining = Joining::new(&cleaned, &junctions, &cut_lines);
    let mut split: Vec<Found> = Vec::new();
    for found in glued_found {
        let mut range = found.range.clone();
        // A token is one word: a match holding a blank is prose that ran on into the next
        // block (a passphrase to the end of its line), not a split token.
        if glued[range.clone()].contains(char::is_whitespace) {
            continue;
        }
        // A whole credential that ran on into a plain word of the next block (`ghp_...` |
        // `Done`), or that a plain word of the previous block ran into, is the credential
        // alone: the word stays.
        if let Some(&last) = joining.crossed(&range).last()
            && is_plain_word(&glued[last..range.end])
            && is_whole_credential(&glued[range.start..last])
        {
            range.end = last;
        }
        if let Some(&first) = joining.crossed(&range).first()
            && is_plain_word(&glued[range.start..first])
            && is_whole_credential(&glued[first..range.end])
        {
            range.start = first;
        }
        if joining.crossed(&range).is_empty() {
            continue;
        }
        split.push(Found {
            range: joining.to_joined(&range),
            priority: found.priority,
            kind: found.kind,
        });
    }
    if split.is_empty() {
        return redact(&joining.text);
    }
    redact_further(rebuild(&joining.text, merge(split)))
}

/// The blocks of a message joined by a newline at each junction but the ones given, and how
/// an offset of the blocks glued without separators maps into it.
struct Joining {
    text: String,
    /// The glued offsets of the junctions that hold a newline, in order.
    newlines: Vec<usize>,
}

impl Joining {
    /// Returns the blocks joined by a newline at every junction not in `glued_at`.
    fn new(blocks: &[String], junctions: &[usize], glued_at: &[usize]) -> Self {
        let newlines: Vec<usize> = junctions
            .iter()
            .copied()
            .filter(|junction| !glued_at.contains(junction))
            .collect();
        let mut text = String::with_capacity(junctions.last().copied().unwrap_or(0) + 64);
        for (idx, block) in blocks.iter().enumerate() {
            if idx > 0 && newlines.contains(&junctions[idx - 1]) {
                text.push('\n');
            }
            text.push_str(block);
        }
        Joining { text, newlines }
    }

    /// Returns the ranges of the credentials the rules find in the joined text.
    fn seen(&self) -> Vec<Range<usize>> {
        find(&self.text)
            .into_iter()
            .map(|found| found.range)
            .collect()
    }

    /// Returns the newline junctions strictly inside a glued range.
    fn crossed(&self, range: &Range<usize>) -> &[usize] {
        &self.newlines[self.newlines.partition_point(|&j| j <= range.start)
            ..self.newlines.partition_point(|&j| j < range.end)]
    }

    /// Returns a glued range in the joined text: a start at a junction is after its newline,
    /// an end at one before it.
    fn to_joined(&self, range: &Range<usize>) -> Range<usize> {
        let start = range.start + self.newlines.partition_point(|&j| j <= range.start);
        let end = range.end + self.newlines.partition_point(|&j| j < range.end);
        start..end.max(start)
    }
}

/// Returns whether the rules find a credential that is all of `text`.
fn is_whole_credential(text: &str) -> bool {
    find(text)
        .iter()
        .any(|found| found.range == (0..text.len()))
}

/// Returns whether one of `ranges` holds all of `piece`.
fn covers(ranges: &[Range<usize>], piece: &Range<usize>) -> bool {
    ranges
        .iter()
        .any(|range| range.start <= piece.start && range.end >= piece.end)
}

/// Returns whether a piece of text reads as an ordinary word (`Done`, `next`, `OK`): a few
/// letters, cased as words are. A generated token's piece mixes cases or holds digits.
fn is_plain_word(piece: &str) -> bool {
    let letters = piece.bytes().all(|byte| byte.is_ascii_alphabetic());
    let tail_lower = piece.bytes().skip(1).all(|byte| byte.is_ascii_lowercase());
    let all_upper = piece.bytes().all(|byte| byte.is_ascii_uppercase());
    !piece.is_empty() && piece.len() <= 15 && letters && (tail_lower || all_upper)
}

/// Returns `text` with every credential the rules find replaced by `[redacted: KIND]`.
pub fn redact(text: &str) -> Redacted {
    redact_further(Redacted {
        text: text.to_owned(),
        spans: Vec::new(),
    })
}

/// Returns `redacted` with every credential the rules find outside its markers replaced too.
fn redact_further(mut redacted: Redacted) -> Redacted {
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
    for range in assignment_values(text).into_iter().chain(flag_values(text)) {
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
    /// A text the rule finds a credential in, and that text redacted.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read by the test that checks every rule's sample")
    )]
    sample: (&'static str, &'static str),
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
/// `${TOKEN}`, `<token>`, `%TOKEN%`, `****`) or already a `[redacted: KIND]` marker.
fn is_not_reference(text: &str, range: Range<usize>) -> bool {
    !text[range].starts_with(['$', '<', '{', '%', '*', '['])
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

static AWS_ACCESS_KEY_ID: LazyLock<Regex> = LazyLock::new(|| {
    compile(r"(?:\A|[^A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?:\z|[^A-Za-z0-9])")
});

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
/// rule's kind names the merged redaction. Each rule carries a sample text and what redacting
/// it gives, which a test checks for every rule: the table is its own proof.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |kind,
                pattern: &str,
                group,
                check: fn(&str, Range<usize>) -> bool,
                sample: (&'static str, &'static str)| Rule {
        kind,
        regex: compile(pattern),
        group,
        check,
        sample,
    };
    vec![
        // Four or five dashes, with or without a blank inside: PuTTY's SSH2 export writes
        // `---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`, and a copy often loses a dash.
        rule(
            SecretKind::PrivateKey,
            r"(?s)-{4,5} ?BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)? ?-{4,5}.*?(?:-{4,5} ?END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)? ?-{4,5}|\z)",
            0,
            always,
            (
                "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\ndone",
                "key:\n[redacted: private-key]\ndone",
            ),
        ),
        // A body whose BEGIN line was left out of the paste: base64 lines up to an END line.
        rule(
            SecretKind::PrivateKey,
            r"(?:[A-Za-z0-9+/=]{16,}[ \t]*\r?\n)+[ \t]*-{4,5} ?END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)? ?-{4,5}",
            0,
            always,
            (
                "tail of it:\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0\n-----END RSA PRIVATE KEY-----",
                "tail of it:\n[redacted: private-key]",
            ),
        ),
        // A bare key body, without its BEGIN and END lines: the DER of a private key starts
        // with a version number that a public key or a certificate does not have (RSA's and
        // PKCS #8's `30 82 .. .. 02 01 00`, EC's `30 77 02 01 01 04`, Ed25519's PKCS #8), so
        // its base64 starts in a way theirs never does.
        rule(
            SecretKind::PrivateKey,
            r"(?-u:\b)(?:MII[A-Za-z0-9+/]{2}[AQgw]IBA[AD]|MHcCAQEE|MC4CAQAwBQYDK2Vw|MIGHAgEAMBMGByqGSM49)[A-Za-z0-9+/=]*(?:\r?\n[A-Za-z0-9+/=]{8,})*",
            0,
            always,
            (
                "the key body:\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0\nthat is all",
                "the key body:\n[redacted: private-key]\nthat is all",
            ),
        ),
        // An OpenSSH key body: its base64 starts with the encoding of `openssh-key-v1`, which
        // nothing else does.
        rule(
            SecretKind::PrivateKey,
            r"b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]*(?:\r?\n[A-Za-z0-9+/=]{8,})*",
            0,
            always,
            (
                "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5 rest",
                "[redacted: private-key] rest",
            ),
        ),
        // PuTTY's `.ppk`: the lines after `Private-Lines: N`.
        rule(
            SecretKind::PrivateKey,
            r"(?m)Private-Lines:[ \t]*[0-9]+\r?\n(^[A-Za-z0-9+/=]+$(?:\n^[A-Za-z0-9+/=]+$)*)",
            1,
            always,
            (
                "Private-Lines: 2\nAAABAQCw3bQ7TmX2kZ9Yv\nAAAAgQDr8Lw==\nPrivate-MAC: 0a1b",
                "Private-Lines: 2\n[redacted: private-key]\nPrivate-MAC: 0a1b",
            ),
        ),
        rule(
            SecretKind::Jwt,
            r"(?-u:\b)eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
            0,
            always,
            (
                "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "Bearer [redacted: jwt]",
            ),
        ),
        rule(
            SecretKind::AnthropicApiKey,
            r"sk-ant-[A-Za-z0-9_-]{20,}",
            0,
            always,
            (
                "sk-ant-api03-AbCdEf0123456789_-AbCdEf0123456789AbCdEf-xyzAA",
                "[redacted: anthropic-api-key]",
            ),
        ),
        rule(
            SecretKind::OpenRouterApiKey,
            r"(?-u:\b)sk-or-v1-[A-Za-z0-9]{20,}",
            0,
            always,
            (
                "OPENROUTER sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "OPENROUTER [redacted: openrouter-api-key]",
            ),
        ),
        rule(
            SecretKind::OpenAiApiKey,
            r"(?-u:\b)sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|(?-u:\b)sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
            0,
            always,
            (
                "key sk-proj-Ab3dEf6hIj9kLmNoPqRsTuVwXyZ012345_678-9",
                "key [redacted: openai-api-key]",
            ),
        ),
        rule(
            SecretKind::ApiKey,
            r"(?-u:\b)(?:sk|pplx|csk|tvly)-[A-Za-z0-9]{20,}|(?-u:\b)(?:fw|r8)_[A-Za-z0-9]{20,}",
            0,
            has_digit,
            (
                "deepseek sk-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d",
                "deepseek [redacted: api-key]",
            ),
        ),
        rule(
            SecretKind::GoogleApiKey,
            r"(?-u:\b)AIza[0-9A-Za-z_-]{35,}",
            0,
            always,
            (
                "AIzaSyA-1234567890abcdefghijklmnopqrstu",
                "[redacted: google-api-key]",
            ),
        ),
        rule(
            SecretKind::GoogleOauthToken,
            r"(?-u:\b)ya29\.[0-9A-Za-z_-]{20,}",
            0,
            always,
            (
                "ya29.a0AfH6SMBx1234567890abcdefghijklmn",
                "[redacted: google-oauth-token]",
            ),
        ),
        rule(
            SecretKind::GoogleOauthClientSecret,
            r"(?-u:\b)GOCSPX-[A-Za-z0-9_-]{20,}",
            0,
            always,
            (
                "client_id=1.apps.googleusercontent.com secret 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",
                "client_id=1.apps.googleusercontent.com secret [redacted: google-oauth-client-secret]",
            ),
        ),
        rule(
            SecretKind::XaiApiKey,
            r"(?-u:\b)xai-[A-Za-z0-9]{20,}",
            0,
            has_digit,
            (
                "xai-AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789",
                "[redacted: xai-api-key]",
            ),
        ),
        rule(
            SecretKind::GroqApiKey,
            r"(?-u:\b)gsk_[A-Za-z0-9]{20,}",
            0,
            has_digit,
            (
                "gsk_AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789wxyz",
                "[redacted: groq-api-key]",
            ),
        ),
        rule(
            SecretKind::HuggingFaceToken,
            r"(?-u:\b)hf_[A-Za-z0-9]{30,}",
            0,
            has_digit,
            (
                "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
                "[redacted: huggingface-token]",
            ),
        ),
        rule(
            SecretKind::GithubToken,
            r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}",
            0,
            always,
            (
                "gho_0123456789abcdefghijABCDEFGHIJ012345",
                "[redacted: github-token]",
            ),
        ),
        rule(
            SecretKind::GitlabToken,
            r"(?-u:\b)gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}",
            0,
            always,
            ("glpat-AbCdEf0123456789xyzW", "[redacted: gitlab-token]"),
        ),
        rule(
            SecretKind::SlackToken,
            r"(?-u:\b)(?:xox[abposrce]|xapp)-[A-Za-z0-9-]{10,}",
            0,
            has_digit,
            (
                "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp",
                "[redacted: slack-token]",
            ),
        ),
        rule(
            SecretKind::SlackWebhook,
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+",
            0,
            always,
            (
                "post to https://hooks.slack.com/services/T0000/B0000/XXXXXXXX now",
                "post to [redacted: slack-webhook] now",
            ),
        ),
        rule(
            SecretKind::NpmToken,
            r"(?-u:\b)npm_[A-Za-z0-9]{36,}",
            0,
            always,
            (
                "npm_AbCdEf0123456789AbCdEf0123456789AbCd",
                "[redacted: npm-token]",
            ),
        ),
        // `.npmrc`: `//registry.example.com/:_authToken=...`, `_auth=` (base64 user:password)
        // and `_password=`; the `:` before the key keeps the assignment rule from seeing it.
        rule(
            SecretKind::NpmToken,
            r#"(?-u:\b)_(?:authToken|auth|password)[ \t]*=[ \t]*["']?([^\s"'`]+)"#,
            1,
            is_not_reference,
            (
                "//npm.pkg.github.com/:_authToken=f0e1d2c3-b4a5-9687-7869-5a4b3c2d1e0f",
                "//npm.pkg.github.com/:_authToken=[redacted: npm-token]",
            ),
        ),
        // The same keys set from the command line, the value after a blank:
        // `npm config set //registry.example.com/:_authToken SECRET`.
        rule(
            SecretKind::NpmToken,
            r#"(?-u:\b)(?:npm|pnpm|yarn)[ \t]+(?:config[ \t]+)?set[ \t]+[^\s]*_(?:authToken|auth|password)[ \t]+["']?([^\s"'`=]+)"#,
            1,
            is_not_reference,
            (
                "npm config set //npm.test/:_authToken f0e1d2c3b4a59687",
                "npm config set //npm.test/:_authToken [redacted: npm-token]",
            ),
        ),
        rule(
            SecretKind::StripeKey,
            r"(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{20,}",
            0,
            always,
            (
                "STRIPE whsec_0a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P and sk_live_0a1B2c3D4e5F6g7H8i9J0k1L",
                "STRIPE [redacted: stripe-key] and [redacted: stripe-key]",
            ),
        ),
        rule(
            SecretKind::SendgridApiKey,
            r"(?-u:\b)SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}",
            0,
            always,
            (
                "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",
                "[redacted: sendgrid-api-key]",
            ),
        ),
        rule(
            SecretKind::DigitaloceanToken,
            r"(?-u:\b)do[opr]_v1_[a-f0-9]{64}",
            0,
            always,
            (
                "doctl auth init -t dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "doctl auth init -t [redacted: digitalocean-token]",
            ),
        ),
        rule(
            SecretKind::ShopifyToken,
            r"(?-u:\b)shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
            0,
            always,
            (
                "X-Shopify-Access-Token shpat_0123456789abcdef0123456789abcdef",
                "X-Shopify-Access-Token [redacted: shopify-token]",
            ),
        ),
        rule(
            SecretKind::PypiToken,
            r"pypi-[A-Za-z0-9_-]{50,}",
            0,
            always,
            (
                "twine upload -p pypi-AgEIcHlwaS5vcmcCJDAxMjM0NTY3LTg5YWItY2RlZi0wMTIzLTQ1Njc4OWFiY2RlZgACKlszLCJ",
                "twine upload -p [redacted: pypi-token]",
            ),
        ),
        rule(
            SecretKind::DockerToken,
            r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}",
            0,
            always,
            (
                "docker login -u me -p dckr_pat_2b3c4d5e6f7g8h9i0j1k2l3m4n5",
                "docker login -u me -p [redacted: docker-token]",
            ),
        ),
        rule(
            SecretKind::VaultToken,
            r"(?-u:\b)hv[sbr]\.[A-Za-z0-9_-]{24,}",
            0,
            has_digit,
            (
                "VAULT hvs.CAESIJ0a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0",
                "VAULT [redacted: vault-token]",
            ),
        ),
        // Twilio API key SIDs: `SK` and 32 hex digits, a whole word (a longer hex run is a
        // digest, not a key).
        rule(
            SecretKind::TwilioApiKey,
            r"(?-u:\b)SK[0-9a-f]{32}(?-u:\b)",
            0,
            has_digit,
            (
                "TWILIO_SID SK0123456789abcdef0123456789abcdef",
                "TWILIO_SID [redacted: twilio-api-key]",
            ),
        ),
        rule(
            SecretKind::SentryToken,
            r"(?-u:\b)sntry[su]_[A-Za-z0-9+/=_-]{30,}",
            0,
            has_digit,
            (
                "SENTRY sntrys_eyJpYXQiOjE3MDAwMDAwMDAuMCwidXJsIjoiaHR0cHM6Ly9zZW50cnkuaW8ifQ",
                "SENTRY [redacted: sentry-token]",
            ),
        ),
        rule(
            SecretKind::AgeSecretKey,
            r"(?-u:\b)AGE-SECRET-KEY-1[0-9A-Z]{50,}",
            0,
            always,
            (
                "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ5",
                "[redacted: age-secret-key]",
            ),
        ),
        rule(
            SecretKind::AwsAccessKeyId,
            r"(?:\A|[^A-Z0-9])((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?:\z|[^A-Za-z0-9])",
            1,
            always,
            (
                "id AKIAIOSFODNN7EXAMPLE and a_AKIAIOSFODNN7EXAMPLE",
                "id [redacted: aws-access-key-id] and a_[redacted: aws-access-key-id]",
            ),
        ),
        rule(
            SecretKind::AwsSecretAccessKey,
            r"[A-Za-z0-9/+]+",
            0,
            is_aws_secret,
            (
                "aws secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws secret [redacted: aws-secret-access-key]",
            ),
        ),
        // The signature of an Azure shared access signature URL or connection string.
        rule(
            SecretKind::SasSignature,
            r"(?i)(?:[?&;]|(?-u:\b))sig=([A-Za-z0-9%+/=_-]{16,})",
            1,
            always,
            (
                "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=Zq8vLm3xR1%2Babc%2Fdef0123456789%3D&se=2026",
                "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=[redacted: sas-signature]&se=2026",
            ),
        ),
        rule(
            SecretKind::BearerToken,
            r"(?i)(?-u:\b)bearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)",
            1,
            has_digit,
            (
                "curl -H 'Authorization: Bearer abcDEF123456ghiJKL789mno'",
                "curl -H 'Authorization: Bearer [redacted: bearer-token]'",
            ),
        ),
        rule(
            SecretKind::BasicAuth,
            r"(?i)(?-u:\b)authorization[ \t]*:[ \t]*basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})",
            1,
            always,
            (
                "Authorization: Basic dXNlcjpwYXNzd29yZA==",
                "Authorization: Basic [redacted: basic-auth]",
            ),
        ),
        // After the two schemes above, so that their kinds name what both find.
        rule(
            SecretKind::Authorization,
            r#"(?i)(?-u:\b)authorization["']?[ \t]*[:=][ \t]*["']?[A-Za-z][A-Za-z0-9_-]*[ \t]+([^\s"'`,;\[][^\s"'`,;]{7,})"#,
            1,
            is_not_reference,
            (
                "Authorization: Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b",
                "Authorization: Token [redacted: authorization]",
            ),
        ),
        // Key headers anywhere in a line (`curl -H "X-API-Key: ..."`); alone on its line the
        // assignment rule finds them too.
        rule(
            SecretKind::ApiKeyHeader,
            r#"(?i)(?-u:\b)(?:x-api-key|api-key|x-auth-token|x-access-token|private-token|x-goog-api-key|x-shopify-access-token|ocp-apim-subscription-key)["']?[ \t]*:[ \t]*["']?([^\s"'`,;]{6,})"#,
            1,
            is_not_reference,
            (
                r#"curl -H "X-API-Key: 7f3a9c2e1b4d" https://api.test"#,
                r#"curl -H "X-API-Key: [redacted: api-key-header]" https://api.test"#,
            ),
        ),
        // A `Cookie:` or `Set-Cookie:` header: every cookie of it, since any may be a session.
        rule(
            SecretKind::Cookie,
            r#"(?i)(?-u:\b)(?:set-)?cookie["']?[ \t]*:[ \t]*["']?([^\s"'`;=]+=[^\r\n"'`]*)"#,
            1,
            is_not_reference,
            (
                "-H 'Cookie: session=9f8e7d6c5b4a; theme=dark'",
                "-H 'Cookie: [redacted: cookie]'",
            ),
        ),
        // Passwords given on a command line: `mysql -pSECRET` (glued: `-p SECRET` is a
        // database name), `curl -u user:password`, `sshpass -p SECRET`.
        rule(
            SecretKind::CommandLinePassword,
            r#"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb|mariadb-dump)(?:[ \t]+[^\s|;&]+)*?[ \t]+-p["']?([^\s"'|;&-][^\s"'|;&]*)"#,
            1,
            is_not_reference,
            (
                "mysql -u root -pS3cr3tPass app < dump.sql",
                "mysql -u root -p[redacted: command-line-password] app < dump.sql",
            ),
        ),
        rule(
            SecretKind::CommandLinePassword,
            r#"(?-u:\b)curl(?:[ \t]+[^\s|;&]+)*?[ \t]+(?:-u|--user)(?:[ \t]+|=)?["']?[^\s:"']*:([^\s"']+)"#,
            1,
            is_not_reference,
            (
                "curl -s -u admin:Zq8vLm3x https://ci.test/api",
                "curl -s -u admin:[redacted: command-line-password] https://ci.test/api",
            ),
        ),
        rule(
            SecretKind::CommandLinePassword,
            r#"(?-u:\b)sshpass(?:[ \t]+-[^p\s][^\s]*)*[ \t]+-p[ \t]*["']?([^\s"']+)"#,
            1,
            is_not_reference,
            (
                "sshpass -p 'hunter2!' ssh deploy@host",
                "sshpass -p '[redacted: command-line-password]' ssh deploy@host",
            ),
        ),
        // A registry login: `docker login -u me -p SECRET host` (podman, nerdctl, buildah,
        // skopeo, helm and oras take the same flags).
        rule(
            SecretKind::CommandLinePassword,
            r#"(?-u:\b)(?:docker|podman|nerdctl|buildah|skopeo|helm|oras)(?:[ \t]+[^\s|;&]+)*?[ \t]+login(?:[ \t]+[^\s|;&]+)*?[ \t]+-p(?:[ \t]+|=)["']?([^\s"'|;&-][^\s"'|;&]*)"#,
            1,
            is_not_reference,
            (
                "docker login -u ci -p Zq8vLm3x registry.test",
                "docker login -u ci -p [redacted: command-line-password] registry.test",
            ),
        ),
        // The password of a URL runs to the last `@` that a host (and an optional port)
        // follows, so a password holding `@` or `/` is redacted whole.
        rule(
            SecretKind::UrlPassword,
            r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>]*:([^\s?#"'<>]+)@[A-Za-z0-9._~%\[\]-]+(?::[0-9]+)?(?:[^A-Za-z0-9._~%@:-]|\z)"#,
            1,
            is_url_password,
            (
                "DATABASE postgres://app:s3cr%40t@db.internal:5432/app",
                "DATABASE postgres://app:[redacted: url-password]@db.internal:5432/app",
            ),
        ),
        // A password written in prose: "the password is hunter2", "my pw was Summer2024".
        // The word after `is` must not be one a sentence goes on with ("is in the vault").
        rule(
            SecretKind::ProsePassword,
            r#"(?i)(?-u:\b)(?:password|passphrase|passcode|passwd|pw|pin)(?:[ \t]+for[ \t]+[^\s]+)?[ \t]+(?:is|was):?[ \t]+(?:now[ \t]+|still[ \t]+|just[ \t]+|set[ \t]+to[ \t]+|literally[ \t]+)?["'`“]?([^\s"'`”]+?)["'`”]?(?:[.,;:!?)]*(?:\s|\z))"#,
            1,
            is_prose_password,
            (
                "the staging password is Tr0ub4dor&3, don't share it",
                "the staging password is [redacted: prose-password], don't share it",
            ),
        ),
        // A quoted password in prose is all that the quotes hold, blanks included (never a
        // bracket, so that a marker inside quotes is not taken for one).
        rule(
            SecretKind::ProsePassword,
            r#"(?i)(?-u:\b)(?:password|passphrase|passcode|passwd|pw|pin)(?:[ \t]+for[ \t]+[^\s]+)?[ \t]+(?:is|was):?[ \t]+(?:now[ \t]+|still[ \t]+|just[ \t]+|set[ \t]+to[ \t]+|literally[ \t]+)?["“`]([^"“”`\n\[\]]{1,80})["”`]"#,
            1,
            is_not_reference,
            (
                "the password is \"hunter two\" for now",
                "the password is \"[redacted: prose-password]\" for now",
            ),
        ),
    ]
});

/// Words that follow "password is" in a sentence about a password rather than before one.
const PROSE_PASSWORD_STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "in",
    "on",
    "at",
    "of",
    "to",
    "for",
    "from",
    "by",
    "with",
    "into",
    "my",
    "your",
    "our",
    "their",
    "his",
    "her",
    "its",
    "this",
    "that",
    "it",
    "same",
    "different",
    "not",
    "never",
    "also",
    "only",
    "too",
    "still",
    "now",
    "then",
    "correct",
    "incorrect",
    "wrong",
    "right",
    "invalid",
    "valid",
    "required",
    "optional",
    "needed",
    "empty",
    "blank",
    "missing",
    "set",
    "unset",
    "ok",
    "okay",
    "fine",
    "good",
    "bad",
    "weak",
    "strong",
    "long",
    "short",
    "expired",
    "stored",
    "kept",
    "saved",
    "hashed",
    "encrypted",
    "hidden",
    "masked",
    "shown",
    "sent",
    "changed",
    "reset",
    "rotated",
    "case",
    "sensitive",
    "being",
    "been",
    "what",
    "which",
    "whatever",
    "there",
    "here",
    "below",
    "above",
    "prompted",
    "asked",
    "given",
    "known",
    "unknown",
    "generated",
    "random",
    "none",
    "null",
    "nil",
    "redacted",
    "defined",
    "configured",
    "available",
    "used",
    "usually",
    "typically",
    "always",
    "just",
    "literally",
    "probably",
    "ignored",
    "accepted",
    "rejected",
    "checked",
    "compared",
    "validated",
    "very",
    "more",
    "less",
    "and",
    "or",
    "so",
    "as",
    "if",
    "when",
];

/// Returns whether the word after "password is" is written out rather than a word of the
/// sentence, a reference, a placeholder or a marker.
fn is_prose_password(text: &str, range: Range<usize>) -> bool {
    let candidate = &text[range];
    if !is_not_reference(candidate, 0..candidate.len()) {
        return false;
    }
    // A path is where a password is kept, not the password.
    if candidate.starts_with(['/', '~', '.']) {
        return false;
    }
    let lower = candidate.to_lowercase();
    let word = lower.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    !word.is_empty() && !PROSE_PASSWORD_STOPWORDS.contains(&word)
}

/// Finds the key and separator of an assignment; the value is read by hand after it.
static ASSIGNMENT_KEY: LazyLock<Regex> = LazyLock::new(|| {
    compile(r#"(?m)(?:^|[\s"'`{,(;?&-])([A-Za-z_][A-Za-z0-9_.-]{0,63})((?:\\?["'`])?)[ \t]*([=:])"#)
});

/// A text the assignment rule finds a secret in, and that text redacted.
#[cfg(test)]
const ASSIGNMENT_SAMPLE: (&str, &str) = (
    "export DB_PASSWORD=hunter2",
    "export DB_PASSWORD=[redacted: secret-assignment]",
);

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
        // `KEY: value` inside a line is prose as often as not ("the token: see below"): its
        // value is one word, taken only when it looks generated (`…; pwd: PwdVal321; …`).
        let is_inline_colon = is_colon && !is_key_quoted && !is_alone_on_line(text, key.start());
        if is_inline_colon {
            is_colon = false;
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
        // JSON quoted inside a string (`{\"password\":\"...\"}`): the value runs to the
        // next escaped quote of the same kind.
        let escaped_quote = ["\\\"", "\\'"]
            .into_iter()
            .find(|quote| rest.starts_with(quote));
        let range = if let Some(quote) = escaped_quote {
            let inner_start = value_start + quote.len();
            let inner_end = text[inner_start..line_end]
                .find(quote)
                .map_or(line_end, |offset| inner_start + offset);
            let value = &text[inner_start..inner_end];
            if !is_secret_value(value) || !secrecy.accepts(value) {
                continue;
            }
            inner_start..inner_end
        } else if matches!(first, '"' | '\'' | '`') {
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
        if is_inline_colon && !looks_random(&text[range.clone()]) {
            continue;
        }
        if !range.is_empty() {
            values.push(range);
        }
    }
    values
}

/// Finds a long command-line flag; the blank and the value after it are read by hand (the
/// match stops at the name, so the blank before the next flag is left for its match).
static FLAG_KEY: LazyLock<Regex> =
    LazyLock::new(|| compile(r#"(?m)(?:^|[\s"'`(;&|])--([A-Za-z][A-Za-z0-9-]{0,63})"#));

/// A text the flag rule finds a secret in, and that text redacted.
#[cfg(test)]
const FLAG_SAMPLE: (&str, &str) = (
    "gh auth login --with-token --access-token ghx_9f8e7d6c5b4a3210",
    "gh auth login --with-token --access-token [redacted: secret-assignment]",
);

/// Returns the ranges of the values of long flags whose name names a secret and whose value
/// follows after a blank: `--password hunter2!`, `--token 9f8e…`, `--client-secret "…"`.
/// (`--key=value` is an assignment.) Prose mentions a flag without a value ("pass
/// `--token` to it"), so a token-like flag's value counts only when it is long or looks
/// random, a password's only when it is not a word a sentence goes on with; `--no-password`
/// and `--password-stdin` take no value.
fn flag_values(text: &str) -> Vec<Range<usize>> {
    let mut values = Vec::new();
    for captures in FLAG_KEY.captures_iter(text) {
        let (Some(key), Some(whole)) = (captures.get(1), captures.get(0)) else {
            continue;
        };
        if key.as_str().starts_with("no-") {
            continue;
        }
        let Some(secrecy) = key_secrecy(key.as_str()) else {
            continue;
        };
        let after = &text[whole.end()..];
        let n_blank = after.len() - after.trim_start_matches([' ', '\t']).len();
        if n_blank == 0 {
            continue;
        }
        let value_start = whole.end() + n_blank;
        let rest = &text[value_start..];
        let Some(first) = rest.chars().next() else {
            continue;
        };
        let range = if matches!(first, '"' | '\'') {
            let line_end = rest.find('\n').unwrap_or(rest.len());
            let inner_start = value_start + 1;
            let Some(offset) = closing_quote(&text[inner_start..value_start + line_end], first)
            else {
                continue;
            };
            inner_start..inner_start + offset
        } else {
            let end = rest
                .find(|character: char| character.is_whitespace() || "\"'`&;|".contains(character))
                .unwrap_or(rest.len());
            value_start..value_start + rest[..end].trim_end_matches([',', ')']).len()
        };
        let value = &text[range.clone()];
        let is_plausible = match secrecy {
            KeySecrecy::Password => {
                value.chars().count() >= 4
                    && !PROSE_PASSWORD_STOPWORDS.contains(&value.to_lowercase().as_str())
            }
            KeySecrecy::Secret => value.len() >= 16 || looks_random(value),
            KeySecrecy::Weak => looks_random(value),
        };
        if value.starts_with('-')
            || !is_secret_value(value)
            || !is_plausible
            || is_member_access(value)
            || value.contains(['(', ')', '[', ']', '{', '}', '<', '>'])
        {
            continue;
        }
        values.push(range);
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
    "stdin",
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
    // Alone, `PWD` is the working directory and `pass` a verb: only a value that looks
    // generated is taken (`pwd: hunter2Secret`, never `PWD=/home/me`).
    if words.len() == 1 && PASSWORD_SUFFIXES.contains(&last.as_str()) {
        return Some(KeySecrecy::Weak);
    }
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

    /// Every rule of the table finds a credential in its own sample, and redacting the sample
    /// gives the text the rule says, with a marker of the rule's kind.
    #[test]
    fn every_rule_redacts_its_sample() {
        for (idx, rule) in RULES.iter().enumerate() {
            let (input, expected) = rule.sample;
            let is_found = rule
                .regex
                .captures_iter(input)
                .filter_map(|captures| captures.get(rule.group))
                .any(|secret| !secret.is_empty() && (rule.check)(input, secret.range()));
            assert!(
                is_found,
                "rule {idx} ({}) finds nothing in its sample {input:?}",
                rule.kind.as_str()
            );
            check(input, expected);
            assert!(
                redact(input)
                    .spans
                    .iter()
                    .any(|span| span.kind == rule.kind),
                "rule {idx}: no {} marker in {expected:?}",
                rule.kind.as_str()
            );
        }
        let (input, expected) = ASSIGNMENT_SAMPLE;
        assert_eq!(assignment_values(input).len(), 1, "{input:?}");
        check(input, expected);
        let (input, expected) = FLAG_SAMPLE;
        assert_eq!(flag_values(input).len(), 1, "{input:?}");
        check(input, expected);
    }

    /// Credential shapes written the ways people and tools write them, each with what the
    /// redacted text must be.
    const ADVERSARIAL: &[(&str, &str)] = &[
        // A flag's value after a blank, and registry logins.
        (
            "docker login -p hunter2Secret registry.example.com",
            "docker login -p [redacted: command-line-password] registry.example.com",
        ),
        (
            "docker login --password hunter2Secret registry.example.com",
            "docker login --password [redacted: secret-assignment] registry.example.com",
        ),
        (
            "curl --token abcdef1234567890 https://x.test",
            "curl --token [redacted: secret-assignment] https://x.test",
        ),
        (
            "vault login --password \"correct horse battery\" now",
            "vault login --password \"[redacted: secret-assignment]\" now",
        ),
        (
            "npm config set _authToken abc123def456ghi",
            "npm config set _authToken [redacted: npm-token]",
        ),
        ("pwd: hunter2Secret", "pwd: [redacted: secret-assignment]"),
        (
            "set it; pwd: PwdVal321 ; then the token: 9f8e7d6c5b4a3210 goes here",
            "set it; pwd: [redacted: secret-assignment] ; then the token: [redacted: secret-assignment] goes here",
        ),
        // Glued to a word, quoted with blanks, a key body without its armour.
        (
            "export X_AKIAIOSFODNN7EXAMPLE=1 and a_AKIAIOSFODNN7EXAMPLE",
            "export X_[redacted: aws-access-key-id]=1 and a_[redacted: aws-access-key-id]",
        ),
        (
            "my password is \"hunter two\" so type it",
            "my password is \"[redacted: prose-password]\" so type it",
        ),
        (
            "the wifi password is “correct horse battery”.",
            "the wifi password is “[redacted: prose-password]”.",
        ),
        (
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT\nend",
            "[redacted: private-key]\nend",
        ),
        (
            "pasted:\nMHcCAQEEIBYu7nBmOFuzG8hHNPQ0k9Yqn1Ks5Tr8cHq0Ls0Yd3q0oAoGCCqGSM49\nAwEHoUQDQgAE\n",
            "pasted:\n[redacted: private-key]\n",
        ),
        // Vendor prefixes.
        (
            "STRIPE_WEBHOOK_SECRET=whsec_AbC123dEf456GhI789jKl012MnO345pQ",
            "STRIPE_WEBHOOK_SECRET=[redacted: stripe-key]",
        ),
        (
            "stripe listen prints whsec_0123456789abcdefABCDEF0123456789 as the signing secret",
            "stripe listen prints [redacted: stripe-key] as the signing secret",
        ),
        (
            "rk_test_51H8abcDEF0123456789xyzXYZ",
            "[redacted: stripe-key]",
        ),
        (
            r#"{"client_secret":"GOCSPX-AbCdEf0123456789_-AbCdEf01"}"#,
            r#"{"client_secret":"[redacted: google-oauth-client-secret]"}"#,
        ),
        (
            "use 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 for the desktop app",
            "use [redacted: google-oauth-client-secret] for the desktop app",
        ),
        (
            "SENDGRID_API_KEY=SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg",
            "SENDGRID_API_KEY=[redacted: sendgrid-api-key]",
        ),
        (
            r#"-H "Authorization: Bearer SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg""#,
            r#"-H "Authorization: Bearer [redacted: sendgrid-api-key]""#,
        ),
        (
            "DIGITALOCEAN_ACCESS_TOKEN=doo_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "DIGITALOCEAN_ACCESS_TOKEN=[redacted: digitalocean-token]",
        ),
        (
            "the app secret is shpss_0123456789abcdef0123456789abcdef.",
            "the app secret is [redacted: shopify-token].",
        ),
        (
            "export SHOPIFY_TOKEN=shpat_0123456789ABCDEF0123456789abcdef",
            "export SHOPIFY_TOKEN=[redacted: shopify-token]",
        ),
        (
            "password = pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjAxLTIzNDUtNjc4OS1hYmNkLWVmMDEyMzQ1Njc4OQ",
            "password = [redacted: pypi-token]",
        ),
        (
            "echo dckr_pat_AbCdEf0123456789-_AbCdEf012 | docker login --password-stdin",
            "echo [redacted: docker-token] | docker login --password-stdin",
        ),
        (
            "export VAULT_TOKEN=hvs.CAESIAbCdEf0123456789AbCdEf0123456789",
            "export VAULT_TOKEN=[redacted: vault-token]",
        ),
        (
            "hvb.AAAAAQJ0a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p",
            "[redacted: vault-token]",
        ),
        (
            "client = Client('SK0123456789abcdef0123456789abcdef', secret)",
            "client = Client('[redacted: twilio-api-key]', secret)",
        ),
        (
            "SENTRY_AUTH_TOKEN=sntrys_eyJpYXQiOjE3MDAwMDAwMDAuMCwidXJsIjoiaHR0cHM6Ly9zZW50cnkuaW8ifQ_abc",
            "SENTRY_AUTH_TOKEN=[redacted: sentry-token]",
        ),
        (
            "# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\nAGE-SECRET-KEY-1QL3Z7HJY54PW3HYWW5AYYFG7ZQGVC7W3J2ELW8ZMRJ2KG5SFN9AQMCAC8P",
            "# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n[redacted: age-secret-key]",
        ),
        // Azure shared access signatures.
        (
            "SharedAccessSignature=sv=2022-11-02&ss=b&srt=sco&sp=rwdlac&se=2026-12-31T00:00:00Z&sig=AbCdEf0123456789%2FxYz%3D",
            "SharedAccessSignature=sv=2022-11-02&ss=b&srt=sco&sp=rwdlac&se=2026-12-31T00:00:00Z&sig=[redacted: sas-signature]",
        ),
        (
            "https://a.queue.core.windows.net/q?sig=abcDEF0123456789abcdef%3D&sv=2020",
            "https://a.queue.core.windows.net/q?sig=[redacted: sas-signature]&sv=2020",
        ),
        (
            r#""sasToken": "sv=2021-06-08&ss=bfqt&sig=9aBcD%2BeF0123456789gHiJ%3D""#,
            r#""sasToken": "[redacted: sas-signature]""#,
        ),
        // Headers.
        (
            "curl -H 'x-api-key: 3f9a2b7c4d1e' https://x.test",
            "curl -H 'x-api-key: [redacted: api-key-header]' https://x.test",
        ),
        (
            r#"headers = {"X-API-Key": "9b8c7d6e5f4a"}"#,
            r#"headers = {"X-API-Key": "[redacted: api-key-header]"}"#,
        ),
        (
            r#"curl --header "PRIVATE-TOKEN: 9koXpg98eAheJpvBs5tK" https://gitlab.test"#,
            r#"curl --header "PRIVATE-TOKEN: [redacted: api-key-header]" https://gitlab.test"#,
        ),
        (
            "X-Auth-Token: e1f2a3b4c5d6",
            "X-Auth-Token: [redacted: api-key-header]",
        ),
        (
            "Cookie: sessionid=abc123; csrftoken=xyz789",
            "Cookie: [redacted: cookie]",
        ),
        (
            "< Set-Cookie: __Host-sid=9f8e7d6c; Path=/; Secure; HttpOnly",
            "< Set-Cookie: [redacted: cookie]",
        ),
        (
            r#"headers: { cookie: "sid=s%3Aabc123.def" }"#,
            r#"headers: { cookie: "[redacted: cookie]" }"#,
        ),
        (
            "curl -H 'Cookie: _gh_sess=AbC123%3D%3D' https://github.test",
            "curl -H 'Cookie: [redacted: cookie]' https://github.test",
        ),
        // `.npmrc`.
        (
            "//registry.npmjs.org/:_authToken=npm_AbCdEf0123456789AbCdEf0123456789AbCd",
            "//registry.npmjs.org/:_authToken=[redacted: npm-token]",
        ),
        ("_auth=dXNlcjpwYXNzd29yZA==", "_auth=[redacted: npm-token]"),
        (
            "//reg.example.com/:_password=aHVudGVyMg==",
            "//reg.example.com/:_password=[redacted: npm-token]",
        ),
        (
            "@corp:registry=https://npm.corp.test/\n//npm.corp.test/:_authToken=\"0f1e2d3c-4b5a\"",
            "@corp:registry=https://npm.corp.test/\n//npm.corp.test/:_authToken=\"[redacted: npm-token]\"",
        ),
        // Passwords on command lines.
        (
            "mysql -h db -u app -pZq8vLm3x app_db",
            "mysql -h db -u app -p[redacted: command-line-password] app_db",
        ),
        (
            "mysqldump -uroot -p'hunter2' --all-databases",
            "mysqldump -uroot -p'[redacted: command-line-password]' --all-databases",
        ),
        (
            "docker exec db mysql -uroot -pRootPass123 -e 'SHOW DATABASES'",
            "docker exec db mysql -uroot -p[redacted: command-line-password] -e 'SHOW DATABASES'",
        ),
        (
            "mysql --password=Zq8vLm3x",
            "mysql --password=[redacted: secret-assignment]",
        ),
        (
            "curl -u deploy:Tr0ub4dor https://ci.example.com",
            "curl -u deploy:[redacted: command-line-password] https://ci.example.com",
        ),
        (
            "curl --user=ci:s3cr3t-Pass -X POST https://x.test",
            "curl --user=ci:[redacted: command-line-password] -X POST https://x.test",
        ),
        (
            r#"curl -u "admin:p4ss" https://x.test"#,
            r#"curl -u "admin:[redacted: command-line-password]" https://x.test"#,
        ),
        (
            "curl -fsSL -u bot:ghp_0123456789abcdefghijABCDEFGHIJ012345 https://api.github.com | jq",
            "curl -fsSL -u bot:[redacted: github-token] https://api.github.com | jq",
        ),
        (
            "sshpass -p Zq8vLm3x ssh user@host",
            "sshpass -p [redacted: command-line-password] ssh user@host",
        ),
        (
            "sshpass -v -p\"pa55word\" scp f host:",
            "sshpass -v -p\"[redacted: command-line-password]\" scp f host:",
        ),
        // JSON quoted inside text.
        (
            r#"body: "{\"password\":\"hunter2\",\"user\":\"me\"}""#,
            r#"body: "{\"password\":\"[redacted: secret-assignment]\",\"user\":\"me\"}""#,
        ),
        (
            r#"{\"token\":\"tok_9f8e7d6c5b4a\"}"#,
            r#"{\"token\":\"[redacted: secret-assignment]\"}"#,
        ),
        (
            r#"{\"id_token\":\"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig123\"}"#,
            r#"{\"id_token\":\"[redacted: jwt]\"}"#,
        ),
        (
            r#"'{\'apiKey\': \'a1b2c3d4e5\'}'"#,
            r#"'{\'apiKey\': \'[redacted: secret-assignment]\'}'"#,
        ),
        // Private keys without their BEGIN line, or in other armour.
        (
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3S\n----END PRIVATE KEY----",
            "[redacted: private-key]",
        ),
        (
            "----BEGIN RSA PRIVATE KEY----\nMIIEowIBAAKCAQEA\n----END RSA PRIVATE KEY----\nthen",
            "[redacted: private-key]\nthen",
        ),
        (
            "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"k\"\nP2/56wAAA\n---- END SSH2 ENCRYPTED PRIVATE KEY ----",
            "[redacted: private-key]",
        ),
        (
            "key: |\n  -----BEGIN EC PRIVATE KEY-----\n  MHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\n  -----END EC PRIVATE KEY-----",
            "key: |\n  [redacted: private-key]",
        ),
        (
            "b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABD",
            "[redacted: private-key]",
        ),
        // Passwords in prose.
        (
            "my password is hunter2",
            "my password is [redacted: prose-password]",
        ),
        (
            "The root password is Zq8vLm3x.",
            "The root password is [redacted: prose-password].",
        ),
        (
            "the wifi password is \"correct-horse\" btw",
            "the wifi password is \"[redacted: prose-password]\" btw",
        ),
        (
            "password for admin is S3cure",
            "password for admin is [redacted: prose-password]",
        ),
        ("the PIN is 4921", "the PIN is [redacted: prose-password]"),
        (
            "new password is now Summer2024, tell Bob",
            "new password is now [redacted: prose-password], tell Bob",
        ),
        (
            "The password was set to hunter2 yesterday",
            "The password was set to [redacted: prose-password] yesterday",
        ),
        (
            "Password is: swordfish",
            "Password is: [redacted: prose-password]",
        ),
        (
            "TWILIO_API_KEY=SK0123456789abcdef0123456789abcdef",
            "TWILIO_API_KEY=[redacted: twilio-api-key]",
        ),
        (
            "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2020-08-04&sig=QmFzZTY0U2lnbmF0dXJlMDEy%3D",
            "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2020-08-04&sig=[redacted: sas-signature]",
        ),
        (
            "wget --header='X-API-Key: 5e6f7a8b9c0d' https://x.test",
            "wget --header='X-API-Key: [redacted: api-key-header]' https://x.test",
        ),
        // Glued to other text or nested in markup.
        (
            "<value>ghp_0123456789abcdefghijABCDEFGHIJ012345</value>",
            "<value>[redacted: github-token]</value>",
        ),
        (
            "token=`glpat-AbCdEf0123456789xyzW`",
            "token=`[redacted: gitlab-token]`",
        ),
        ("(AKIAIOSFODNN7EXAMPLE)", "([redacted: aws-access-key-id])"),
        (
            "key=AIzaSyA-1234567890abcdefghijklmnopqrstu&q=1",
            "key=[redacted: google-api-key]&q=1",
        ),
    ];

    #[test]
    fn adversarial_shapes_are_redacted() {
        for (input, expected) in ADVERSARIAL {
            check(input, expected);
        }
    }

    /// A token split across two text blocks of one message, checked with [`clean_blocks`].
    #[test]
    fn a_token_split_across_blocks_is_redacted_whole() {
        for (blocks, expected) in [
            (
                vec!["push with ghp_0123456789abcdefghij", "ABCDEFGHIJ012345 now"],
                "push with [redacted: github-token] now",
            ),
            (
                vec![
                    "key sk-ant-api03-AbCdEf0123",
                    "456789_-AbCdEf0123456789AbCd done",
                ],
                "key [redacted: anthropic-api-key] done",
            ),
            (
                vec!["AKIAIOSFOD", "NN7EXAMPLE"],
                "[redacted: aws-access-key-id]",
            ),
            (
                vec!["Authorization: Bearer ", "abcDEF123456ghiJKL789mno"],
                "Authorization: Bearer [redacted: bearer-token]",
            ),
            (
                vec!["a", "ghp_0123456789abcde", "fghijABCDEFGHIJ012345", "b"],
                "a\n[redacted: github-token]\nb",
            ),
            (vec!["first part", "second part"], "first part\nsecond part"),
            (
                vec!["password: hunter2", "Next I run the tests"],
                "password: [redacted: secret-assignment]\nNext I run the tests",
            ),
            (
                vec!["ghp_0123456789abcdefghijABCDEFGHIJ012345", ""],
                "[redacted: github-token]\n",
            ),
            (
                vec!["use ghp_01234567", "89abcdefghijABCD", "EFGHIJ012345 now"],
                "use [redacted: github-token] now",
            ),
            (
                vec![
                    "token ghp_0123456789abcdefghijABCDEFGHIJ012345",
                    "Done with it",
                ],
                "token [redacted: github-token]\nDone with it",
            ),
            (
                vec!["see ghp_0123456789abcdefghijABCDEFGHIJ012345", "next line"],
                "see [redacted: github-token]\nnext line",
            ),
            (
                vec![
                    "first line\nghp_0123456789",
                    "abcdefghijABCDEFGHIJ012345\nlast line",
                ],
                "first line\n[redacted: github-token]\nlast line",
            ),
            (vec!["one", "two", "three"], "one\ntwo\nthree"),
        ] {
            let cleaned = clean_blocks(&blocks);
            assert_eq!(cleaned.text, expected, "{blocks:?}");
            assert_eq!(clean(&cleaned.text).text, cleaned.text, "{blocks:?}");
        }
    }

    /// Text that looks like a credential and is not one stays as it is.
    const LOOK_ALIKES: &[&str] = &[
        "https://github.com/o/r/commit/3f786850e387550fdab836ed7e6dc881de23001b",
        "https://cdn.example.com/app.9f86d081884c7d65.js",
        "docker pull ghcr.io/o/img@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "\"integrity\": \"sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==\"",
        "https://example.com/tarball.tgz#sha1=3f786850e387550fdab836ed7e6dc881de23001b",
        "cherry-pick 3f78685 and 01a22b41-c0ec-73ac-b3e0-0959dd92f796",
        "SK3f786850e387550fdab836ed7e6dc881de23001b",
        "AC0123456789abcdef0123456789abcdef",
        "SKU 12345 and SG.ORIGIN and hvs.short and dop_v1_abc",
        "pip install pypi-server; GOCSPX is Google's prefix; whsec_ starts a webhook secret",
        "https://example.com/design=modern&signature_method=HMAC",
        "The cookie: it is a small file",
        "Set the Cookie: header yourself",
        "Cookie: <session cookie>",
        "x-api-key: ${API_KEY}",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
        "mysql -u root -p app",
        "mysql -P 3306 -h db -u app -p",
        "curl -u admin https://x.test",
        "curl -u \"$USER:$PASS\" https://x.test",
        "sshpass -f ~/.sshpass ssh host",
        "the password is in the vault",
        "the password is wrong, try again",
        "your password is required",
        "the password is stored in 1Password",
        "the password is case sensitive",
        "the pin is set",
        "spin is 3, pwd is /home/me and the pw is ~/.pw",
        "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n----END CERTIFICATE----",
        "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\nRTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0",
        "git show 3f786850e387550fdab836ed7e6dc881de23001b and 3f78685",
        "id 01a22b41-c0ec-73ac-b3e0-0959dd92f796 in https://example.com/blob/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08/x",
        "ASIAN food and AKIA alone and XAKIAIOSFODNN7EXAMPLEX",
        "the password is \"\" and the password is `$DB_PASSWORD`",
        "pass --token to it, or --password when asked",
        "docker login --password-stdin registry.test and psql --no-password app",
        "run with --token $GH_TOKEN or --api-key \"$KEY\" or --secret-file ~/.s",
        "PWD=/home/me/project and pwd: /tmp/x",
        "the password: see the vault, and the token: ask Sam",
    ];

    #[test]
    fn look_alikes_stay() {
        for input in LOOK_ALIKES {
            check(input, input);
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
            ("author", false),
        ] {
            assert_eq!(key_secrecy(key).is_some(), expected, "{key}");
        }
        // Alone, a password suffix is a weak key: only a generated-looking value counts.
        for key in ["PWD", "pass", "pw"] {
            assert_eq!(key_secrecy(key), Some(KeySecrecy::Weak), "{key}");
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
    fn the_tail_cut_never_splits_a_marker_or_a_character() {
        let redacted = redact("é ghp_0123456789abcdefghij0123456789abcdef ab");
        assert_eq!(redacted.text, "é [redacted: github-token] ab");
        for (max_bytes, expected, n_spans) in [
            (0, "", 0),
            (3, " ab", 0),
            (4, " ab", 0),
            (27, "[redacted: github-token] ab", 1),
            (28, " [redacted: github-token] ab", 1),
            (29, " [redacted: github-token] ab", 1),
            (30, "é [redacted: github-token] ab", 1),
        ] {
            let cut = redacted.cut_tail(max_bytes);
            assert_eq!(cut.text, expected, "max {max_bytes}");
            assert_eq!(cut.spans.len(), n_spans, "max {max_bytes}");
            for span in &cut.spans {
                assert_eq!(&cut.text[span.range.clone()], "[redacted: github-token]");
            }
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
                "X-Api-Key: [redacted: api-key-header]",
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

    /// Credential shapes that key names and schemes beyond the plain ones carry.
    #[test]
    fn more_credential_shapes_are_redacted() {
        for (input, expected) in [
            // A token glued to a word: its prefix and length are distinctive enough.
            (
                "cat cfg/token_ghp_16C7e42F292c6925E7a3b5f9c8d1e0f2a4b6.txt",
                "cat cfg/token_[redacted: github-token].txt",
            ),
            (
                "pre_whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                "pre_[redacted: stripe-key]",
            ),
            (
                "my_dckr_pat_2b3c4d5e6f7g8h9i0j1k2l3m4n5",
                "my_[redacted: docker-token]",
            ),
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

    /// What the wider key-name rules must still leave alone.
    #[test]
    fn wider_rule_look_alikes_are_kept() {
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
            // Code and prose that name a secret without holding one.
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
                "whsec_", "GOCSPX-", "mysql", "-p", "curl", "-u", "sshpass", "\\\"", "sig=", "&",
                "Cookie:", "X-API-Key:", "_authToken=", "password is", "----END PRIVATE KEY----",
                "----BEGIN RSA PRIVATE KEY----", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "SK",
                "0123456789abcdef0123456789abcdef", "hvs.", "dckr_pat_", "Private-Lines: 1",
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

        /// Blocks joined by [`clean_blocks`] give a text that redacting again leaves as it is,
        /// and a token split anywhere between two blocks is never shown in part.
        #[test]
        fn split_blocks_are_total_and_idempotent(
            blocks in proptest::collection::vec("(ghp_0123456789|abcdefghij|ABCDEFGHIJ012345|[ a-z=:é\n]){0,6}", 0..5),
            split in 1usize..40,
        ) {
            let cleaned = clean_blocks(&blocks);
            proptest::prop_assert_eq!(&clean(&cleaned.text).text, &cleaned.text);
            let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
            let (left, right) = token.split_at(split);
            let split_blocks = [format!("see {left}"), format!("{right} ok")];
            let cleaned = clean_blocks(&split_blocks);
            proptest::prop_assert_eq!(cleaned.text, "see [redacted: github-token] ok");
        }

        /// Arbitrary text never makes redaction panic, and redaction is idempotent on it.
        #[test]
        fn arbitrary_text(text in "\\PC{0,80}") {
            let once = clean(&text);
            proptest::prop_assert_eq!(&redact(&once.text).text, &once.text);
        }
    }
}
