//! A handoff is bounded in total whatever the session
//! holds (huge names, model ids, entry ids, many models and warnings), and a message a
//! `context_edit` removed from the model's context is left out.

use std::path::Path;

use pi_retrospect_handoff::{
    DEFAULT_MAX_DOCUMENT_BYTES, FIELD_CUT_MARKER, Handoff, HandoffOptions, MAX_FIELD_BYTES,
    MAX_MODELS, MAX_WARNINGS, handoff,
};
use pi_retrospect_testkit::{Block, Entry, Header, Message, jsonl};
use pi_retrospect_transcript::Transcript;

fn handoff_of(lines: &[String], options: &HandoffOptions) -> Handoff {
    let header = Header::new("0199aaaa-0000-7000-8000-000000000001").cwd("/w");
    let contents = jsonl(std::iter::once(header.to_string()).chain(lines.iter().cloned()));
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
        Entry::session_info(&huge)
            .id("i0")
            .parent(None)
            .at("2026-01-01T00:00:01.000Z")
            .to_string(),
    ];
    let mut parent = "i0".to_owned();
    for number in 0..20 {
        let user = format!("u{number}{}", "x".repeat(1000));
        lines.push(
            Entry::message(Message::user("q \"\\\" \\ quotes"))
                .id(&user)
                .parent(Some(&parent))
                .at("2026-01-01T00:00:02.000Z")
                .to_string(),
        );
        let assistant = format!("a{number}");
        let message = Message::assistant(&[Block::text(&"\\".repeat(3000))])
            .provider(&format!("p{number}{}", "P".repeat(1000)))
            .model(&"m".repeat(100_000));
        lines.push(
            Entry::message(message)
                .id(&assistant)
                .parent(Some(&user))
                .at("2026-01-01T00:00:03.000Z")
                .to_string(),
        );
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
    let context_edit = |target: &str, replacement: &str| {
        Entry::of_type("context_edit")
            .text_member("targetId", target)
            .member("replacement", replacement)
    };
    let lines = [
        Entry::message(Message::user("REMOVED_BY_CONTEXT_EDIT"))
            .id("u1")
            .parent(None)
            .at("2026-01-01T00:00:01.000Z"),
        Entry::message(Message::user("REPLACED_BUT_KEPT"))
            .id("u2")
            .parent(Some("u1"))
            .at("2026-01-01T00:00:02.000Z"),
        context_edit("u1", "null")
            .id("e1")
            .parent(Some("u2"))
            .at("2026-01-01T00:00:03.000Z"),
        context_edit("u2", r#"[{"type":"text","text":"new"}]"#)
            .id("e2")
            .parent(Some("e1"))
            .at("2026-01-01T00:00:04.000Z"),
        Entry::message(Message::user("still here"))
            .id("u3")
            .parent(Some("e2"))
            .at("2026-01-01T00:00:05.000Z"),
    ]
    .map(String::from);
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
