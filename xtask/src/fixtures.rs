//! The committed synthetic session stores under `fixtures/`.
//!
//! `fixtures/sessions` holds every case of the `list` contract's testing policy, laid out as
//! Pi and pi-subagents lay out a real store; on it the reference implementation and ours
//! agree. `fixtures/beyond/sessions` holds the cases where the reference breaks its own
//! documented guarantees and ours keeps them, plus layouts the reference does not know
//! (`forks/` runs). Every header is hand-written; no real session data is committed.
//!
//! Cases that git cannot store (a FIFO, names that are not UTF-8) are built by the tests
//! themselves in temporary directories.

use std::fs;
use std::io;
use std::path::Path;

/// One thing to create under a fixture root.
#[derive(Debug, Clone)]
pub enum Node {
    /// A regular file with these bytes.
    File(String, Vec<u8>),
    /// A directory (created even when empty; a `.gitkeep` keeps it in git).
    Dir(String),
    /// A symbolic link at the first path pointing at the second (relative) target.
    Symlink(String, String),
}

/// Returns a header line (no newline) with the given fields and extra JSON members.
pub fn header(id: &str, timestamp: &str, cwd: &str, extra: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{timestamp}","cwd":"{cwd}"{extra}}}"#
    )
}

/// Returns a session file body: the header line, then a couple of ordinary entries.
pub fn session(id: &str, timestamp: &str, cwd: &str, extra: &str) -> Vec<u8> {
    let mut body = header(id, timestamp, cwd, extra);
    body.push('\n');
    body.push_str(&format!(
        r#"{{"type":"message","id":"e1","parentId":null,"timestamp":"{timestamp}","message":{{"role":"user","content":"hello","timestamp":0}}}}"#
    ));
    body.push('\n');
    body.into_bytes()
}

fn file(path: &str, bytes: impl Into<Vec<u8>>) -> Node {
    Node::File(path.to_owned(), bytes.into())
}

fn id(n: u32) -> String {
    format!("01990000-0000-7000-8000-{n:012}")
}

/// Returns a header padded with a `pad` member to exactly `len` bytes.
fn padded_header(n: u32, timestamp: &str, cwd: &str, len: usize) -> String {
    let bare = header(&id(n), timestamp, cwd, r#","pad":"""#);
    let pad = "x".repeat(len - bare.len());
    header(&id(n), timestamp, cwd, &format!(r#","pad":"{pad}""#))
}

const APP: &str = "--home-user-app--";
const TOOL: &str = "--home-user-tool--";
const APP_CWD: &str = "/home/user/app";
const TOOL_CWD: &str = "/home/user/tool";
const LAUNCH_A: &str = "5f0c2a4e-1b7d-4c2a-9e3f-000000000001";
const LAUNCH_B: &str = "5f0c2a4e-1b7d-4c2a-9e3f-000000000002";
const LAUNCH_C: &str = "5f0c2a4e-1b7d-4c2a-9e3f-000000000003";

/// Returns the contract store: every case of the testing policy.
pub fn contract_store() -> Vec<Node> {
    let parent = "2026-09-01T10-00-00-000Z_01990000-0000-7000-8000-000000000001";
    let mut nodes = vec![
        // A parent with two runs in one launch slot, a second launch, a grandchild, an
        // unreadable run, and an artifact copy that is never a session.
        file(
            &format!("{APP}/{parent}.jsonl"),
            session(&id(1), "2026-09-01T10:00:00.000Z", APP_CWD, ""),
        ),
        file(
            &format!("{APP}/{parent}/{LAUNCH_A}/run-0/session.jsonl"),
            session(&id(2), "2026-09-01T10:05:00.000Z", APP_CWD, ""),
        ),
        file(
            &format!("{APP}/{parent}/{LAUNCH_A}/run-1/session.jsonl"),
            session(&id(3), "2026-09-01T10:04:00.000Z", APP_CWD, ""),
        ),
        file(
            &format!("{APP}/{parent}/{LAUNCH_B}/run-0/session.jsonl"),
            session(&id(4), "2026-09-01T10:06:00.000Z", APP_CWD, ""),
        ),
        file(
            &format!("{APP}/{parent}/{LAUNCH_B}/run-0/session/{LAUNCH_C}/run-0/session.jsonl"),
            session(&id(5), "2026-09-01T10:07:00.000Z", APP_CWD, ""),
        ),
        file(
            &format!("{APP}/{parent}/{LAUNCH_B}/run-1/session.jsonl"),
            b"{\"type\":\"session\",\"id\":\"broken-child\"\n".to_vec(),
        ),
        // A run whose launch slot sits outside any run container: it falls back to the parent.
        file(
            &format!("{APP}/{parent}/{LAUNCH_C}/nested/run-0/session.jsonl"),
            session(&id(6), "2026-09-01T10:03:00.000Z", APP_CWD, ""),
        ),
        file(
            &format!("{APP}/{parent}/{LAUNCH_A}/run-0/notes.jsonl"),
            session(&id(7), "2026-09-01T10:05:30.000Z", APP_CWD, ""),
        ),
        file(
            &format!(
                "{APP}/subagent-artifacts/2026-09-01T10-05-00-000Z_{LAUNCH_A}_transcript.jsonl"
            ),
            b"{\"type\":\"message\",\"role\":\"user\"}\n".to_vec(),
        ),
        // Ties: the same instant written twice (once with an offset) is ordered by path.
        file(
            &format!("{APP}/2026-09-02T08-00-00-000Z_tie-b.jsonl"),
            session(&id(10), "2026-09-02T08:00:00.000Z", APP_CWD, ""),
        ),
        file(
            &format!("{APP}/2026-09-02T08-00-00-000Z_tie-a.jsonl"),
            session(&id(11), "2026-09-02T10:00:00.000+02:00", APP_CWD, ""),
        ),
        // Fork lineage is copied verbatim; an empty parentSession is absent.
        file(
            &format!("{APP}/2026-09-03T09-00-00-000Z_fork.jsonl"),
            session(
                &id(12),
                "2026-09-03T09:00:00.000Z",
                APP_CWD,
                &format!(
                    r#","parentSession":"/home/user/.pi/agent/sessions/{APP}/{parent}.jsonl""#
                ),
            ),
        ),
        file(
            &format!("{APP}/2026-09-03T09-30-00-000Z_empty-parent.jsonl"),
            session(
                &id(13),
                "2026-09-03T09:30:00.000Z",
                APP_CWD,
                r#","parentSession":"""#,
            ),
        ),
        // Encoding details that must not matter: a BOM, CRLF, a header with no newline at all.
        file(
            &format!("{APP}/2026-09-04T09-00-00-000Z_bom.jsonl"),
            [
                b"\xEF\xBB\xBF".as_slice(),
                &session(&id(14), "2026-09-04T09:00:00.000Z", APP_CWD, ""),
            ]
            .concat(),
        ),
        file(
            &format!("{APP}/2026-09-04T10-00-00-000Z_crlf.jsonl"),
            format!(
                "{}\r\n",
                header(&id(15), "2026-09-04T10:00:00.000Z", APP_CWD, "")
            ),
        ),
        file(
            &format!("{APP}/2026-09-04T11-00-00-000Z_no-newline.jsonl"),
            header(&id(16), "2026-09-04T11:00:00.000Z", APP_CWD, ""),
        ),
        file(
            &format!("{APP}/2026-09-04T12-00-00-000Z_header-4096.jsonl"),
            format!(
                "{}\n",
                padded_header(17, "2026-09-04T12:00:00.000Z", APP_CWD, 4096)
            ),
        ),
        file(
            &format!("{APP}/2026-09-04T13-00-00-000Z_header-4097.jsonl"),
            format!(
                "{}\n",
                padded_header(18, "2026-09-04T13:00:00.000Z", APP_CWD, 4097)
            ),
        ),
        file(
            &format!("{APP}/2026-09-05T08-00-00-000Z_leap-day.jsonl"),
            session(&id(19), "2024-02-29T08:00:00.000Z", APP_CWD, ""),
        ),
        // An orphan stem: a container with no session file beside it is never visited.
        file(
            &format!("{APP}/2026-08-01T00-00-00-000Z_orphan/{LAUNCH_A}/run-0/session.jsonl"),
            session(&id(20), "2026-08-01T00:00:00.000Z", APP_CWD, ""),
        ),
        // Out of scope by rule: a non-slug directory and a stray root-level file.
        file(
            "permission-forwarding/2026-09-01T00-00-00-000Z_x.jsonl",
            session(&id(21), "2026-09-01T00:00:00.000Z", APP_CWD, ""),
        ),
        file(
            "stray.jsonl",
            session(&id(22), "2026-09-01T00:00:00.000Z", APP_CWD, ""),
        ),
        file(&format!("{APP}/notes.txt"), b"not a session\n".to_vec()),
        // Symlinks are never followed: a linked project directory and a linked session file.
        Node::Symlink("--linked-project--".to_owned(), TOOL.to_owned()),
        Node::Symlink(
            format!("{TOOL}/2026-09-06T00-00-00-000Z_link.jsonl"),
            format!("../{APP}/{parent}.jsonl"),
        ),
        file(
            &format!("{TOOL}/2026-09-06T10-00-00-000Z_01990000-0000-7000-8000-000000000030.jsonl"),
            session(&id(30), "2026-09-06T10:00:00.000Z", TOOL_CWD, ""),
        ),
        Node::Dir("--empty-project--".to_owned()),
    ];

    // One broken top-level file per warning branch of the validation table.
    let broken: [(&str, Vec<u8>); 11] = [
        ("empty-file", Vec::new()),
        ("empty-line", b"\n{\"type\":\"session\"}\n".to_vec()),
        ("blank-line", b"   \t\n".to_vec()),
        ("not-json", b"{not json}\n".to_vec()),
        ("not-object", b"[\"session\"]\n".to_vec()),
        (
            "not-session",
            b"{\"type\":\"message\",\"id\":\"x\"}\n".to_vec(),
        ),
        (
            "no-id",
            format!(
                r#"{{"type":"session","timestamp":"2026-09-07T00:00:00.000Z","cwd":"{APP_CWD}"}}"#
            )
            .into_bytes(),
        ),
        (
            "empty-cwd",
            header(&id(40), "2026-09-07T00:00:00.000Z", "", "").into_bytes(),
        ),
        (
            "no-timestamp",
            format!(
                r#"{{"type":"session","id":"{}","cwd":"{APP_CWD}"}}"#,
                id(41)
            )
            .into_bytes(),
        ),
        (
            "impossible-date",
            header(&id(42), "2026-02-30T08:00:00.000Z", APP_CWD, "").into_bytes(),
        ),
        (
            "parent-not-string",
            header(
                &id(43),
                "2026-09-07T00:00:00.000Z",
                APP_CWD,
                r#","parentSession":42"#,
            )
            .into_bytes(),
        ),
    ];
    for (name, bytes) in broken {
        nodes.push(file(&format!("{TOOL}/broken-{name}.jsonl"), bytes));
    }
    nodes
}

/// Returns the store of cases where the reference breaks its documented guarantees.
pub fn beyond_store() -> Vec<Node> {
    const P: &str = "--home-user-beyond--";
    const CWD: &str = "/home/user/beyond";
    let parent = "2026-10-01T10-00-00-000Z_01990000-0000-7000-8000-000000000100";
    vec![
        // Runs started from a fork of the parent's context sit under `forks/`, and may launch
        // runs of their own; artifact copies under the container are never sessions.
        file(
            &format!("{P}/{parent}.jsonl"),
            session(&id(100), "2026-10-01T10:00:00.000Z", CWD, ""),
        ),
        file(
            &format!(
                "{P}/{parent}/forks/2026-10-01T10-01-00-000Z_01990000-0000-7000-8000-000000000101.jsonl"
            ),
            session(
                &id(101),
                "2026-10-01T10:01:00.000Z",
                CWD,
                &format!(r#","parentSession":"/home/user/.pi/agent/sessions/{P}/{parent}.jsonl""#),
            ),
        ),
        file(
            &format!(
                "{P}/{parent}/forks/2026-10-01T10-01-00-000Z_01990000-0000-7000-8000-000000000101/{LAUNCH_A}/run-0/session.jsonl"
            ),
            session(&id(102), "2026-10-01T10:02:00.000Z", CWD, ""),
        ),
        file(
            &format!("{P}/{parent}/{LAUNCH_A}/run-0/session.jsonl"),
            session(&id(103), "2026-10-01T10:00:30.000Z", CWD, ""),
        ),
        file(
            &format!("{P}/{parent}/subagent-artifacts/run-0/session.jsonl"),
            session(&id(104), "2026-10-01T10:03:00.000Z", CWD, ""),
        ),
        // Timestamps: second 60, an offset past 23:59, and sub-millisecond order.
        file(
            &format!("{P}/2026-10-02T00-00-00-000Z_second-60.jsonl"),
            session(&id(110), "2026-10-02T23:59:60.000Z", CWD, ""),
        ),
        file(
            &format!("{P}/2026-10-02T00-00-00-000Z_offset-24.jsonl"),
            session(&id(111), "2026-10-02T10:00:00.000+24:00", CWD, ""),
        ),
        file(
            &format!("{P}/2026-10-03T00-00-00-000Z_a-later.jsonl"),
            session(&id(112), "2026-10-03T00:00:00.0002Z", CWD, ""),
        ),
        file(
            &format!("{P}/2026-10-03T00-00-00-000Z_b-earlier.jsonl"),
            session(&id(113), "2026-10-03T00:00:00.0001Z", CWD, ""),
        ),
        // cwd must be absolute: POSIX and Windows forms pass, a relative one does not.
        file(
            &format!("{P}/2026-10-04T00-00-00-000Z_relative-cwd.jsonl"),
            session(&id(120), "2026-10-04T00:00:00.000Z", "projects/app", ""),
        ),
        file(
            &format!("{P}/2026-10-04T01-00-00-000Z_windows-cwd.jsonl"),
            session(
                &id(121),
                "2026-10-04T01:00:00.000Z",
                "C:\\\\Users\\\\me\\\\app",
                "",
            ),
        ),
        file(
            &format!("{P}/2026-10-04T02-00-00-000Z_unc-cwd.jsonl"),
            session(
                &id(122),
                "2026-10-04T02:00:00.000Z",
                "\\\\\\\\server\\\\share\\\\app",
                "",
            ),
        ),
        // Strict JSON: a lone surrogate escape, which JavaScript's parser lets through.
        file(
            &format!("{P}/2026-10-04T03-00-00-000Z_lone-surrogate.jsonl"),
            session("bad-\\ud800", "2026-10-04T03:00:00.000Z", CWD, ""),
        ),
        // Containers: a stem that is empty, `.` or `..` has none, so these never pick up the
        // runs of their siblings or of the whole project.
        file(
            &format!("{P}/.jsonl"),
            session(&id(130), "2026-10-05T00:00:00.000Z", CWD, ""),
        ),
        file(
            &format!("{P}/..jsonl"),
            session(&id(131), "2026-10-05T00:00:01.000Z", CWD, ""),
        ),
        file(
            &format!("{P}/...jsonl"),
            session(&id(132), "2026-10-05T00:00:02.000Z", CWD, ""),
        ),
        // A container that is a file, and one that is a symlink to a real run tree.
        file(
            &format!("{P}/2026-10-06T00-00-00-000Z_file-container.jsonl"),
            session(&id(140), "2026-10-06T00:00:00.000Z", CWD, ""),
        ),
        file(
            &format!("{P}/2026-10-06T00-00-00-000Z_file-container"),
            b"not a directory\n".to_vec(),
        ),
        file(
            &format!("{P}/2026-10-06T01-00-00-000Z_link-container.jsonl"),
            session(&id(141), "2026-10-06T01:00:00.000Z", CWD, ""),
        ),
        Node::Symlink(
            format!("{P}/2026-10-06T01-00-00-000Z_link-container"),
            parent.to_owned(),
        ),
    ]
}

/// Returns a session body with a first user message and, optionally, a name (`session_info`).
fn named_session(id: &str, timestamp: &str, cwd: &str, first: &str, name: Option<&str>) -> Vec<u8> {
    let mut body = header(id, timestamp, cwd, "");
    body.push('\n');
    body.push_str(&format!(
        r#"{{"type":"message","id":"e1","parentId":null,"timestamp":"{timestamp}","message":{{"role":"user","content":[{{"type":"text","text":{}}}],"timestamp":0}}}}"#,
        serde_json::Value::from(first)
    ));
    body.push('\n');
    body.push_str(&format!(
        r#"{{"type":"message","id":"e2","parentId":"e1","timestamp":"{timestamp}","message":{{"role":"assistant","content":[{{"type":"text","text":"ok"}}],"timestamp":0}}}}"#
    ));
    body.push('\n');
    if let Some(name) = name {
        body.push_str(&format!(
            r#"{{"type":"session_info","id":"e3","parentId":"e2","timestamp":"{timestamp}","name":{}}}"#,
            serde_json::Value::from(name)
        ));
        body.push('\n');
    }
    body.into_bytes()
}

/// Returns a whole agent directory for the filter and store tests: a default root with
/// worktree-shaped cwds, names and runs; a flat custom session directory with `forks/` runs
/// and a `subagent-artifacts/` dump; and a `sessions-archive/`.
pub fn agent_dir() -> Vec<Node> {
    let s = "sessions";
    let app = "--repos-app--";
    let stem = |n: u32, time: &str| format!("{time}_{}", id(n));
    let parent = stem(200, "2026-09-10T09-00-00-000Z");
    let custom_parent = stem(210, "2026-09-20T09-00-00-000Z");
    vec![
        file(
            &format!("{s}/{app}/{parent}.jsonl"),
            named_session(
                &id(200),
                "2026-09-10T09:00:00.000Z",
                "/repos/app",
                "Fix the flaky login test",
                Some("Flaky login"),
            ),
        ),
        file(
            &format!("{s}/{app}/{parent}/{LAUNCH_A}/run-0/session.jsonl"),
            named_session(
                &id(201),
                "2026-09-10T09:05:00.000Z",
                "/repos/app",
                "Run the test suite",
                None,
            ),
        ),
        file(
            &format!("{s}/{app}/{parent}/{LAUNCH_A}/run-0/session/{LAUNCH_B}/run-0/session.jsonl"),
            named_session(
                &id(202),
                "2026-09-10T09:06:00.000Z",
                "/repos/app",
                "Grep for the fixture",
                None,
            ),
        ),
        file(
            &format!("{s}/{app}/{}.jsonl", stem(203, "2026-09-11T09-00-00-000Z")),
            named_session(
                "a1b2c3d4-0000-7000-8000-000000000203",
                "2026-09-11T09:00:00.000Z",
                "/repos/app/sub",
                "Work in a subdirectory",
                None,
            ),
        ),
        file(
            &format!(
                "{s}/--repos-app-fix--/{}.jsonl",
                stem(204, "2026-09-12T09-00-00-000Z")
            ),
            named_session(
                &id(204),
                "2026-09-12T09:00:00.000Z",
                "/repos/app-fix",
                "Worktree \u{1b}[31mred\u{1b}[0m \u{202e}txet",
                Some("Hotfix branch"),
            ),
        ),
        file(
            &format!(
                "{s}/--repos-application--/{}.jsonl",
                stem(205, "2026-09-13T09-00-00-000Z")
            ),
            named_session(
                &id(205),
                "2026-09-13T09:00:00.000Z",
                "/repos/application",
                "A different project",
                None,
            ),
        ),
        file(
            &format!(
                "{s}/--repos-app--/{}.jsonl",
                stem(206, "2026-09-30T23-30-00-000Z")
            ),
            named_session(
                &id(206),
                "2026-09-30T23:30:00.000Z",
                "/repos/app",
                "Late on the last day of September",
                None,
            ),
        ),
        // A flat custom session directory: files directly inside, runs under each stem.
        file(
            &format!("custom-sessions/{custom_parent}.jsonl"),
            named_session(
                &id(210),
                "2026-09-20T09:00:00.000Z",
                "/repos/app",
                "Custom directory session",
                Some("Custom"),
            ),
        ),
        file(
            &format!(
                "custom-sessions/{custom_parent}/forks/{}.jsonl",
                stem(211, "2026-09-20T09-01-00-000Z")
            ),
            named_session(
                &id(211),
                "2026-09-20T09:01:00.000Z",
                "/repos/app",
                "Forked context run",
                None,
            ),
        ),
        file(
            &format!("custom-sessions/{custom_parent}/{LAUNCH_A}/run-0/session.jsonl"),
            named_session(
                &id(212),
                "2026-09-20T09:02:00.000Z",
                "/repos/app",
                "Plain run",
                None,
            ),
        ),
        file(
            &format!(
                "custom-sessions/subagent-artifacts/2026-09-20T09-02-00-000Z_{LAUNCH_A}_transcript.jsonl"
            ),
            b"{\"type\":\"message\",\"role\":\"user\"}\n".to_vec(),
        ),
        file(
            &format!("custom-sessions/{custom_parent}/subagent-artifacts/run-0/session.jsonl"),
            named_session(
                &id(213),
                "2026-09-20T09:03:00.000Z",
                "/repos/app",
                "Artifact copy",
                None,
            ),
        ),
        // An archive beside the sessions root.
        file(
            &format!(
                "sessions-archive/{app}/{}.jsonl",
                stem(220, "2026-01-05T09-00-00-000Z")
            ),
            named_session(
                &id(220),
                "2026-01-05T09:00:00.000Z",
                "/repos/app",
                "Archived long ago",
                Some("Old work"),
            ),
        ),
    ]
}

/// Writes `nodes` under `root`, replacing whatever was there.
pub fn materialize(root: &Path, nodes: &[Node]) -> io::Result<()> {
    if fs::symlink_metadata(root).is_ok() {
        fs::remove_dir_all(root)?;
    }
    fs::create_dir_all(root)?;
    for node in nodes {
        match node {
            Node::File(path, bytes) => {
                let path = root.join(path);
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent)?;
                }
                fs::write(path, bytes)?;
            }
            Node::Dir(path) => {
                let path = root.join(path);
                fs::create_dir_all(&path)?;
                fs::write(path.join(".gitkeep"), b"")?;
            }
            Node::Symlink(path, target) => {
                let path = root.join(path);
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent)?;
                }
                std::os::unix::fs::symlink(target, path)?;
            }
        }
    }
    Ok(())
}

/// Regenerates both committed stores under `fixtures_dir`.
pub fn write_all(fixtures_dir: &Path) -> io::Result<()> {
    materialize(&fixtures_dir.join("sessions"), &contract_store())?;
    materialize(
        &fixtures_dir.join("beyond").join("sessions"),
        &beyond_store(),
    )?;
    materialize(&fixtures_dir.join("agent"), &agent_dir())
}
