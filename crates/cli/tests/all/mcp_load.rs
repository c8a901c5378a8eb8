//! `pi-retrospect mcp` under load. Hundreds of calls in flight from an MCP client are all
//! answered (the server runs a bounded number at a time and queues the rest in order). Spoken
//! to with raw JSON-RPC lines, so that the test decides when the client reads: hundreds of
//! calls in flight are answered once each, a client that
//! stops reading leaves the server's memory bounded (read from `/proc`, never timed), a call
//! past `--call-timeout` is a tool error naming what to narrow, a cancelled call is not
//! answered while the server keeps serving, and an oversized `-E` pattern is refused.

use crate::common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

fn fixture_session() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pi-real/sessions/--tmp-pi-real-fixture-home-user-project--");
    dir.join("2026-11-30T19-15-37-102Z_01a22de2-540d-7602-8b63-cd7f53f64b36.jsonl")
}

/// Returns a store of `n_copies` copies of one real session, each under its own file name.
fn store(n_copies: usize) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("--tmp-project--");
    std::fs::create_dir(&dir).expect("create the session dir");
    let session = std::fs::read(fixture_session()).expect("read the fixture session");
    for index in 0..n_copies {
        let name = format!("2026-11-30T19-15-37-102Z_01a22de2-540d-7602-8b63-{index:012}.jsonl");
        std::fs::write(dir.join(name), &session).expect("write a session copy");
    }
    root
}

/// A running server and the two ends of its stdio.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(root: &Path, extra: &[&str]) -> Server {
        let mut child = common::binary()
            .arg("mcp")
            .arg("--sessions-root")
            .arg(root)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the server");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut server = Server {
            child,
            stdin,
            stdout,
        };
        server.send(&json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "load-test", "version": "0"}}
        }));
        let answer = server.read();
        assert_eq!(answer["id"], "init", "{answer}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write a request");
        stdin.flush().expect("flush");
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read an answer");
        assert!(n > 0, "the server closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line}"))
    }

    /// Returns the server's peak and current resident memory in KiB.
    fn memory_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("read /proc status");
        let field = |name: &str| -> u64 {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or_else(|| panic!("no {name} in {status}"))
        };
        (field("VmHWM:"), field("VmRSS:"))
    }

    /// Closes stdin, waits for the server to exit and returns what it wrote meanwhile.
    fn close(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let rest: Vec<Value> = (&mut self.stdout)
            .lines()
            .map(|line| serde_json::from_str(&line.expect("read")).expect("a JSON line"))
            .collect();
        let status = self.child.wait().expect("wait for the server");
        assert!(status.success(), "the server exited with {status}");
        rest
    }
}

fn call(id: u64, tool: &str, arguments: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn three_hundred_calls_of_three_tools_in_flight_are_answered_once_each() {
    let root = store(20);
    let mut server = Server::start(root.path(), &[]);
    let n_calls = 300;
    for id in 0..n_calls {
        let tool = ["list_sessions", "search_sessions", "session_stats"][id as usize % 3];
        let arguments = match tool {
            "search_sessions" => json!({"pattern": "fixture", "limit": 5}),
            _ => json!({}),
        };
        server.send(&call(id, tool, &arguments));
    }
    let mut answered = HashSet::new();
    while answered.len() < n_calls as usize {
        let answer = server.read();
        let id = answer["id"].as_u64().expect("a numeric id");
        assert_ne!(
            answer["result"]["isError"],
            true,
            "{id}: {}",
            text_of(&answer)
        );
        assert!(answered.insert(id), "call {id} was answered twice");
    }
    assert_eq!(answered, (0..n_calls).collect::<HashSet<u64>>());
    server.close();
}

/// A client that writes its calls, stops reading and closes its end still gets every answer,
/// the calls waiting for their turn when it closed included; and a call that
/// reuses the id of one still open is answered too, under that id.
#[test]
fn every_call_read_is_answered_after_stdin_closes_and_reused_ids_are_answered() {
    let root = store(40);
    let mut server = Server::start(root.path(), &[]);
    let n_calls = 150;
    for id in 0..n_calls {
        let tool = ["session_stats", "search_sessions", "list_sessions"][id as usize % 3];
        let arguments = match tool {
            "search_sessions" => json!({"pattern": "fixture", "limit": 5}),
            _ => json!({}),
        };
        server.send(&call(id, tool, &arguments));
    }
    // Twice more the id 7, while the first call 7 may still wait or run.
    server.send(&call(7, "list_sessions", &json!({"limit": 1})));
    server.send(&call(7, "session_stats", &json!({"by": "model"})));
    // Not read for a while, so that the answers waiting to be read reach their bound and the
    // calls behind them wait when stdin closes.
    std::thread::sleep(Duration::from_millis(1500));
    let answers = server.close();
    let mut n_per_id = std::collections::HashMap::new();
    for answer in &answers {
        assert_ne!(answer["result"]["isError"], true, "{}", text_of(answer));
        *n_per_id
            .entry(answer["id"].as_u64().expect("a numeric id"))
            .or_insert(0) += 1;
    }
    assert_eq!(n_per_id.len(), n_calls as usize, "{n_per_id:?}");
    for id in 0..n_calls {
        let expected = if id == 7 { 3 } else { 1 };
        assert_eq!(n_per_id[&id], expected, "answers to call {id}");
    }
}

#[test]
fn a_client_that_stops_reading_leaves_the_server_memory_bounded() {
    let root = store(20);
    let mut server = Server::start(root.path(), &[]);
    let n_calls: u64 = 3000;
    let mut stdin = server.stdin.take().expect("stdin open");
    // The writer blocks once the server stops reading; a thread keeps writing meanwhile.
    let writer = std::thread::spawn(move || {
        for id in 0..n_calls {
            let request = call(id, "list_sessions", &json!({}));
            writeln!(stdin, "{request}").expect("write a request");
        }
        stdin.flush().expect("flush");
        stdin
    });
    std::thread::sleep(Duration::from_secs(3));
    let (peak_kib, now_kib) = server.memory_kib();
    // Generous: an unbounded server holds thousands of pages of list_sessions here.
    assert!(
        peak_kib < 256 * 1024 && now_kib < 256 * 1024,
        "peak {peak_kib} KiB, now {now_kib} KiB"
    );
    let mut n_answered = 0;
    let mut n_busy = 0;
    let mut ids = HashSet::new();
    while ids.len() < n_calls as usize {
        let answer = server.read();
        let id = answer["id"].as_u64().expect("a numeric id");
        assert!(ids.insert(id), "call {id} was answered twice");
        if answer["result"]["isError"] == true {
            let text = text_of(&answer);
            assert!(text.contains("retry"), "{id}: {text}");
            n_busy += 1;
        } else {
            n_answered += 1;
        }
    }
    assert!(n_answered > 0, "no call ran ({n_busy} refused as busy)");
    server.stdin = Some(writer.join().expect("the writer finished"));
    server.close();
}

#[test]
fn a_call_past_the_time_budget_is_a_tool_error_naming_what_to_narrow() {
    let root = store(400);
    let mut server = Server::start(root.path(), &["--call-timeout", "0.001"]);
    let arguments = json!({"pattern": "z[a-y]{0,40}q[0-9]", "regex": true, "toolResults": true});
    server.send(&call(1, "search_sessions", &arguments));
    let answer = server.read();
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = text_of(&answer);
    assert!(text.contains("--call-timeout"), "{text}");
    assert!(text.contains("sessionPath"), "{text}");
    server.close();
}

#[test]
fn a_cancelled_call_is_not_answered_and_the_server_keeps_serving() {
    let root = store(400);
    let mut server = Server::start(root.path(), &[]);
    let arguments = json!({"pattern": "z[a-y]{0,40}q[0-9]", "regex": true, "toolResults": true});
    server.send(&call(1, "search_sessions", &arguments));
    server.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1, "reason": "test"}}),
    );
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let answer = server.read();
    assert_eq!(answer["id"], 2, "{answer}");
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    let rest = server.close();
    assert!(
        rest.iter().all(|answer| answer["id"] != 1),
        "the cancelled call was answered: {rest:?}"
    );
}

#[test]
fn a_huge_bounded_repetition_is_refused_naming_the_pattern() {
    let root = store(1);
    let mut server = Server::start(root.path(), &[]);
    let pattern = r"[\s\S]{0,3000}q";
    server.send(&call(
        1,
        "search_sessions",
        &json!({"pattern": pattern, "regex": true}),
    ));
    let answer = server.read();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = text_of(&answer);
    assert!(text.contains(r"[\\s\\S]{0,3000}q"), "{text}");
    assert!(text.contains("size limit"), "{text}");
    server.close();
}

fn fixture(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name);
    std::fs::canonicalize(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

async fn connect(root: &Path) -> RunningService<RoleClient, ()> {
    let mut command = common::binary();
    command.arg("mcp").arg("--sessions-root").arg(root);
    let transport =
        TokioChildProcess::new(tokio::process::Command::from(command)).expect("spawn the server");
    ().serve(transport).await.expect("MCP handshake")
}

#[tokio::test(flavor = "current_thread")]
async fn three_hundred_calls_in_flight_are_all_answered() {
    let client = connect(&fixture("sessions")).await;
    let mut calls = tokio::task::JoinSet::new();
    for index in 0..300 {
        let peer = client.peer().clone();
        calls.spawn(async move {
            let params = CallToolRequestParams::new("list_sessions".to_owned());
            (index, peer.call_tool(params).await)
        });
    }
    let results = calls.join_all().await;
    assert_eq!(results.len(), 300);
    for (index, result) in results {
        let result = result.unwrap_or_else(|error| panic!("call {index}: {error}"));
        assert_ne!(result.is_error, Some(true), "call {index}: {result:?}");
        assert!(result.structured_content.is_some(), "call {index}");
    }
    client.cancel().await.expect("close the connection");
}
