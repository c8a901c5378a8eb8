//! A handoff is bounded in total whatever the session
//! holds (huge names, model ids, entry ids, many models and warnings), and a message a
//! `context_edit` removed from the model's context is left out.

use std::path::Path;

use pi_retrospect_handoff::{
    DEFAULT_MAX_DOCUMENT_BYTES, FIELD_CUT_MARKER, Handoff, HandoffOptions, MAX_FIELD_BYTES,
    MAX_MODELS, MAX_WARNINGS, handoff,
};
use pi_retrospect_transcript::Transcript;
use serde_json::json;

const HEADER: &str = r#"{"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

fn handoff_of(lines: &[String], options: &HandoffOptions) -> Handoff {
    let contents = std::iter::once(HEADER.to_owned())
        .chain(lines.iter().cloned())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let transcript = Transcript::from_bytes(contents.into_bytes());
    handoff(&transcript, Path::new("/s/--w--/s.jsonl"), options).expect("handoff")
}

fn json_len(handoff: &Handoff) -> usize {
    serde_json::to_vec(handoff).expect("json").len()
}

#[test]
fn huge_one_line_fields_are_cut_and_the_document_is_bounded() {
    let huge = "n".repeat(2 << 20);
    let mut lines = vec![
        json!({"type":"session_info","id":"i0","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","name": huge}).to_string(),
    ];
    let mut parent = "i0".to_owned();
    for number in 0..20 {
        let user = format!("u{number}{}", "x".repeat(1000));
        lines.push(json!({"type":"message","id": user,"parentId": parent,"timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"q \"\\\" \\ quotes"}}).to_string());
        let assistant = format!("a{number}");
        lines.push(json!({"type":"message","id": assistant,"parentId": user,"timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"\\".repeat(3000)}],"provider": format!("p{number}{}", "P".repeat(1000)),"model":"m".repeat(100_000)}}).to_string());
        parent = assistant;
    }
    lines.push("not json".to_owned());
    for _ in 0..100 {
        lines.push("{".to_owned());
    }
    for options in [
        HandoffOptions::default(),
        HandoffOptions {
            max_messages: 100,
            max_message_bytes: 64 * 1024,
            max_excerpt_bytes: 64 * 1024,
            ..HandoffOptions::default()
        },
    ] {
        let handoff = handoff_of(&lines, &options);
        let n_bytes = json_len(&handoff);
        assert!(n_bytes <= DEFAULT_MAX_DOCUMENT_BYTES, "{n_bytes}");
        let name = handoff.source.name.as_deref().expect("name");
        assert!(
            name.len() <= MAX_FIELD_BYTES && name.contains(FIELD_CUT_MARKER),
            "{name}"
        );
        assert_eq!(handoff.source.n_models, 20);
        assert_eq!(handoff.source.models.len(), MAX_MODELS);
        assert!(
            handoff
                .source
                .models
                .iter()
                .all(|model| model.len() <= MAX_FIELD_BYTES)
        );
        assert!(!handoff.excerpt.messages.is_empty());
        for message in &handoff.excerpt.messages {
            assert!(message.entry_id.len() <= MAX_FIELD_BYTES);
            assert!(
                message
                    .model
                    .as_deref()
                    .is_none_or(|model| model.len() <= MAX_FIELD_BYTES)
            );
        }
        assert!(handoff.warnings.len() <= MAX_WARNINGS && handoff.n_warnings > MAX_WARNINGS);
        assert_eq!(
            handoff.excerpt.n_bytes,
            handoff
                .excerpt
                .messages
                .iter()
                .map(|message| message.text.len())
                .sum::<usize>()
        );
    }
    // A smaller document budget drops the oldest messages, keeping the newest.
    let tight = HandoffOptions {
        max_document_bytes: 24 * 1024,
        ..HandoffOptions::default()
    };
    let handoff = handoff_of(&lines, &tight);
    assert!(json_len(&handoff) <= 24 * 1024, "{}", json_len(&handoff));
    assert_eq!(
        handoff
            .excerpt
            .messages
            .last()
            .map(|message| message.entry_id.as_str()),
        Some("a19")
    );
}

#[test]
fn messages_a_context_edit_omits_are_left_out() {
    let lines = [
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"REMOVED_BY_CONTEXT_EDIT"}}).to_string(),
        json!({"type":"message","id":"u2","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"REPLACED_BUT_KEPT"}}).to_string(),
        json!({"type":"context_edit","id":"e1","parentId":"u2","timestamp":"2026-01-01T00:00:03.000Z","targetId":"u1","replacement":null}).to_string(),
        json!({"type":"context_edit","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:04.000Z","targetId":"u2","replacement":[{"type":"text","text":"new"}]}).to_string(),
        json!({"type":"message","id":"u3","parentId":"e2","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"still here"}}).to_string(),
    ];
    let handoff = handoff_of(&lines, &HandoffOptions::default());
    let shown: Vec<&str> = handoff
        .excerpt
        .messages
        .iter()
        .map(|message| message.text.as_str())
        .collect();
    assert_eq!(shown, ["REPLACED_BUT_KEPT", "still here"]);
    assert_eq!(handoff.excerpt.n_available, 2);
}
