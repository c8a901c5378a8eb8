//! The tools called in process through [`Server::call`] over the committed fixture stores:
//! every result validates against its tool's declared output schema, pages continue, bad
//! arguments and confinement escapes are tool errors that name the argument.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pi_retrospect_app::{Environment, StoreFlags};
use pi_retrospect_mcp::{Server, ServerOptions};
use pi_retrospect_testkit::{Header, Store};
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};

/// Returns the fixture directory `name` under the repository's `fixtures/`.
fn fixture(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name);
    std::fs::canonicalize(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Returns a temporary copy of the first run of the real-Pi corpus (the seven files of the
/// tools, tree, fork and api sessions written at 07:00), whose listing these tables spell out;
/// later scenarios (failures, branches, usage) are left out.
fn first_corpus() -> (tempfile::TempDir, PathBuf) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read dir") {
            let entry = entry.expect("entry");
            let name = entry.file_name();
            if name.to_string_lossy().starts_with("2026-11-30T19-") {
                continue;
            }
            let target = to.join(&name);
            if entry.file_type().expect("type").is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).expect("copy");
            }
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    copy(&fixture("pi-real/sessions"), &root);
    let root = std::fs::canonicalize(&root).expect("canonical");
    (dir, root)
}

/// Returns a server over the store `root` with a fixed clock and no `$HOME` or Pi variables.
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

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("not an object: {other}"),
    }
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

/// Calls `tool` and returns its structured content after checking it against the declared
/// output schema, or fails with the error text.
fn call_ok(server: &Server, tool: &str, arguments: Value) -> Value {
    let result = server
        .call(tool, object(arguments.clone()))
        .expect("a tool");
    assert_ne!(
        result.is_error,
        Some(true),
        "{tool} {arguments}: {}",
        text_of(&result)
    );
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let schema = server
        .tools()
        .into_iter()
        .find(|described| described.name == tool)
        .and_then(|described| described.output_schema)
        .expect("an output schema");
    let validator = jsonschema::validator_for(&Value::Object((*schema).clone()))
        .expect("the output schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&structured)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{tool} {arguments}: {errors:#?}");
    assert!(!text_of(&result).is_empty(), "{tool}: text content");
    structured
}

/// Calls `tool` and returns the text of the tool error it must fail with.
fn call_err(server: &Server, tool: &str, arguments: Value) -> String {
    let result = server
        .call(tool, object(arguments.clone()))
        .expect("a tool");
    assert_eq!(result.is_error, Some(true), "{tool} {arguments} succeeded");
    assert!(result.structured_content.is_none());
    text_of(&result)
}

fn session_paths(server: &Server) -> Vec<String> {
    fn flatten(sessions: &Value, out: &mut Vec<String>) {
        for session in sessions.as_array().expect("sessions") {
            out.push(session["path"].as_str().expect("path").to_owned());
            flatten(&session["subagentSessions"], out);
        }
    }
    let document = call_ok(server, "list_sessions", json!({}));
    let mut paths = Vec::new();
    flatten(&document["sessions"], &mut paths);
    paths
}

#[test]
fn tools_are_described_with_schemas_and_read_only() {
    let tools = server(&fixture("sessions")).tools();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "list_sessions",
            "session_entries",
            "inspect_session",
            "search_sessions",
            "session_stats",
            "session_handoff",
            "session_failures"
        ]
    );
    for tool in &tools {
        assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
        assert_eq!(annotations.destructive_hint, Some(false), "{}", tool.name);
        assert_eq!(annotations.open_world_hint, Some(false), "{}", tool.name);
        let output = tool.output_schema.as_ref().expect("output schema");
        assert_eq!(output.get("type"), Some(&json!("object")), "{}", tool.name);
        jsonschema::validator_for(&Value::Object((**output).clone()))
            .unwrap_or_else(|error| panic!("{}: {error}", tool.name));
        let description = tool.description.as_deref().unwrap_or("");
        assert!(description.len() > 200, "{}", tool.name);
    }
    let list = &tools[0];
    let description = list.description.as_deref().unwrap_or("");
    for needed in [
        "oldest first",
        "sessions.at(-1)",
        "`path`",
        "Ids can repeat",
        "`subagentSessions` is nesting",
        "`parentSessionPath` is fork",
        "could not be read",
        "Pi 1.6.0 does not tell",
    ] {
        assert!(
            description.to_lowercase().contains(&needed.to_lowercase()),
            "list_sessions description lacks {needed:?}"
        );
    }
    let properties = list.input_schema["properties"]
        .as_object()
        .expect("properties");
    for upstream in [
        "cwds",
        "cwdMatch",
        "includeCurrentSession",
        "startTimestamp",
        "endTimestamp",
        "sortBy",
        "sortDirection",
        "limit",
        "cwdPrefix",
        "withSubagents",
        "maxDepth",
        "id",
        "name",
        "excludeSessionPath",
    ] {
        assert!(
            properties.contains_key(upstream),
            "list_sessions lacks {upstream}"
        );
    }
}

#[test]
fn list_sessions_with_no_arguments_is_the_list_document() {
    let root = fixture("sessions");
    let server = server(&root);
    let document = call_ok(&server, "list_sessions", json!({}));
    let request = pi_retrospect_app::ListRequest {
        stores: StoreFlags {
            sessions_root: Some(root.clone()),
            ..StoreFlags::default()
        },
        ..pi_retrospect_app::ListRequest::default()
    };
    let env = Environment {
        cwd: std::env::temp_dir(),
        ..Environment::default()
    };
    let listing = pi_retrospect_app::list(&request, &env)
        .expect("listed")
        .listing;
    let mut expected = Vec::new();
    pi_retrospect_render::write_json(&mut expected, &listing).expect("write");
    let expected: Value = serde_json::from_slice(&expected).expect("json");
    // Every page states its size; beyond those two fields it is the `list --json` document.
    let mut document = document;
    let sizes = document
        .as_object_mut()
        .map(|object| (object.remove("bytes"), object.remove("sizeClass")));
    assert!(
        matches!(
            sizes,
            Some((Some(Value::Number(_)), Some(Value::String(_))))
        ),
        "{sizes:?}"
    );
    assert_eq!(document, expected);
    assert!(
        !document["warnings"]
            .as_array()
            .expect("warnings")
            .is_empty()
    );

    let result = server
        .call("list_sessions", JsonObject::new())
        .expect("a tool");
    let mut text = Vec::new();
    pi_retrospect_render::write_text(&mut text, &listing).expect("write");
    assert_eq!(text_of(&result), String::from_utf8(text).expect("utf-8"));
}

/// Returns the top-level session ids a `list_sessions` call returns, runs as `+id`.
fn listed(server: &Server, arguments: Value) -> Vec<String> {
    fn flatten(sessions: &Value, depth: usize, out: &mut Vec<String>) {
        for session in sessions.as_array().expect("sessions") {
            let id = session["id"].as_str().expect("id");
            out.push(format!(
                "{}{}",
                "+".repeat(depth),
                &id[id.len().saturating_sub(4)..]
            ));
            flatten(&session["subagentSessions"], depth + 1, out);
        }
    }
    let document = call_ok(server, "list_sessions", arguments);
    let mut ids = Vec::new();
    flatten(&document["sessions"], 0, &mut ids);
    ids
}

#[test]
fn list_sessions_filters_and_orders() {
    let (_corpus, corpus_root) = first_corpus();
    let server = server(&corpus_root);
    let all = ["f796", "+c7f9", "+0ac1", "+5307", "f4c8", "40d2", "c9f7"];
    let forked = session_paths(&server)
        .into_iter()
        .find(|path| path.ends_with("40d2.jsonl"))
        .expect("the fork session");
    let cwd = "/tmp/pi-real-fixture/home/user/project";
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({}), all.to_vec()),
        (
            json!({ "limit": 2 }),
            vec!["f796", "+c7f9", "+0ac1", "+5307", "f4c8"],
        ),
        (json!({ "sortDirection": "desc", "limit": 1 }), vec!["c9f7"]),
        (
            json!({ "maxDepth": 0 }),
            vec!["f796", "f4c8", "40d2", "c9f7"],
        ),
        (
            json!({ "withSubagents": true, "maxDepth": 0 }),
            vec!["f796"],
        ),
        (json!({ "cwds": [cwd] }), all.to_vec()),
        (json!({ "cwds": "/tmp/pi-real-fixture/home/user" }), vec![]),
        (
            json!({ "cwdPrefix": "/tmp/pi-real-fixture/home/user" }),
            all.to_vec(),
        ),
        (
            json!({ "cwds": ["/tmp/pi-real-fixture/home/user/proj"], "cwdMatch": "sibling-prefix" }),
            vec![],
        ),
        (json!({ "id": "01a22b41-c1e1" }), vec!["f4c8"]),
        (
            json!({ "id": ["01a22b41-c1e1", "01a22b41-c1f6"] }),
            vec!["f4c8", "c9f7"],
        ),
        (
            json!({ "startTimestamp": "2026-11-30T07:00:59.500Z" }),
            vec!["40d2", "c9f7"],
        ),
        (
            json!({ "endTimestamp": "2026-11-30T07:00:59.300Z", "maxDepth": 0 }),
            vec!["f796"],
        ),
        (
            json!({ "startTimestamp": "2026-11-30", "endTimestamp": "2026-11-30" }),
            all.to_vec(),
        ),
        (
            json!({ "excludeSessionPath": forked }),
            vec!["f796", "+c7f9", "+0ac1", "+5307", "f4c8", "c9f7"],
        ),
        (
            json!({ "sortBy": "id", "sortDirection": "desc", "maxDepth": 0 }),
            vec!["c9f7", "40d2", "f4c8", "f796"],
        ),
    ];
    for (arguments, expected) in cases {
        assert_eq!(listed(&server, arguments.clone()), expected, "{arguments}");
    }
}

#[test]
fn the_current_session_is_left_out_when_the_server_knows_it() {
    let (_corpus, corpus_root) = first_corpus();
    let root = corpus_root.clone();
    let paths = session_paths(&server(&root));
    let current = paths
        .iter()
        .find(|path| path.ends_with("c9f7.jsonl"))
        .expect("the api session")
        .clone();
    let env = Environment {
        cwd: std::env::temp_dir(),
        session_file: Some(current.clone()),
        ..Environment::default()
    };
    let server = Server::new(ServerOptions {
        stores: StoreFlags {
            sessions_root: Some(root),
            ..StoreFlags::default()
        },
        env,
        is_clock_live: false,
    });
    let top = json!({ "maxDepth": 0 });
    assert_eq!(listed(&server, top.clone()), ["f796", "f4c8", "40d2"]);
    assert_eq!(
        listed(
            &server,
            json!({ "maxDepth": 0, "includeCurrentSession": true })
        ),
        ["f796", "f4c8", "40d2", "c9f7"]
    );
    // The known session is also the default of the reading tools.
    let page = call_ok(&server, "session_entries", json!({ "limit": 1 }));
    assert_eq!(page["path"], json!(current));
    let page = call_ok(&server, "inspect_session", json!({ "view": "overview" }));
    assert_eq!(page["path"], json!(current));
}

#[test]
fn entries_pages_continue_to_the_whole_file() {
    let (_corpus, corpus_root) = first_corpus();
    let server = server(&corpus_root);
    for path in session_paths(&server) {
        let whole = call_ok(&server, "session_entries", json!({ "sessionPath": path }));
        assert_eq!(whole["nextStartLineNo"], Value::Null, "{path}");
        let whole_rows = whole["entries"].as_array().expect("entries").clone();
        assert!(!whole_rows.is_empty(), "{path}");
        for row in &whole_rows {
            assert!(row.get("raw").is_some(), "{path}: raw");
        }
        let mut paged = Vec::new();
        let mut start = None;
        loop {
            let mut arguments = json!({ "sessionPath": path, "limit": 3 });
            if let Some(start) = start {
                arguments["startLineNo"] = json!(start);
            }
            let page = call_ok(&server, "session_entries", arguments);
            let rows = page["entries"].as_array().expect("entries");
            assert!(rows.len() <= 3);
            paged.extend(rows.iter().cloned());
            match page["nextStartLineNo"].as_u64() {
                Some(next) => start = Some(next),
                None => break,
            }
        }
        assert_eq!(paged, whole_rows, "{path}");
    }
}

#[test]
fn entries_filters() {
    let server = server(&fixture("pi-real/sessions"));
    let path = session_paths(&server)
        .into_iter()
        .find(|path| path.ends_with("0959dd92f796.jsonl"))
        .expect("the tools session");
    let lines = |arguments: Value| -> Vec<u64> {
        let mut arguments = arguments;
        arguments["sessionPath"] = json!(path);
        call_ok(&server, "session_entries", arguments)["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|row| row["lineNo"].as_u64().expect("lineNo"))
            .collect()
    };
    let all = lines(json!({}));
    assert_eq!(all.first(), Some(&2));
    let users = lines(json!({ "messageRoles": ["user"] }));
    assert!(!users.is_empty() && users.len() < all.len());
    assert_eq!(
        lines(json!({ "startLineNo": 4, "endLineNo": 6 })),
        [4, 5, 6]
    );
    assert_eq!(lines(json!({ "types": "label" })).len(), 1);
    let ids: Vec<String> = call_ok(
        &server,
        "session_entries",
        json!({ "sessionPath": path, "startLineNo": 5, "endLineNo": 7 }),
    )["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|row| row["id"].as_str().expect("id").to_owned())
        .collect();
    // Several ids are read in file order whatever order they are given in.
    assert_eq!(lines(json!({ "ids": [ids[2], ids[0]] })), [5, 7]);
    assert_eq!(lines(json!({ "ids": ["line:6"] })), [6]);
    assert_eq!(
        lines(json!({ "search": { "terms": ["README"] } })),
        lines(json!({ "search": { "terms": ["readme"], "caseSensitive": false } }))
    );
    assert!(lines(json!({ "search": { "terms": ["README"] } })).len() > 1);
    assert!(lines(json!({ "search": { "terms": ["readme"], "caseSensitive": true } })).is_empty());
    // Smart case by default, as in search_sessions; `case` says otherwise.
    assert_eq!(
        lines(json!({ "search": { "terms": ["ReadMe"], "case": "insensitive" } })),
        lines(json!({ "search": { "terms": ["readme"] } }))
    );
    assert!(lines(json!({ "search": { "terms": ["readme"], "case": "sensitive" } })).is_empty());
    assert_eq!(
        lines(json!({ "startTimestamp": "2030-01-01" })),
        Vec::<u64>::new()
    );
}

#[test]
fn inspect_views_and_cursors() {
    let server = server(&fixture("pi-real/sessions"));
    let path = session_paths(&server)
        .into_iter()
        .find(|path| path.ends_with("0959dd92f796.jsonl"))
        .expect("the tools session");
    let overview = call_ok(
        &server,
        "inspect_session",
        json!({ "sessionPath": path, "view": "overview" }),
    );
    let checkpoints = overview["checkpoints"]
        .as_array()
        .expect("checkpoints")
        .clone();
    assert_eq!(overview["nTotal"], json!(checkpoints.len()));
    assert!(checkpoints.len() >= 3);
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut arguments = json!({ "sessionPath": path, "view": "overview", "limit": 2 });
        if let Some(cursor) = &cursor {
            arguments["cursor"] = json!(cursor);
        }
        let page = call_ok(&server, "inspect_session", arguments);
        paged.extend(page["checkpoints"].as_array().cloned().unwrap_or_default());
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(paged, checkpoints);
    let entry = checkpoints[1]["entryId"].as_str().expect("entryId");
    for arguments in [
        json!({ "view": "ancestors" }),
        json!({ "view": "ancestors", "entryId": entry }),
        json!({ "view": "children", "entryId": entry }),
        json!({ "view": "search", "query": "readme", "includeToolResults": true }),
        json!({ "view": "read", "entryId": entry, "before": 10, "after": 0 }),
        json!({ "view": "read", "entryId": "line:3" }),
    ] {
        let mut arguments = arguments;
        arguments["sessionPath"] = json!(path);
        let page = call_ok(&server, "inspect_session", arguments.clone());
        assert_eq!(page["view"], arguments["view"]);
    }
    let hits = call_ok(
        &server,
        "inspect_session",
        json!({ "sessionPath": path, "view": "search", "query": "README" }),
    );
    assert!(hits["nTotal"].as_u64().expect("nTotal") >= 1);
    // The page's hints name the tool's arguments, not the command line's flags.
    let result = server
        .call(
            "inspect_session",
            object(json!({ "sessionPath": path, "view": "search", "query": "e", "limit": 1 })),
        )
        .expect("a tool");
    let text = text_of(&result);
    assert!(text.contains("(toolResults: true)"), "{text}");
    assert!(text.contains("next page: cursor = "), "{text}");
    assert!(
        !text.contains("(--") && !text.contains("--cursor"),
        "{text}"
    );
}

#[test]
fn bad_arguments_name_the_argument() {
    let server = server(&fixture("pi-real/sessions"));
    let path = session_paths(&server).remove(0);
    let cases: Vec<(&str, Value, &str)> = vec![
        ("list_sessions", json!({ "limit": 0 }), "limit: "),
        (
            "list_sessions",
            json!({ "limit": "x" }),
            "limit: invalid type",
        ),
        ("list_sessions", json!({ "limit": -1 }), "limit: "),
        (
            "list_sessions",
            json!({ "cwds": ["relative/dir"] }),
            "cwds: ",
        ),
        ("list_sessions", json!({ "cwdPrefix": [""] }), "cwdPrefix: "),
        (
            "list_sessions",
            json!({ "cwdMatch": "fuzzy" }),
            "cwdMatch: unknown variant",
        ),
        (
            "list_sessions",
            json!({ "sortBy": "size" }),
            "sortBy: unknown variant",
        ),
        (
            "list_sessions",
            json!({ "sortDirection": "up" }),
            "sortDirection: ",
        ),
        (
            "list_sessions",
            json!({ "startTimestamp": "yesterday-ish" }),
            "startTimestamp: ",
        ),
        (
            "list_sessions",
            json!({ "endTimestamp": "2026-02-30" }),
            "endTimestamp: ",
        ),
        (
            "list_sessions",
            json!({ "startTimestamp": "2026-12-02", "endTimestamp": "2026-12-01" }),
            "endTimestamp: ",
        ),
        (
            "list_sessions",
            json!({ "excludeSessionPath": "a.jsonl" }),
            "excludeSessionPath: ",
        ),
        (
            "list_sessions",
            json!({ "cwd": "/x" }),
            "unknown field `cwd`",
        ),
        ("session_entries", json!({}), "sessionPath: required"),
        (
            "session_entries",
            json!({ "sessionPath": path, "limit": 501 }),
            "limit: ",
        ),
        (
            "session_entries",
            json!({ "sessionPath": path, "startLineNo": 0 }),
            "startLineNo: ",
        ),
        (
            "session_entries",
            json!({ "sessionPath": path, "startLineNo": 9, "endLineNo": 3 }),
            "endLineNo: ",
        ),
        (
            "session_entries",
            json!({ "sessionPath": path, "search": { "terms": [""] } }),
            "search.terms: ",
        ),
        (
            "session_entries",
            json!({ "sessionPath": path, "search": { "term": "x" } }),
            "search.term: unknown field",
        ),
        (
            "session_entries",
            json!({ "sessionPath": path, "ids": [""] }),
            "ids: ",
        ),
        (
            "session_entries",
            json!({ "sessionPath": path, "ids": ["no-such-entry"] }),
            "ids: no entry",
        ),
        (
            "session_entries",
            json!({ "sessionPath": path, "search": { "terms": [] } }),
            "search.terms: give at least one term",
        ),
        (
            "session_entries",
            json!({ "sessionPath": path, "search": { "terms": "x", "case": "insensitive", "caseSensitive": true } }),
            "search.caseSensitive: ",
        ),
        (
            "session_entries",
            json!({ "sessionPath": path, "startTimestamp": "nope" }),
            "startTimestamp: ",
        ),
        (
            "session_entries",
            json!({ "sessionPath": 7 }),
            "sessionPath: invalid type",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path }),
            "missing field `view`",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path, "view": "tree" }),
            "view: unknown variant",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path, "view": "read" }),
            "entryId: required",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path, "view": "children" }),
            "entryId: required",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path, "view": "read", "entryId": "nope" }),
            "entryId: no entry \"nope\" in this session; take an id from view overview",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path, "view": "search" }),
            "query: required",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path, "view": "search", "query": "" }),
            "query: required",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path, "view": "overview", "limit": 51 }),
            "limit: ",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path, "view": "read", "entryId": "line:3", "before": 11 }),
            "before: ",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path, "view": "overview", "cursor": "nonsense" }),
            "cursor",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": path, "view": "read", "entryId": "no-such-entry" }),
            "no-such-entry",
        ),
        // An empty tool or model name is refused, as `search --tool ""` is.
        (
            "search_sessions",
            json!({ "pattern": "x", "tools": ["bash", ""] }),
            "tools: must not hold an empty name",
        ),
        (
            "search_sessions",
            json!({ "pattern": "x", "models": "" }),
            "models: must not hold an empty name",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let message = call_err(&server, tool, arguments.clone());
        assert!(
            message.contains(expected),
            "{tool} {arguments}: {message:?} lacks {expected:?}"
        );
    }
    assert!(server.call("no_such_tool", JsonObject::new()).is_none());
}

#[test]
fn only_files_inside_the_stores_are_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = std::fs::canonicalize(dir.path()).expect("canonical");
    let store = dir.join("sessions");
    let header = Header::new("a").timestamp("2026-01-01T00:00:00Z").cwd("/w");
    let inside = Store::at(&store).write_session(&header, Vec::<String>::new());
    let project = inside.parent().expect("the project directory").to_owned();
    std::fs::write(store.join("notes.txt"), "not a session\n").expect("write");
    let outside = dir.join("outside.jsonl");
    std::fs::copy(&inside, &outside).expect("copy");
    std::os::unix::fs::symlink(&outside, project.join("link.jsonl")).expect("symlink");
    std::os::unix::fs::symlink(&dir, project.join("up")).expect("symlink");
    let server = server(&store);
    let ok = inside.display().to_string();
    call_ok(&server, "session_entries", json!({ "sessionPath": ok }));
    call_ok(
        &server,
        "inspect_session",
        json!({ "sessionPath": ok, "view": "overview" }),
    );
    let escapes = [
        outside.display().to_string(),
        format!("{}/../outside.jsonl", store.display()),
        format!("{}/link.jsonl", project.display()),
        format!("{}/up/outside.jsonl", project.display()),
        "--w--/2026-01-01T00-00-00-000Z_a.jsonl".to_owned(),
        "/etc/passwd".to_owned(),
        // Inside the store, but not a session file.
        format!("{}/notes.txt", store.display()),
        "~/.bashrc".to_owned(),
        String::new(),
    ];
    for escape in escapes {
        for (tool, arguments) in [
            ("session_entries", json!({ "sessionPath": escape })),
            (
                "inspect_session",
                json!({ "sessionPath": escape, "view": "overview" }),
            ),
        ] {
            let message = call_err(&server, tool, arguments);
            assert!(
                message.starts_with("sessionPath: "),
                "{tool} {escape:?}: {message}"
            );
            assert!(!message.contains("secret"), "{message}");
        }
    }
}

/// Issues 12, 13 and 15: search, stats and handoff through the server, each result checked
/// against its declared schema by `call_ok`, paged where it pages, and bad arguments named.
#[test]
fn search_stats_and_handoff_tools() {
    let server = server(&fixture("pi-real/sessions"));
    // Search: every page joined equals one large page.
    let whole = call_ok(
        &server,
        "search_sessions",
        json!({ "pattern": "the", "limit": 200 }),
    );
    let all: Vec<Value> = whole["hits"].as_array().expect("hits").clone();
    assert!(all.len() > 3, "{whole}");
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut arguments = json!({ "pattern": "the", "limit": 3 });
        if let Some(cursor) = &cursor {
            arguments["cursor"] = json!(cursor);
        }
        let page = call_ok(&server, "search_sessions", arguments);
        let hits = page["hits"].as_array().expect("hits");
        assert!(hits.len() <= 3);
        paged.extend(hits.iter().cloned());
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(paged, all);
    let scoped = call_ok(
        &server,
        "search_sessions",
        json!({ "pattern": "git push origin", "toolArgs": true }),
    );
    assert_eq!(scoped["hits"].as_array().map(Vec::len), Some(1));
    // The argument is named once, as the tool spells it, and the caret is under the pattern.
    let bad = call_err(
        &server,
        "search_sessions",
        json!({ "pattern": "(", "regex": true }),
    );
    assert!(
        bad.starts_with("pattern: invalid pattern \"(\"") && !bad.contains("(?:"),
        "{bad}"
    );
    assert!(
        call_err(
            &server,
            "search_sessions",
            json!({ "pattern": "x", "case": "loud" })
        )
        .starts_with("case")
    );

    // Stats: pages of rows with the whole store's total on each.
    let report = call_ok(
        &server,
        "session_stats",
        json!({ "by": ["session"], "limit": 4 }),
    );
    assert_eq!(report["rows"].as_array().map(Vec::len), Some(4));
    assert_eq!(report["nextOffset"], json!(4));
    let rest = call_ok(
        &server,
        "session_stats",
        json!({ "by": ["session"], "offset": 4, "limit": 500 }),
    );
    assert_eq!(rest["nextOffset"], Value::Null);
    assert_eq!(report["total"], rest["total"]);
    assert_eq!(
        report["nRows"].as_u64(),
        Some(4 + rest["rows"].as_array().map_or(0, Vec::len) as u64)
    );
    assert!(call_err(&server, "session_stats", json!({ "by": ["year"] })).starts_with("by"));
    // Two keys at once: every row carries both.
    let two = call_ok(
        &server,
        "session_stats",
        json!({ "by": ["model", "day"], "limit": 500 }),
    );
    let rows = two["rows"].as_array().expect("rows");
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|row| row["model"].is_string() && row["day"].is_string()),
        "{two}"
    );

    // Handoff: bounded, redaction always on, confined to the stores.
    let paths = session_paths(&server);
    let handoff = call_ok(
        &server,
        "session_handoff",
        json!({ "sessionPath": paths[0], "goal": "go on", "maxMessages": 2 }),
    );
    assert!(
        handoff["excerpt"]["messages"]
            .as_array()
            .map_or(0, Vec::len)
            <= 2
    );
    assert!(
        call_err(
            &server,
            "session_handoff",
            json!({ "sessionPath": "/etc/passwd" })
        )
        .starts_with("sessionPath")
    );
}

/// Returns every session path (runs included) `list_sessions` keeps with `arguments`.
fn listed_paths(server: &Server, arguments: Value) -> BTreeSet<String> {
    fn flatten(sessions: &Value, out: &mut BTreeSet<String>) {
        for session in sessions.as_array().expect("sessions") {
            out.insert(session["path"].as_str().expect("path").to_owned());
            flatten(&session["subagentSessions"], out);
        }
    }
    let document = call_ok(server, "list_sessions", arguments);
    let mut paths = BTreeSet::new();
    flatten(&document["sessions"], &mut paths);
    paths
}

/// Returns `base` with the fields of `extra` added.
fn with(base: &Value, extra: &Value) -> Value {
    let mut merged = base.clone();
    for (key, value) in extra.as_object().expect("object") {
        merged[key] = value.clone();
    }
    merged
}

/// `search_sessions` and `session_stats` take the session filters of
/// their CLI commands under `list_sessions`' names, and keep exactly the sessions
/// `list_sessions` keeps with the same filters.
#[test]
fn search_and_stats_take_the_list_filters() {
    let server = server(&fixture("pi-real/sessions"));
    let sessions = call_ok(&server, "list_sessions", json!({}));
    let sessions = sessions["sessions"].as_array().expect("sessions").clone();
    let timestamps: Vec<&str> = sessions
        .iter()
        .map(|session| session["timestamp"].as_str().expect("timestamp"))
        .collect();
    let middle = timestamps[timestamps.len() / 2];
    let first = sessions[0]["path"].as_str().expect("path");
    let first_id = sessions[0]["id"].as_str().expect("id");
    let first_cwd = sessions[0]["cwd"].as_str().expect("cwd");
    let filters = [
        json!({ "startTimestamp": middle }),
        json!({ "endTimestamp": middle }),
        json!({ "excludeSessionPath": first }),
        json!({ "cwds": first_cwd, "cwdMatch": "sibling-prefix" }),
    ];

    let search = json!({ "pattern": "a", "case": "sensitive", "limit": 200 });
    let hit_paths = |arguments: &Value| -> BTreeSet<String> {
        let document = call_ok(&server, "search_sessions", arguments.clone());
        assert_eq!(document["nextCursor"], Value::Null, "one page holds them");
        document["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|hit| hit["path"].as_str().expect("path").to_owned())
            .collect()
    };
    let all_hits = hit_paths(&search);
    for filter in &filters[2..] {
        let kept = listed_paths(&server, filter.clone());
        let expected: BTreeSet<String> = all_hits.intersection(&kept).cloned().collect();
        assert_eq!(hit_paths(&with(&search, filter)), expected, "{filter}");
    }
    // The time bounds are each hit's own, as `search --since/--until`: a session that started
    // before the bound keeps its later hits.
    let hit_times = |arguments: &Value| -> Vec<(String, String)> {
        let document = call_ok(&server, "search_sessions", arguments.clone());
        document["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|hit| {
                (
                    hit["path"].as_str().expect("path").to_owned(),
                    hit["timestamp"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    };
    let every = hit_times(&search);
    let bound = "2026-11-30T19:15:37.200Z";
    let later: Vec<(String, String)> = every
        .iter()
        .filter(|(_, at)| at.as_str() >= bound)
        .cloned()
        .collect();
    assert!(!later.is_empty() && later.len() < every.len());
    assert_eq!(
        hit_times(&with(&search, &json!({ "startTimestamp": bound }))),
        later
    );
    assert_ne!(
        hit_paths(&with(&search, &json!({ "excludeSessionPath": first }))),
        all_hits
    );
    assert!(
        call_err(
            &server,
            "search_sessions",
            json!({ "pattern": "e", "startTimestamp": "nope" })
        )
        .starts_with("startTimestamp")
    );

    let stats = json!({ "by": ["session"], "limit": 500 });
    let row_paths = |arguments: &Value| -> BTreeSet<String> {
        let document = call_ok(&server, "session_stats", arguments.clone());
        document["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|row| row["path"].as_str().expect("path").to_owned())
            .collect()
    };
    let all_rows = row_paths(&stats);
    let mut stats_filters = filters[2..].to_vec();
    stats_filters.push(json!({ "id": &first_id[..8] }));
    stats_filters.push(json!({ "name": "zzz-no-such-name" }));
    for filter in &stats_filters {
        let kept = listed_paths(&server, filter.clone());
        let expected: BTreeSet<String> = all_rows.intersection(&kept).cloned().collect();
        assert_eq!(row_paths(&with(&stats, filter)), expected, "{filter}");
    }
    assert!(row_paths(&with(&stats, &json!({ "id": &first_id[..8] }))).contains(first));

    // rollup: the text table shows each session with its runs.
    let text = |rollup: bool| {
        let result = server
            .call(
                "session_stats",
                object(json!({ "by": ["session"], "rollup": rollup })),
            )
            .expect("a tool");
        text_of(&result)
    };
    assert!(text(true).contains("Session (with runs)"), "{}", text(true));
    assert!(!text(false).contains("Session (with runs)"));
}

/// The server's instructions name every tool, one line each.
#[test]
fn the_instructions_describe_every_tool() {
    use rmcp::ServerHandler;
    let server = server(&fixture("pi-real/sessions"));
    let instructions = server.get_info().instructions.expect("instructions");
    for tool in server.tools() {
        let line = format!("\n{}: ", tool.name);
        assert_eq!(instructions.matches(&line).count(), 1, "{instructions}");
    }
}

/// `session_stats` errors name the argument, not the CLI flag.
#[test]
fn stats_errors_name_the_argument() {
    let server = server(&fixture("pi-real/sessions"));
    for (arguments, argument) in [
        (json!({ "by": ["model"], "rollup": true }), "rollup: "),
        (json!({ "timeZone": "Mars/Base" }), "timeZone: "),
        (json!({ "startTimestamp": "nope" }), "startTimestamp: "),
        (json!({ "endTimestamp": "nope" }), "endTimestamp: "),
        (
            json!({ "startTimestamp": "2026-02-01", "endTimestamp": "2026-01-01" }),
            "endTimestamp: ",
        ),
    ] {
        let error = call_err(&server, "session_stats", arguments.clone());
        assert!(error.starts_with(argument), "{arguments}: {error}");
        assert!(!error.contains("--"), "{arguments}: {error}");
    }
}

/// Returns the fixed values a property's schema accepts (`enum`, `const`, through `$ref`,
/// `anyOf`/`oneOf` and array `items`), empty when it takes free values.
fn accepted_values(root: &Value, schema: &Value, out: &mut BTreeSet<String>) {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/$defs/");
        accepted_values(root, &root["$defs"][name], out);
    }
    for value in schema["enum"].as_array().into_iter().flatten() {
        out.extend(value.as_str().map(str::to_owned));
    }
    out.extend(schema["const"].as_str().map(str::to_owned));
    for key in ["anyOf", "oneOf"] {
        for branch in schema[key].as_array().into_iter().flatten() {
            accepted_values(root, branch, out);
        }
    }
    if schema["items"].is_object() {
        accepted_values(root, &schema["items"], out);
    }
}

/// Every tool's declared input schema says what it accepts. Its `required`
/// list is exactly the arguments it cannot do without; each fixed-value argument is declared
/// with its values, every one of them is accepted (alone or in an array where the argument
/// repeats) and any other value is refused naming them all.
#[test]
fn input_schemas_say_what_the_tools_accept() {
    let server = server(&fixture("pi-real/sessions"));
    let path = session_paths(&server).remove(0);
    let required: &[(&str, &[&str])] = &[
        ("list_sessions", &[]),
        ("session_entries", &["sessionPath"]),
        ("inspect_session", &["sessionPath", "view"]),
        ("search_sessions", &["pattern"]),
        ("session_stats", &[]),
        ("session_handoff", &["sessionPath"]),
        ("session_failures", &[]),
    ];
    let fixed: &[(&str, &[&str])] = &[
        ("list_sessions", &["cwdMatch", "sortBy", "sortDirection"]),
        ("session_entries", &["messageRoles", "types"]),
        ("inspect_session", &["case", "view"]),
        ("search_sessions", &["case", "cwdMatch", "order", "roles"]),
        ("session_stats", &["by", "cwdMatch"]),
        ("session_handoff", &[]),
        ("session_failures", &["by", "cwdMatch", "kind"]),
    ];
    let valid = |name: &str| match name {
        "sessionPath" => json!(path),
        "pattern" => json!("e"),
        "view" => json!("overview"),
        other => panic!("no valid value for {other}"),
    };
    let tools = server.tools();
    assert_eq!(tools.len(), required.len());
    for tool in &tools {
        let name = tool.name.as_ref();
        let schema = Value::Object((*tool.input_schema).clone());
        let mut declared: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        declared.sort_unstable();
        let expected = required
            .iter()
            .find(|(tool, _)| *tool == name)
            .expect("listed");
        assert_eq!(declared, expected.1, "{name}: required");
        let base: serde_json::Map<String, Value> = declared
            .iter()
            .map(|argument| ((*argument).to_owned(), valid(argument)))
            .collect();
        call_ok(&server, name, Value::Object(base.clone()));
        for argument in &declared {
            let mut without = base.clone();
            without.remove(*argument);
            let error = call_err(&server, name, Value::Object(without));
            assert!(
                error.contains(argument),
                "{name} without {argument}: {error}"
            );
        }
        let properties = schema["properties"].as_object().expect("properties");
        let mut fixed_here = Vec::new();
        for (argument, property) in properties {
            let mut values = BTreeSet::new();
            accepted_values(&schema, property, &mut values);
            if values.is_empty() {
                continue;
            }
            fixed_here.push(argument.as_str());
            let is_repeated = property.to_string().contains("\"array\"");
            for value in &values {
                let mut arguments = base.clone();
                arguments.insert(argument.clone(), json!(value));
                // The views that start from an entry or search need one.
                if name == "inspect_session" {
                    arguments.insert("entryId".to_owned(), json!("line:2"));
                    arguments.insert("query".to_owned(), json!("e"));
                }
                call_ok(&server, name, Value::Object(arguments.clone()));
                if is_repeated {
                    arguments.insert(argument.clone(), json!([value]));
                    call_ok(&server, name, Value::Object(arguments));
                }
            }
            let mut arguments = base.clone();
            arguments.insert(argument.clone(), json!("not-a-value"));
            let error = call_err(&server, name, Value::Object(arguments));
            assert!(
                error.starts_with(&format!("{argument}: ")),
                "{name}: {error}"
            );
            for value in &values {
                assert!(error.contains(value.as_str()), "{name}.{argument}: {error}");
            }
        }
        let expected = fixed
            .iter()
            .find(|(tool, _)| *tool == name)
            .expect("listed");
        assert_eq!(fixed_here, expected.1, "{name}: fixed-value arguments");
    }
    // A server that knows the calling session reads it when sessionPath is left out.
    let env = Environment {
        session_file: Some(path.clone()),
        ..Environment::default()
    };
    let knowing = Server::new(ServerOptions {
        stores: StoreFlags {
            sessions_root: Some(fixture("pi-real/sessions")),
            ..StoreFlags::default()
        },
        env,
        is_clock_live: false,
    });
    for tool in knowing.tools() {
        let schema = Value::Object((*tool.input_schema).clone());
        let declared = schema["required"].to_string();
        assert!(
            !declared.contains("sessionPath"),
            "{}: {declared}",
            tool.name
        );
    }
    call_ok(&knowing, "session_handoff", json!({}));
}

/// search_sessions, inspect_session's search and session_entries' search look in the same
/// texts with the same case rule and flags, so they find the same entries; an API error is
/// among the texts searched by default.
#[test]
fn the_searching_tools_find_the_same_entries() {
    let server = server(&fixture("pi-real/sessions"));
    let path = session_paths(&server)
        .into_iter()
        .find(|path| path.contains("01a22de2-540d"))
        .expect("the session with a failed response");
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids.dedup();
        ids
    };
    let ids = |items: &Value, field: &str| -> Vec<String> {
        sorted(
            items
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|item| item[field].as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        )
    };
    let options: [Value; 5] = [
        json!({}),
        json!({ "toolArgs": true }),
        json!({ "toolResults": true }),
        json!({ "case": "sensitive" }),
        json!({ "case": "insensitive", "thinking": true, "system": true }),
    ];
    let mut n_found = 0;
    for pattern in [
        "rate limit",
        "Rate Limit",
        "git push",
        "enoent",
        "readme",
        "main.rs",
    ] {
        for option in &options {
            let with = |mut arguments: Value| {
                for (key, value) in option.as_object().expect("object") {
                    arguments[key] = value.clone();
                }
                arguments
            };
            let search = call_ok(
                &server,
                "search_sessions",
                with(json!({ "pattern": pattern, "sessionPath": path, "limit": 200 })),
            );
            let inspect = call_ok(
                &server,
                "inspect_session",
                with(
                    json!({ "view": "search", "query": pattern, "sessionPath": path, "limit": 50 }),
                ),
            );
            let mut terms = json!({ "terms": [pattern] });
            for (key, value) in option.as_object().expect("object") {
                terms[key] = value.clone();
            }
            let entries = call_ok(
                &server,
                "session_entries",
                json!({ "search": terms, "sessionPath": path, "limit": 500 }),
            );
            let from_search = ids(&search["hits"], "entryId");
            assert_eq!(
                from_search,
                ids(&inspect["hits"], "entryId"),
                "{pattern} {option}"
            );
            assert_eq!(
                from_search,
                ids(&entries["entries"], "id"),
                "{pattern} {option}"
            );
            n_found += from_search.len();
        }
    }
    assert!(n_found > 0);
    let errors = call_ok(
        &server,
        "search_sessions",
        json!({ "pattern": "rate limit", "sessionPath": path }),
    );
    assert_eq!(
        errors["hits"][0]["field"], "errorMessage",
        "an API error is searched by default: {errors}"
    );
}

/// A search that finds nothing says which texts it did not look in, spelled as this tool's
/// arguments, so that an agent knows what to widen.
#[test]
fn a_search_without_hits_says_what_it_did_not_look_in() {
    let server = server(&fixture("pi-real/sessions"));
    let arguments = object(json!({ "pattern": "zzz-no-such-text" }));
    let result = server.call("search_sessions", arguments).expect("a tool");
    let text = text_of(&result);
    assert!(text.contains("no hits"), "{text}");
    assert!(
        text.contains("not searched: tool output (toolResults: true)"),
        "{text}"
    );
    let arguments = object(json!({
        "pattern": "zzz-no-such-text",
        "toolResults": true, "toolArgs": true, "thinking": true, "system": true
    }));
    let text = text_of(&server.call("search_sessions", arguments).expect("a tool"));
    assert!(!text.contains("not searched"), "{text}");
}
