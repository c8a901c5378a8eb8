// The extension's own rules, without Pi: run with `node --test` in pi-package/.

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import {
  INSTALL_HELP,
  adaptTool,
  childEnv,
  findBinary,
  prepareArguments,
  retroCommand,
  retroResult,
  storeArgs,
} from "../extension/host.js";

const CURRENT = "/agent/sessions/--home-me-app--/2026-12-01T10-00-00-000Z_0199.jsonl";

// Shaped like the server's tools/list rows.
const listSessions = {
  name: "list_sessions",
  title: "List Pi sessions",
  description: "Lists the sessions.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      excludeSessionPath: { type: ["string", "null"] },
      includeCurrentSession: { type: "boolean", default: false, description: "server text" },
      limit: { type: ["integer", "null"] },
    },
  },
  outputSchema: { type: "object" },
  annotations: { readOnlyHint: true },
};
const sessionEntries = {
  name: "session_entries",
  description: "Reads entries.",
  inputSchema: {
    type: "object",
    properties: { sessionPath: { type: "string", description: "The session." }, limit: { type: "integer" } },
    required: ["sessionPath"],
  },
  annotations: { readOnlyHint: true },
};
const sessionStats = {
  name: "session_stats",
  description: "Counts.",
  inputSchema: {
    type: "object",
    properties: { sessionPath: { type: ["string", "null"] }, cwdPrefix: { type: "array" }, by: { type: "array" } },
  },
};
// A tool this extension has never heard of, with a sessionPath: it gets the default only when
// it is one of the reading tools by name.
const sessionFailures = {
  name: "session_failures",
  inputSchema: { type: "object", properties: { sessionPath: { type: "string" }, kind: { type: "string" } }, required: ["sessionPath"] },
};
const unknownTool = {
  name: "some_new_tool",
  inputSchema: { type: "object", properties: { sessionPath: { type: "string" } }, required: ["sessionPath"] },
};

test("a reading tool's sessionPath becomes optional and defaults to the current session", () => {
  const tool = adaptTool(sessionEntries);
  assert.deepEqual(tool.parameters.required, []);
  assert.match(tool.parameters.properties.sessionPath.description, /^The session\.\nDefault: the session this Pi/);
  assert.deepEqual(sessionEntries.inputSchema.required, ["sessionPath"], "the server's schema is not changed");
  assert.deepEqual(prepareArguments(tool, { limit: 3 }, CURRENT), { args: { limit: 3, sessionPath: CURRENT } });
  assert.deepEqual(prepareArguments(tool, { sessionPath: "/other.jsonl" }, CURRENT), { args: { sessionPath: "/other.jsonl" } });
});

test("a tool added to the server later is handled by name, and other tools are left alone", () => {
  const failures = adaptTool(sessionFailures);
  assert.deepEqual(failures.parameters.required, []);
  assert.deepEqual(prepareArguments(failures, { kind: "tool_error" }, CURRENT).args, { kind: "tool_error", sessionPath: CURRENT });
  const other = adaptTool(unknownTool);
  assert.deepEqual(other.parameters.required, ["sessionPath"]);
  assert.deepEqual(prepareArguments(other, {}, CURRENT).args, {});
});

test("session_stats reads the current session only when the call chooses no sessions", () => {
  const tool = adaptTool(sessionStats);
  assert.equal(prepareArguments(tool, { by: ["model"] }, CURRENT).args.sessionPath, CURRENT);
  assert.deepEqual(prepareArguments(tool, { cwdPrefix: ["/home/me"] }, CURRENT).args, { cwdPrefix: ["/home/me"] });
  // An empty filter chooses nothing.
  assert.equal(prepareArguments(tool, { cwdPrefix: [] }, CURRENT).args.sessionPath, CURRENT);
});

test("without a session file a reading tool answers an error naming sessionPath", () => {
  const result = prepareArguments(adaptTool(sessionEntries), {}, undefined);
  assert.match(result.error, /^sessionPath: /);
});

test("list_sessions leaves the current session out unless includeCurrentSession", () => {
  const tool = adaptTool(listSessions);
  assert.match(tool.parameters.properties.includeCurrentSession.description, /session this Pi is running/);
  assert.match(tool.description, /^Lists the sessions\.\nIn this Pi the current session is known/);
  assert.equal(tool.label, "List Pi sessions");
  assert.deepEqual(prepareArguments(tool, {}, CURRENT).args, { excludeSessionPath: CURRENT });
  assert.deepEqual(prepareArguments(tool, { includeCurrentSession: true }, CURRENT).args, { includeCurrentSession: true });
  assert.deepEqual(prepareArguments(tool, { excludeSessionPath: "/x.jsonl" }, CURRENT).args, { excludeSessionPath: "/x.jsonl" });
  assert.deepEqual(prepareArguments(tool, {}, undefined).args, {});
});

test("includeCurrentSession is added when the server does not take it, and never forwarded then", () => {
  const bare = structuredClone(listSessions);
  delete bare.inputSchema.properties.includeCurrentSession;
  const tool = adaptTool(bare);
  assert.equal(tool.parameters.properties.includeCurrentSession.type, "boolean");
  assert.deepEqual(prepareArguments(tool, { includeCurrentSession: true, limit: 2 }, CURRENT).args, { limit: 2 });
  assert.deepEqual(prepareArguments(tool, { includeCurrentSession: false }, CURRENT).args, { excludeSessionPath: CURRENT });
});

test("the store is Pi's: its default root, or its custom session directory", () => {
  assert.deepEqual(storeArgs({ agentDir: "/a" }), ["--sessions-root", "/a/sessions"]);
  assert.deepEqual(storeArgs({ agentDir: "/a", sessionDir: "/a/sessions/--home-me-app--" }), ["--sessions-root", "/a/sessions"]);
  // A subagent run's directory lies deeper inside the default root.
  assert.deepEqual(storeArgs({ agentDir: "/a", sessionDir: "/a/sessions/--p--/stem/uuid/run-0" }), ["--sessions-root", "/a/sessions"]);
  assert.deepEqual(storeArgs({ agentDir: "/a", sessionDir: "/elsewhere/pi" }), ["--session-dir", "/elsewhere/pi"]);
  assert.deepEqual(storeArgs({ agentDir: "/a", sessionDir: "/a/sessions" }), ["--session-dir", "/a/sessions"]);
  assert.deepEqual(storeArgs({ agentDir: "/a", sessionDir: "/a/sessions-other" }), ["--session-dir", "/a/sessions-other"]);
});

test("the binary's environment names Pi's agent directory and no inherited session", () => {
  const env = childEnv({ PATH: "/bin", PI_SESSION_FILE: "/outer.jsonl", PI_CODING_AGENT_DIR: "/old" }, "/agent");
  assert.deepEqual(env, { PATH: "/bin", PI_CODING_AGENT_DIR: "/agent" });
});

test("the binary is found from PI_RETROSPECT_BIN, then PATH, then the package", () => {
  const dir = mkdtempSync(join(tmpdir(), "pi-retrospect-ext-"));
  try {
    const make = (path) => {
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, "#!/bin/sh\n");
      chmodSync(path, 0o755);
      return path;
    };
    const packaged = make(join(dir, "pkg/bin/linux-x64/pi-retrospect"));
    const onPath = make(join(dir, "path/pi-retrospect"));
    const named = make(join(dir, "named"));
    writeFileSync(join(dir, "notexec"), "");
    const options = { packageDir: join(dir, "pkg"), platform: "linux", arch: "x64" };
    const find = (env) => findBinary({ ...options, env });
    assert.deepEqual(find({ PI_RETROSPECT_BIN: named, PATH: join(dir, "path") }), { path: named, source: "PI_RETROSPECT_BIN" });
    assert.deepEqual(find({ PATH: `${join(dir, "empty")}:${join(dir, "path")}` }), { path: onPath, source: "PATH" });
    assert.deepEqual(find({ PATH: join(dir, "empty") }), { path: packaged, source: "package" });
    assert.deepEqual(findBinary({ ...options, arch: "arm64", env: {} }), { error: INSTALL_HELP });
    const wrong = find({ PI_RETROSPECT_BIN: join(dir, "notexec"), PATH: join(dir, "path") });
    assert.match(wrong.error, /^PI_RETROSPECT_BIN=.*notexec is not an executable file/);
    assert.match(INSTALL_HELP, /cargo install --locked --path crates\/cli/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("/retro runs the CLI command for the current project", () => {
  assert.deepEqual(retroCommand("stats"), { args: ["stats", "--here", "--color", "never"] });
  assert.deepEqual(retroCommand("  failures "), { args: ["failures", "--here", "--color", "never"] });
  assert.deepEqual(retroCommand("search -E no such  file"), {
    args: ["search", "--here", "--color", "never", "--", "-E no such  file"],
  });
  assert.match(retroCommand("search").usage, /needs the text/);
  assert.match(retroCommand("stats now").usage, /takes no arguments/);
  assert.match(retroCommand("").usage, /^usage: \/retro/);
  assert.match(retroCommand("bogus").usage, /^unknown \/retro command "bogus"/);
});

test("/retro shows the CLI's text, nothing found, or its error without the usage lines", () => {
  const run = { command: "pi-retrospect search" };
  assert.deepEqual(retroResult({ ...run, code: 0, stdout: "a\nb\n\n", stderr: "" }), { level: "info", text: "a\nb" });
  assert.deepEqual(retroResult({ ...run, code: 1, stdout: "", stderr: "" }), { level: "info", text: "pi-retrospect search: nothing found" });
  assert.deepEqual(
    retroResult({ ...run, code: 2, stdout: "", stderr: "error: unrecognized subcommand 'failures'\n\nUsage: pi-retrospect [OPTIONS] <COMMAND>\n" }),
    { level: "error", text: "pi-retrospect search: error: unrecognized subcommand 'failures'" },
  );
  assert.deepEqual(retroResult({ ...run, code: null, stdout: "", stderr: "" }), { level: "error", text: "pi-retrospect search: exited with status null" });
});
