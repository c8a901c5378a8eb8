//! Over a hostile store: every tool's result
//! validates against its declared output schema (an `inspect_session` hit on a `!` command
//! included) and stays within the documented page size (256 KiB) however long the names,
//! model ids and cwds are, with a cursor to continue; a `search_sessions` on one session
//! that cannot be read is a tool error, never "no hits".

use std::path::Path;

use pi_retrospect_app::{Environment, StoreFlags};
use pi_retrospect_mcp::{Server, ServerOptions};
use pi_retrospect_testkit::{
    Block, Entry, Header, Message, Store, Usage, session_file_name, write_session_file,
};
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};

const MAX_PAGE_BYTES: usize = 256 * 1024;

fn server(root: &Path) -> Server {
    let env = Environment {
        cwd: std::env::temp_dir(),
        now: "2026-12-01T00:00:00Z".parse().expect("instant"),
        ..Environment::default()
    };
    let stores = StoreFlags {
        sessions_root: Some(root.to_owned()),
        ..StoreFlags::default()
    };
    Server::new(ServerOptions {
        stores,
        env,
        is_clock_live: false,
    })
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect()
}

fn call(server: &Server, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    server.call(tool, arguments as JsonObject).expect("a tool")
}

/// Calls `tool`, checks that it succeeded, that its result validates against the declared
/// output schema and that the whole result is within the page bound; returns the document.
fn call_bounded(server: &Server, tool: &str, arguments: Value) -> Value {
    let result = call(server, tool, arguments.clone());
    assert_ne!(
        result.is_error,
        Some(true),
        "{tool} {arguments}: {}",
        text_of(&result)
    );
    let n_bytes = serde_json::to_vec(&result).expect("json").len();
    assert!(
        n_bytes <= MAX_PAGE_BYTES + 64 * 1024,
        "{tool} {arguments}: {n_bytes} bytes"
    );
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let structured_bytes = serde_json::to_vec(&structured).expect("json").len();
    assert!(
        structured_bytes <= MAX_PAGE_BYTES,
        "{tool} {arguments}: {structured_bytes}"
    );
    let schema = server
        .tools()
        .into_iter()
        .find(|described| described.name == tool)
        .and_then(|described| described.output_schema)
        .expect("an output schema");
    let validator =
        jsonschema::validator_for(&Value::Object((*schema).clone())).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&structured)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{tool} {arguments}: {errors:#?}");
    structured
}

/// Writes the hostile store under `root` and returns the path of its big session.
fn hostile_store(root: &Path) -> String {
    let store = Store::at(root);
    let project = store.project_dir("/h");
    let huge = |letter: &str, n_bytes: usize| letter.repeat(n_bytes);
    let answer = |text: &str, model: &str| {
        Entry::message(
            Message::assistant(&[Block::text(text)])
                .provider("p")
                .model(model)
                .usage(Usage::tokens(1, 1).cost(0.0)),
        )
    };
    let mut lines = vec![
        Entry::session_info(&huge("N", 300_000))
            .id("i0")
            .parent(None)
            .at("2026-01-01T00:00:01.000Z"),
        Entry::message(
            Message::bash_execution("echo e", "e\n", Some(0))
                .truncated(false)
                .timestamp(1),
        )
        .id("b0")
        .parent(Some("i0"))
        .at("2026-01-01T00:00:01.500Z"),
    ];
    let mut parent = "b0".to_owned();
    for number in 0..3 {
        let user = format!("u{number}");
        let assistant = format!("a{number}");
        lines.push(
            Entry::message(Message::user("hi there"))
                .id(&user)
                .parent(Some(&parent))
                .at("2026-01-01T00:00:02.000Z"),
        );
        lines.push(
            answer("hi back", &format!("{number}{}", huge("M", 300_000)))
                .id(&assistant)
                .parent(Some(&user))
                .at("2026-01-01T00:00:03.000Z"),
        );
        parent = assistant;
    }
    let header = Header::new("22220000-0000-7000-8000-000000000000").cwd("/h");
    let big = store.write_session(&header, lines);
    // Many sessions with long cwds and model ids, and many files that are not sessions.
    for number in 0..120 {
        let id = format!("33330000-0000-7000-8000-{number:012}");
        let header = Header::new(&id)
            .timestamp("2026-01-02T00:00:00.000Z")
            .cwd(&format!("/{}{number}", huge("c", 3800)));
        let lines = [
            Entry::message(Message::user("hi"))
                .id("u")
                .parent(None)
                .at("2026-01-02T00:00:01.000Z"),
            answer("hi", &format!("{number}{}", huge("m", 3000)))
                .id("a")
                .parent(Some("u"))
                .at("2026-01-02T00:00:02.000Z"),
        ];
        let path = project.join(session_file_name(&header.timestamp, &id));
        write_session_file(&path, &header, lines);
    }
    for number in 0..200 {
        let path = project.join(format!("not-a-session-{number}-{}.jsonl", huge("x", 200)));
        std::fs::write(path, "root:x:0:0\n").expect("write");
    }
    big.display().to_string()
}

#[test]
fn every_tool_is_bounded_and_valid_on_a_hostile_store() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .join("sessions");
    let big = hostile_store(&root);
    let server = server(&root);

    // list_sessions: pages continue with a cursor until every session was seen.
    let mut n_sessions = 0;
    let mut cursor: Option<String> = None;
    for _ in 0..200 {
        let arguments = match &cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let page = call_bounded(&server, "list_sessions", arguments);
        n_sessions += page["sessions"].as_array().map_or(0, Vec::len);
        assert!(page["warnings"].as_array().map_or(0, Vec::len) <= 50);
        cursor = page["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(n_sessions, 121);
    let one = call_bounded(&server, "list_sessions", json!({ "limit": 1 }));
    assert_eq!(one["nWarnings"], 200);

    for by in [
        json!(["model"]),
        json!(["session", "model"]),
        json!(["session"]),
    ] {
        call_bounded(&server, "session_stats", json!({ "by": by, "limit": 500 }));
    }
    let stats = call_bounded(
        &server,
        "session_stats",
        json!({ "by": ["session", "model"], "limit": 500 }),
    );
    assert!(stats["nextOffset"].is_u64(), "{}", stats["nRows"]);

    let hits = call_bounded(
        &server,
        "search_sessions",
        json!({ "pattern": "hi", "limit": 200 }),
    );
    assert!(hits["nextCursor"].is_string());

    call_bounded(
        &server,
        "session_handoff",
        json!({ "sessionPath": big, "maxMessages": 100, "maxBytes": 65536 }),
    );
    call_bounded(&server, "session_entries", json!({ "sessionPath": big }));
    call_bounded(
        &server,
        "inspect_session",
        json!({ "sessionPath": big, "view": "overview" }),
    );
    // A hit on a `!` command has field "bashCommand", which the declared schema accepts.
    let search = call_bounded(
        &server,
        "inspect_session",
        json!({ "sessionPath": big, "view": "search", "query": "e" }),
    );
    assert!(
        search["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .any(|hit| hit["field"] == "bashCommand"),
        "{search}"
    );
}

#[test]
fn searching_one_session_that_cannot_be_read_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .join("sessions");
    let project = root.join("--h--");
    std::fs::create_dir_all(&project).expect("mkdir");
    let path = project.join("notsession.jsonl");
    std::fs::write(&path, "root:x:0:0:root\n").expect("write");
    let server = server(&root);
    let result = call(
        &server,
        "search_sessions",
        json!({ "pattern": "root", "sessionPath": path.display().to_string() }),
    );
    assert_eq!(result.is_error, Some(true), "{}", text_of(&result));
    assert!(
        text_of(&result).contains("notsession.jsonl"),
        "{}",
        text_of(&result)
    );
}

/// A server started in a project whose
/// `.pi/settings.json` says `"sessionDir": "/"` reads no file outside Pi's own store, and a
/// flat custom store lends only its own session files, not every `.jsonl` below it.
#[test]
fn a_project_settings_file_does_not_widen_confinement() {
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = std::fs::canonicalize(dir.path()).expect("canonical");
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    let session = |id: &str| format!("{}\n", Header::new(id).cwd("/w"));
    write(
        "outside.jsonl",
        &session("11110000-0000-7000-8000-000000000000"),
    );
    write(
        "outdir/x.jsonl",
        &session("22220000-0000-7000-8000-000000000000"),
    );
    write("proj/.pi/settings.json", r#"{"sessionDir":"/"}"#);
    std::fs::create_dir_all(dir.join("home")).expect("mkdir");
    let server_in = |cwd: &Path| {
        Server::new(ServerOptions {
            stores: StoreFlags::default(),
            env: Environment {
                cwd: cwd.to_owned(),
                home: Some(dir.join("home")),
                now: "2026-12-01T00:00:00Z".parse().expect("instant"),
                ..Environment::default()
            },
            is_clock_live: false,
        })
    };
    let refused = |server: &Server, path: &Path| {
        for tool in ["session_entries", "inspect_session", "session_handoff"] {
            let arguments = json!({"sessionPath": path.display().to_string(), "view": "overview"});
            let mut arguments = arguments.clone();
            if tool != "inspect_session" {
                arguments.as_object_mut().expect("object").remove("view");
            }
            let result = call(server, tool, arguments.clone());
            assert_eq!(result.is_error, Some(true), "{tool} {arguments}");
            let text = text_of(&result);
            assert!(text.starts_with("sessionPath: "), "{tool}: {text}");
            assert!(!text.contains("11110000"), "{tool}: {text}");
        }
    };
    let server = server_in(&dir.join("proj"));
    refused(&server, &dir.join("outside.jsonl"));
    refused(&server, &dir.join("outdir/x.jsonl"));
    let listed = call(&server, "list_sessions", json!({}));
    let listed = serde_json::to_string(&listed.structured_content).expect("json");
    assert!(
        listed.contains(".pi/settings.json") && listed.contains("is /, $HOME or above $HOME"),
        "{listed}"
    );

    // The store is the temp directory itself, flat: its own session is readable, a
    // `.jsonl` in a subdirectory is not.
    write(
        "proj/.pi/settings.json",
        &json!({"sessionDir": dir.display().to_string()}).to_string(),
    );
    // `$HOME` elsewhere, so that the directory is not above it.
    let home = tempfile::tempdir().expect("temp dir");
    let server = Server::new(ServerOptions {
        stores: StoreFlags::default(),
        env: Environment {
            cwd: dir.join("proj"),
            home: Some(home.path().to_owned()),
            now: "2026-12-01T00:00:00Z".parse().expect("instant"),
            ..Environment::default()
        },
        is_clock_live: false,
    });
    let own = call(
        &server,
        "session_entries",
        json!({"sessionPath": dir.join("outside.jsonl").display().to_string()}),
    );
    assert_ne!(own.is_error, Some(true), "{}", text_of(&own));
    refused(&server, &dir.join("outdir/x.jsonl"));
}
