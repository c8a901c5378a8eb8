//! `pi-retrospect mcp` end to end: the binary started as a child process and spoken to with
//! rmcp's client, as Pi or any MCP client would. Results validate against the declared output
//! schemas and agree with the CLI's `--json`; confinement escapes and bad arguments are tool
//! errors after which the server keeps serving; the server exits when stdin closes.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name);
    std::fs::canonicalize(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

type Client = RunningService<RoleClient, ()>;

/// Starts `pi-retrospect mcp --sessions-root ROOT` and completes the handshake.
async fn connect(root: &Path) -> Client {
    let mut command = common::binary();
    command.arg("mcp").arg("--sessions-root").arg(root);
    let transport =
        TokioChildProcess::new(tokio::process::Command::from(command)).expect("spawn the server");
    ().serve(transport).await.expect("MCP handshake")
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("not an object: {other}"),
    }
}

async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(object(arguments)))
        .await
        .unwrap_or_else(|error| panic!("{tool}: {error}"))
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect()
}

/// Returns the size of a result's `structuredContent` as compact JSON.
fn result_len(result: &CallToolResult) -> usize {
    result
        .structured_content
        .as_ref()
        .map_or(0, |value| value.to_string().len())
}

/// Calls `tool` and returns its `structuredContent`, checked against the declared schema.
async fn call_ok(client: &Client, tools: &[Tool], tool: &str, arguments: Value) -> Value {
    let result = call(client, tool, arguments.clone()).await;
    assert_ne!(result.is_error, Some(true), "{tool}: {}", text_of(&result));
    let n_bytes = result_len(&result);
    let structured = result.structured_content.expect("structuredContent");
    let schema = tools
        .iter()
        .find(|described| described.name == tool)
        .and_then(|described| described.output_schema.clone())
        .expect("a declared output schema");
    let validator =
        jsonschema::validator_for(&Value::Object((*schema).clone())).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&structured)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{tool} {arguments}: {errors:#?}");
    // Every result states its own size, which the CLI's documents do not carry.
    let mut structured = structured;
    if let Some(object) = structured.as_object_mut() {
        assert_eq!(
            object.remove("bytes"),
            Some(json!(n_bytes)),
            "{tool}: bytes is the page's size"
        );
        assert!(
            object
                .remove("sizeClass")
                .is_some_and(|class| class.is_string())
        );
    }
    structured
}

/// Returns the parsed `--json` output of the CLI run with `args`.
fn cli_json(args: &[&str]) -> Value {
    let output = common::binary().args(args).output().expect("run the CLI");
    // A search that found nothing exits 1 with its document.
    let is_empty_search = output.status.code() == Some(1)
        && args.iter().any(|arg| *arg == "search" || *arg == "--grep");
    if is_empty_search {
        return serde_json::from_slice(&output.stdout).expect("JSON");
    }
    serde_json::from_str(&common::stdout_of(&output)).expect("JSON")
}

fn without(mut document: Value, keys: &[&str]) -> Value {
    if let Some(object) = document.as_object_mut() {
        for key in keys {
            object.remove(*key);
        }
    }
    document
}

#[tokio::test(flavor = "current_thread")]
async fn every_tool_over_stdio_agrees_with_the_cli() {
    let root = fixture("pi-real/sessions");
    let root_text = root.display().to_string();
    let client = connect(&root).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|server| server.name.as_str()),
        Some("pi-retrospect")
    );
    assert!(info.capabilities.tools.is_some());

    let tools = client.list_all_tools().await.expect("tools/list");
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
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
    }
    let list_schema: Value =
        serde_json::from_str(pi_retrospect_render::schema::LIST_SCHEMA).expect("list schema");
    // `list --json`'s schema, plus the two optional fields a page cut to the byte bound adds.
    let mut declared = tools[0]
        .output_schema
        .as_deref()
        .cloned()
        .map(Value::Object);
    if let Some(properties) = declared
        .as_mut()
        .and_then(|schema| schema.get_mut("properties"))
        .and_then(Value::as_object_mut)
    {
        assert!(properties.remove("nextCursor").is_some());
        assert!(properties.remove("nWarnings").is_some());
        assert!(properties.remove("bytes").is_some());
        assert!(properties.remove("sizeClass").is_some());
    }
    // The declared schema is `list --json`'s with its references inlined (clients that do
    // not follow `$ref` show the real shapes): the same top-level fields, no reference left.
    let declared = declared.expect("a declared output schema");
    assert!(!declared.to_string().contains("$ref"));
    let keys = |schema: &Value| -> Vec<String> {
        schema["properties"]
            .as_object()
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    };
    assert_eq!(keys(&declared), keys(&list_schema));
    assert_eq!(
        keys(&declared["properties"]["sessions"]["items"]),
        keys(&list_schema["$defs"]["SessionMetadata"])
    );

    // list_sessions with {} is `list --json`, its text is `list`'s.
    let document = call_ok(&client, &tools, "list_sessions", json!({})).await;
    assert_eq!(
        document,
        cli_json(&["list", "--json", "--sessions-root", &root_text])
    );
    let result = call(&client, "list_sessions", json!({})).await;
    let output = common::binary()
        .args(["list", "--sessions-root", &root_text])
        .output()
        .expect("run list");
    assert_eq!(text_of(&result), common::stdout_of(&output));
    let newest = call_ok(
        &client,
        &tools,
        "list_sessions",
        json!({ "sortDirection": "desc", "limit": 1 }),
    )
    .await;
    // `limit` counts one page's sessions: the older ones continue after its cursor.
    let mut newest = newest;
    assert!(
        newest
            .as_object_mut()
            .and_then(|object| object.remove("nextCursor"))
            .is_some_and(|cursor| cursor.is_string())
    );
    assert_eq!(
        newest,
        cli_json(&[
            "list",
            "--json",
            "--sessions-root",
            &root_text,
            "--newest-first",
            "--limit",
            "1"
        ])
    );

    // The reading tools agree with `entries --json` and `inspect --json` on every session.
    let mut paths = Vec::new();
    fn flatten(sessions: &Value, out: &mut Vec<String>) {
        for session in sessions.as_array().expect("sessions") {
            out.push(session["path"].as_str().expect("path").to_owned());
            flatten(&session["subagentSessions"], out);
        }
    }
    flatten(&document["sessions"], &mut paths);
    assert_eq!(paths.len(), 10);
    for path in &paths {
        // Pages (bounded in bytes) joined back together, continuing at `nextStartLineNo`.
        let mut entries = call_ok(
            &client,
            &tools,
            "session_entries",
            json!({ "sessionPath": path }),
        )
        .await;
        while let Some(next) = entries["nextStartLineNo"].as_u64() {
            let page = call_ok(
                &client,
                &tools,
                "session_entries",
                json!({ "sessionPath": path, "startLineNo": next }),
            )
            .await;
            let more = page["entries"].as_array().expect("rows").clone();
            assert!(!more.is_empty(), "{path}: a continued page has rows");
            entries["entries"]
                .as_array_mut()
                .expect("rows")
                .extend(more);
            entries["nextStartLineNo"] = page["nextStartLineNo"].clone();
        }
        // A row's text is cut at 8,000 characters (and marked) by the tool; the CLI keeps it
        // whole. Compare whole rows, and cut rows by their prefix.
        let mut entries = without(entries, &["nextStartLineNo", "nextCursor", "nWarnings"]);
        let mut whole = cli_json(&["entries", path, "--raw", "--json"]);
        let rows = entries["entries"].as_array_mut().expect("rows");
        let whole_rows = whole["entries"].as_array_mut().expect("rows");
        assert_eq!(rows.len(), whole_rows.len(), "{path}");
        for (row, whole_row) in rows.iter_mut().zip(whole_rows.iter_mut()) {
            // A raw line the page left out is named by its size instead.
            if let Some(n_bytes) = row.get("rawBytes").and_then(Value::as_u64) {
                let raw = whole_row["raw"].clone();
                let n_raw_bytes = serde_json::to_string(&raw).expect("raw").len() as u64;
                assert!(
                    n_raw_bytes.abs_diff(n_bytes) <= n_bytes / 10,
                    "{path}: rawBytes"
                );
                row.as_object_mut().expect("row").remove("rawBytes");
                row["raw"] = raw;
            }
            if row.get("isTextTruncated") == Some(&Value::Bool(true)) {
                let cut = row["text"]
                    .as_str()
                    .expect("text")
                    .trim_end_matches('…')
                    .to_owned();
                let full = whole_row["text"].as_str().expect("text");
                assert!(full.starts_with(&cut), "{path}: a cut text is a prefix");
                row.as_object_mut().expect("row").remove("isTextTruncated");
                row["text"] = whole_row["text"].clone();
            }
        }
        for (row, whole_row) in entries["entries"]
            .as_array()
            .expect("rows")
            .iter()
            .zip(whole["entries"].as_array().expect("rows"))
        {
            let keys = |row: &Value| -> Vec<String> {
                row.as_object().expect("row").keys().cloned().collect()
            };
            assert_eq!(keys(row), keys(whole_row), "{path}: line {}", row["lineNo"]);
            for key in keys(row) {
                assert!(
                    row[&key] == whole_row[&key],
                    "{path}: line {}: {key}",
                    row["lineNo"]
                );
            }
        }
        assert_eq!(entries, whole, "{path}");
        let overview = call_ok(
            &client,
            &tools,
            "inspect_session",
            json!({ "sessionPath": path, "view": "overview" }),
        )
        .await;
        assert_eq!(
            without(overview, &["nWarnings", "nextCursor"]),
            without(
                cli_json(&["inspect", path, "overview", "--json"]),
                &["nextCursor"]
            ),
            "{path}"
        );
        let search = call_ok(
            &client,
            &tools,
            "inspect_session",
            json!({ "sessionPath": path, "view": "search", "query": "the", "limit": 5 }),
        )
        .await;
        // The tool's cursor names the file and its snapshot; the CLI's, the position only.
        assert_eq!(
            without(search, &["nWarnings", "nextCursor"]),
            without(
                cli_json(&["inspect", path, "search", "the", "--limit", "5", "--json"]),
                &["nextCursor"]
            ),
            "{path}"
        );
        let read = call_ok(
            &client,
            &tools,
            "inspect_session",
            json!({ "sessionPath": path, "view": "read", "entryId": "line:3", "before": 3, "after": 3 }),
        )
        .await;
        assert_eq!(
            without(read, &["nWarnings"]),
            cli_json(&["inspect", path, "read", "line:3", "--json"]),
            "{path}"
        );
    }

    // Escapes and bad arguments are tool errors naming the argument; the server keeps
    // serving after each.
    let outside = fixture("sessions").join("--home-user-app--");
    let cases = [
        (
            "session_entries",
            json!({ "sessionPath": "/etc/passwd" }),
            "sessionPath: ",
        ),
        (
            "session_entries",
            json!({ "sessionPath": format!("{root_text}/../sessions/x.jsonl") }),
            "sessionPath: ",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": outside.display().to_string(), "view": "overview" }),
            "sessionPath: ",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": "relative.jsonl", "view": "overview" }),
            "sessionPath: ",
        ),
        ("session_entries", json!({}), "sessionPath: required"),
        ("list_sessions", json!({ "limit": 0 }), "limit: "),
        (
            "list_sessions",
            json!({ "bogus": true }),
            "unknown field `bogus`",
        ),
        (
            "inspect_session",
            json!({ "sessionPath": &paths[0], "view": "read" }),
            "entryId: ",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let result = call(&client, tool, arguments.clone()).await;
        assert_eq!(result.is_error, Some(true), "{tool} {arguments}");
        let message = text_of(&result);
        assert!(message.contains(expected), "{tool} {arguments}: {message}");
        let again = call_ok(&client, &tools, "list_sessions", json!({ "limit": 1 })).await;
        assert_eq!(again["sessions"].as_array().map(Vec::len), Some(1));
    }
    let unknown = client
        .call_tool(CallToolRequestParams::new("no_such_tool"))
        .await;
    assert!(unknown.is_err(), "an unknown tool is a protocol error");
    call_ok(&client, &tools, "list_sessions", json!({})).await;

    client.cancel().await.expect("close the connection");
}

/// The server answers, then exits 0 with nothing on stderr when its input closes.
#[test]
fn the_server_exits_when_stdin_closes() {
    use std::io::BufRead;
    let root = fixture("sessions");
    let mut child = common::binary()
        .arg("mcp")
        .arg("--sessions-root")
        .arg(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the server");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    for message in [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "test", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "list_sessions", "arguments": { "limit": 1 } } }),
    ] {
        writeln!(stdin, "{message}").expect("write a request");
    }
    stdin.flush().expect("flush");
    // Every line on stdout is a JSON-RPC message; read until the call is answered.
    let mut responses = Vec::new();
    while !responses
        .iter()
        .any(|response: &Value| response["id"] == json!(2))
    {
        let mut line = String::new();
        let n_bytes = stdout.read_line(&mut line).expect("read stdout");
        assert!(n_bytes > 0, "the server closed stdout early: {responses:?}");
        responses.push(serde_json::from_str(&line).expect("a JSON-RPC message"));
    }
    assert_eq!(responses[0]["id"], json!(1));
    assert_eq!(
        responses[0]["result"]["serverInfo"]["name"],
        json!("pi-retrospect")
    );
    let call = &responses[responses.len() - 1];
    assert_eq!(call["result"]["isError"], json!(false));
    assert_eq!(
        call["result"]["structuredContent"]["sessions"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).expect("read the rest");
    assert_eq!(rest, "", "nothing more after stdin closed");
    let output = child.wait_with_output().expect("the server exits");
    assert!(output.status.success(), "exit {:?}", output.status);
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}
