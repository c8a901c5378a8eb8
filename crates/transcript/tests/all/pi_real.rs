//! Agreement with the real Pi: every session file in `fixtures/pi-real/sessions/` was written
//! by Pi 1.6.0, and `fixtures/pi-real/expected.json` holds what Pi's own `SessionManager`
//! reports for it. For every file, our parse must report the same values, field by field.
//!
//! The corpus and the expected values are committed, so this test never needs Node. See
//! `fixtures/pi-real/README.md` for how both are regenerated.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pi_retrospect_transcript::{ContextMessageKind, EntryKind, Role, Transcript, facts, labels};
use serde_json::{Value, json};

use common::{jsonl, other, parse, user};

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi-real")
}

fn load_expected() -> Value {
    let path = fixture_root().join("expected.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("parsing {}: {error}", path.display()))
}

/// Returns Pi's name for the role of a model-visible message we built.
fn context_role<'a>(kind: &ContextMessageKind<'a>) -> &'a str {
    match kind {
        ContextMessageKind::Message(role) => role.as_str(),
        // Pi's compaction yields its stored `systemMessage` (role `system`) then the summary.
        ContextMessageKind::CompactionSystemCheckpoint => "system",
        ContextMessageKind::CompactionSummary => "compactionSummary",
        ContextMessageKind::BranchSummary => "branchSummary",
        // Pi's `createCustomMessage` gives `custom_message` entries the role `custom`.
        ContextMessageKind::CustomMessage => "custom",
    }
}

fn counts_by_role<'a>(session: &'a Transcript, indices: impl Iterator<Item = usize>) -> Value {
    let mut counts: BTreeMap<&'a str, u64> = BTreeMap::new();
    for idx in indices {
        if let Some(role) = session.entry(idx).role() {
            *counts.entry(role.as_str()).or_default() += 1;
        }
    }
    json!(counts)
}

fn handles(session: &Transcript, indices: &[usize]) -> Value {
    json!(
        indices
            .iter()
            .map(|&idx| session.entry(idx).handle())
            .collect::<Vec<_>>()
    )
}

/// Returns Pi's `firstMessage` as our facts store it: whitespace folded, cut to 240 characters.
/// Pi shows `(no messages)` when no user message has text; we have `None` then.
fn first_message_as_ours(pi_first_message: &Value) -> Value {
    match pi_first_message.as_str() {
        Some("(no messages)") | None => Value::Null,
        Some(text) => {
            let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
            json!(folded.chars().take(240).collect::<String>())
        }
    }
}

/// Returns our values for one file, keyed by the field names of `expected.json`.
fn our_values(session: &Transcript, staging_root: &str) -> BTreeMap<&'static str, Value> {
    let header = session.header().expect("a Pi-written file has a header");
    let facts = facts(session).expect("facts decode");
    let branch = session.active_branch();
    let context = session.context();
    let ids: Vec<usize> = (0..session.entries().len()).collect();
    let parent_session_key = header.parent_session.as_deref().map(|path| {
        path.strip_prefix(staging_root)
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(path)
            .to_owned()
    });
    let labels: BTreeMap<String, String> = labels(session).into_iter().collect();
    let model = context
        .model
        .as_ref()
        .map(|model| json!({ "provider": model.provider, "modelId": model.model }));
    let n_messages: u64 = facts.messages_by_role.values().sum();
    let mut values = BTreeMap::new();
    values.insert("version", json!(header.version));
    values.insert("headerId", json!(header.id));
    values.insert("cwd", json!(header.cwd));
    values.insert("entryCount", json!(session.entries().len()));
    values.insert("entryIds", handles(session, &ids));
    values.insert(
        "entryTypes",
        json!(
            session
                .entries()
                .iter()
                .map(|entry| entry.entry_type)
                .collect::<Vec<_>>()
        ),
    );
    values.insert(
        "leafId",
        json!(session.leaf().map(|leaf| session.entry(leaf).handle())),
    );
    values.insert("activeBranchIds", handles(session, &branch));
    values.insert("sessionName", json!(facts.name));
    values.insert("messageCountsByRole", json!(facts.messages_by_role));
    values.insert(
        "activeBranchMessageCountsByRole",
        counts_by_role(session, branch.iter().copied()),
    );
    values.insert("contextEntryIds", handles(session, &context.entries));
    values.insert(
        "contextMessageRoles",
        json!(
            context
                .messages
                .iter()
                .map(|message| context_role(&message.kind))
                .collect::<Vec<_>>()
        ),
    );
    // Pi reports `off` when no `thinking_level_change` is on the branch; we keep `None` for
    // "never recorded" (a CLI can tell the two apart) and map it here.
    values.insert(
        "contextThinkingLevel",
        json!(context.thinking_level.unwrap_or("off")),
    );
    values.insert("contextModel", json!(model));
    values.insert("labels", json!(labels));
    values.insert("parentSession", json!(header.parent_session));
    values.insert("parentSessionKey", json!(parent_session_key));
    values.insert("listInfo.id", json!(facts.session_id));
    values.insert("listInfo.name", json!(facts.name));
    values.insert("listInfo.messageCount", json!(n_messages));
    values.insert("listInfo.firstMessage", json!(facts.first_user_message));
    values.insert("listInfo.parentSessionPath", json!(header.parent_session));
    values
}

/// Returns Pi's value of `field` (a top-level key or `listInfo.<key>`) in our vocabulary.
fn pi_value(expected: &Value, field: &str) -> Value {
    match field.strip_prefix("listInfo.") {
        Some("firstMessage") => first_message_as_ours(&expected["listInfo"]["firstMessage"]),
        Some(key) => expected["listInfo"][key].clone(),
        None if field == "contextMessageRoles" => model_visible_roles(expected),
        None => expected[field].clone(),
    }
}

/// Returns Pi's context roles without the messages marked `excludeFromContext` (a `!!`
/// command), which Pi's `convertToLlm` drops before the model call and our context leaves out
/// already: the deliberate difference "excluded bash execution is not model-visible" below.
fn model_visible_roles(expected: &Value) -> Value {
    let roles = expected["contextMessageRoles"].as_array().expect("roles");
    let Some(excluded) = expected["contextMessageExcluded"].as_array() else {
        return Value::Array(roles.clone());
    };
    assert_eq!(roles.len(), excluded.len(), "one flag per context message");
    let visible = roles
        .iter()
        .zip(excluded)
        .filter(|(_, is_excluded)| **is_excluded != Value::Bool(true))
        .map(|(role, _)| role.clone());
    Value::Array(visible.collect())
}

#[test]
fn agrees_with_pi_on_every_real_session_file() {
    let expected = load_expected();
    assert_eq!(
        expected["pi"]["@earendil-works/pi-coding-agent"], "1.6.0",
        "expected.json was generated by another Pi version"
    );
    let staging_root = expected["stagingSessionsRoot"]
        .as_str()
        .expect("stagingSessionsRoot");
    let files = expected["files"].as_object().expect("files");
    assert!(files.len() >= 7, "the corpus lost files: {}", files.len());
    let sessions_root = fixture_root().join("sessions");
    let mut mismatches = Vec::new();
    for (key, pi) in files {
        let path = sessions_root.join(key);
        let session =
            Transcript::open(&path).unwrap_or_else(|error| panic!("opening {key}: {error}"));
        let role = pi["role"].as_str().unwrap_or("?");

        // Well-formed files written by Pi parse without a single warning, and the context
        // rebuild (compaction `firstKeptEntryId` lookups included) finds nothing to report.
        let warnings: Vec<_> = session
            .warnings()
            .iter()
            .chain(&session.context().warnings)
            .map(|warning| format!("{:?}: {}", warning.kind, warning.message))
            .collect();
        if !warnings.is_empty() {
            mismatches.push(format!("{key} ({role}): unexpected warnings {warnings:#?}"));
        }
        // Every entry type and message role Pi wrote is one we understand.
        for entry in session.entries() {
            let is_unknown_role = matches!(entry.role(), Some(Role::Unknown(_)));
            if entry.kind == EntryKind::Unknown || is_unknown_role {
                mismatches.push(format!(
                    "{key} ({role}): entry {} of type {} (role {:?}) was not recognised",
                    entry.handle(),
                    entry.entry_type,
                    entry.role()
                ));
            }
        }
        // Pi did not rewrite (migrate) the file on open, so the file we read is the one Pi
        // reported on.
        assert_eq!(
            pi["fileUnchangedByOpen"], true,
            "{key}: Pi rewrote the copy"
        );

        for (field, ours) in our_values(&session, staging_root) {
            let theirs = pi_value(pi, field);
            if ours != theirs {
                mismatches.push(format!(
                    "{key} ({role})\n  field {field}\n  ours: {ours}\n  pi:   {theirs}"
                ));
            }
        }
        // A fork's header names its parent, which is in the corpus too.
        if let Some(parent_key) = pi["parentSessionKey"].as_str()
            && !files.contains_key(parent_key)
        {
            mismatches.push(format!(
                "{key}: parentSessionKey {parent_key} is not a file of the corpus"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} disagreement(s) with Pi:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

/// Returns the Pi-comparable facts of a synthetic session as one line.
fn describe_pi_fields(session: &Transcript) -> String {
    let facts = facts(session).expect("facts decode");
    let context = session.context();
    let roles: Vec<&str> = context
        .messages
        .iter()
        .map(|message| context_role(&message.kind))
        .collect();
    format!(
        "roles=[{}] name={:?} first={:?} thinking={:?}",
        roles.join(","),
        facts.name,
        facts.first_user_message,
        context.thinking_level
    )
}

/// Rules read from Pi 1.6.0's code that the committed corpus does not reach, each with what
/// Pi does; `ours` differs from Pi only where the comment says we differ on purpose.
#[test]
fn follows_pi_rules_the_corpus_does_not_reach() {
    let u1 = user("u1", None, "first");
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            // `sessionEntryToContextMessages`: `if (entry.type === "branch_summary" &&
            // entry.summary)`; an empty summary yields no message.
            "empty branch summary: no context message",
            vec![
                u1.clone(),
                other("branch_summary", "b1", Some("u1"), r#""fromId":"u1","summary":"""#),
                user("u2", Some("b1"), "next"),
            ],
            r#"roles=[user,user] name=None first=Some("first") thinking=None"#,
        ),
        (
            "branch summary with text: a branchSummary message",
            vec![
                u1.clone(),
                other("branch_summary", "b1", Some("u1"), r#""fromId":"u1","summary":"s""#),
            ],
            r#"roles=[user,branchSummary] name=None first=Some("first") thinking=None"#,
        ),
        (
            // `getSessionName` and `buildSessionInfo`: `entry.name?.trim() || undefined`.
            "session name is trimmed",
            vec![u1.clone(), other("session_info", "n1", Some("u1"), r#""name":"  Plan  ""#)],
            r#"roles=[user] name=Some("Plan") first=Some("first") thinking=None"#,
        ),
        (
            "a blank session name clears the name",
            vec![
                u1.clone(),
                other("session_info", "n1", Some("u1"), r#""name":"Plan""#),
                other("session_info", "n2", Some("n1"), r#""name":"  ""#),
            ],
            r#"roles=[user] name=None first=Some("first") thinking=None"#,
        ),
        (
            // `buildSessionInfo`: `if (!textContent) continue;` before taking `firstMessage`.
            "a user message without text is passed over for the first message",
            vec![
                r#"{"type":"message","id":"i1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"timestamp":1}}"#.to_owned(),
                user("u2", Some("i1"), "  the   question "),
            ],
            r#"roles=[user,user] name=None first=Some("the question") thinking=None"#,
        ),
        (
            // Deliberate difference: Pi's `buildSessionContext` keeps a `bashExecution` with
            // `excludeFromContext` and its `convertToLlm` drops it before the model call. Our
            // context lists what the model sees, so we drop it already.
            "excluded bash execution is not model-visible",
            vec![
                u1.clone(),
                r#"{"type":"message","id":"x1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"bashExecution","command":"ls","output":"","exitCode":0,"cancelled":false,"truncated":false,"excludeFromContext":true,"timestamp":2}}"#.to_owned(),
            ],
            r#"roles=[user] name=None first=Some("first") thinking=None"#,
        ),
        (
            // Deliberate difference: with no `thinking_level_change` on the branch Pi reports
            // `off`; we report `None` ("never recorded"), which a caller maps to `off`.
            "no thinking level recorded",
            vec![u1.clone()],
            r#"roles=[user] name=None first=Some("first") thinking=None"#,
        ),
    ];
    for (name, lines, expected) in cases {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let session = parse(&jsonl(&lines));
        assert!(
            session.warnings().is_empty(),
            "{name}: {:?}",
            session.warnings()
        );
        assert_eq!(describe_pi_fields(&session), expected, "case: {name}");
    }
}
