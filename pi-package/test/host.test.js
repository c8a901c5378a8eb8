// The extension's own rules, without Pi: run with `node --test` in pi-package/.

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { test } from "node:test";

import {
  ALL_TOOLS,
  INSTALL_HELP,
  MAX_TIMER_MS,
  adaptTool,
  completeResult,
  firstSentence,
  formatFailureGroups,
  childEnv,
  findBinary,
  parseTimeout,
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
    properties: {
      sessionPath: { type: ["string", "null"] },
      cwdPrefix: { type: "array" },
      by: { type: "array" },
      excludeSessionPath: { type: ["string", "null"] },
    },
  },
};
// A tool this extension has never heard of, with a sessionPath: it gets the default only when
// it is one of the reading tools by name.
const sessionFailures = {
  name: "session_failures",
  inputSchema: {
    type: "object",
    properties: {
      sessionPath: { type: "string" },
      kind: { type: "string" },
      excludeSessionPath: { type: ["string", "null"] },
      includeCurrentSession: { type: "boolean" },
    },
    required: ["sessionPath"],
  },
};
const searchSessions = {
  name: "search_sessions",
  inputSchema: {
    type: "object",
    properties: { pattern: { type: "string" }, excludeSessionPath: { type: ["string", "null"] }, includeCurrentSession: { type: "boolean" } },
    required: ["pattern"],
  },
};
const unknownTool = {
  name: "some_new_tool",
  inputSchema: { type: "object", properties: { sessionPath: { type: "string" } }, required: ["sessionPath"] },
};

test("a one-session tool's sessionPath becomes optional and defaults to the current session", () => {
  const tool = adaptTool(sessionEntries);
  assert.deepEqual(tool.parameters.required, []);
  assert.match(tool.parameters.properties.sessionPath.description, /default: this Pi's session/);
  assert.deepEqual(sessionEntries.inputSchema.required, ["sessionPath"], "the server's schema is not changed");
  const prepared = prepareArguments(tool, { limit: 3 }, CURRENT);
  assert.deepEqual(prepared.args, { limit: 3, sessionPath: CURRENT });
  assert.match(prepared.sessionsRead, /current session/);
  assert.deepEqual(prepareArguments(tool, { sessionPath: "/other.jsonl" }, CURRENT).args, { sessionPath: "/other.jsonl" });
});

test("session_failures reads the current session only for a call with no arguments", () => {
  const failures = adaptTool(sessionFailures);
  assert.deepEqual(failures.parameters.required, []);
  assert.deepEqual(prepareArguments(failures, {}, CURRENT).args, { sessionPath: CURRENT });
  assert.deepEqual(prepareArguments(failures, { limit: 5 }, CURRENT).args, { limit: 5, sessionPath: CURRENT });
  // Any other argument asks about the store, without the current session.
  for (const call of [{ kind: "tool_error" }, { startTimestamp: "7d", by: "signature" }, { includeCurrentSession: false }]) {
    const prepared = prepareArguments(failures, call, CURRENT);
    assert.equal(prepared.args.sessionPath, undefined, JSON.stringify(call));
    assert.equal(prepared.args.excludeSessionPath, CURRENT, JSON.stringify(call));
    assert.match(prepared.sessionsRead, /except the current session/);
  }
  const withCurrent = prepareArguments(failures, { includeCurrentSession: true }, CURRENT);
  assert.deepEqual(withCurrent.args, { includeCurrentSession: true });
  assert.match(withCurrent.sessionsRead, /current session included/);
  // Excluding the current session names it, never reads it alone.
  assert.deepEqual(prepareArguments(failures, { excludeSessionPath: CURRENT }, CURRENT).args, { excludeSessionPath: CURRENT });
  const other = prepareArguments(failures, { excludeSessionPath: "/x.jsonl" }, CURRENT);
  assert.deepEqual(other.args, { excludeSessionPath: "/x.jsonl" });
  assert.match(other.sessionsRead, /except \/x\.jsonl; the current session .* is read too/);
});

test("a tool the host does not know is left alone", () => {
  const other = adaptTool(unknownTool);
  assert.deepEqual(other.parameters.required, ["sessionPath"]);
  assert.deepEqual(prepareArguments(other, {}, CURRENT).args, {});
});

test("session_stats: the current session for {} only, the store for a filter, a grouping or a window", () => {
  const tool = adaptTool(sessionStats);
  assert.equal(prepareArguments(tool, {}, CURRENT).args.sessionPath, CURRENT);
  assert.deepEqual(prepareArguments(tool, { by: ["model"] }, CURRENT).args, { by: ["model"], excludeSessionPath: CURRENT });
  assert.deepEqual(prepareArguments(tool, { cwdPrefix: ["/home/me"] }, CURRENT).args, {
    cwdPrefix: ["/home/me"],
    excludeSessionPath: CURRENT,
  });
  // An empty filter chooses nothing.
  assert.equal(prepareArguments(tool, { cwdPrefix: [] }, CURRENT).args.sessionPath, CURRENT);
});

test("search_sessions leaves the current session out by default, like list_sessions", () => {
  const tool = adaptTool(searchSessions);
  assert.deepEqual(prepareArguments(tool, { pattern: "x" }, CURRENT).args, { pattern: "x", excludeSessionPath: CURRENT });
  assert.deepEqual(prepareArguments(tool, { pattern: "x", includeCurrentSession: true }, CURRENT).args, {
    pattern: "x",
    includeCurrentSession: true,
  });
  assert.match(tool.parameters.properties.includeCurrentSession.description, /this Pi's session/);
});

test("without a session file a reading tool answers an error naming sessionPath", () => {
  assert.match(prepareArguments(adaptTool(sessionEntries), {}, undefined).error, /^sessionPath: /);
  assert.match(prepareArguments(adaptTool(sessionStats), {}, undefined).error, /^sessionPath: /);
  // A store-wide call needs no current session.
  assert.deepEqual(prepareArguments(adaptTool(sessionStats), { by: "model" }, undefined).args, { by: "model" });
});

test("list_sessions leaves the current session out unless includeCurrentSession, also when another is excluded", () => {
  const tool = adaptTool(listSessions);
  assert.match(tool.parameters.properties.includeCurrentSession.description, /this Pi's session/);
  assert.equal(tool.description, "Lists the sessions. Leaves out this Pi's session unless includeCurrentSession.");
  assert.equal(tool.label, "List Pi sessions");
  assert.deepEqual(prepareArguments(tool, {}, CURRENT).args, { excludeSessionPath: CURRENT });
  assert.deepEqual(prepareArguments(tool, { includeCurrentSession: true }, CURRENT).args, { includeCurrentSession: true });
  const other = prepareArguments(tool, { excludeSessionPath: "/x.jsonl" }, CURRENT);
  assert.deepEqual(other.args, { excludeSessionPath: "/x.jsonl" });
  const answer = { sessions: [{ path: "/a.jsonl" }, { path: CURRENT }], warnings: [] };
  assert.deepEqual(completeResult(answer, other).sessions, [{ path: "/a.jsonl" }]);
  assert.match(completeResult(answer, other).sessionsRead, /except \/x\.jsonl and the current session/);
  assert.deepEqual(prepareArguments(tool, {}, undefined).args, {});
});

test("the package's descriptions are short and drop the server's caveats about the calling session", () => {
  const server = {
    ...sessionEntries,
    description:
      "Reads the stored entries of one session file in file order. Never writes.\n- sessionPath is a `path` from list_sessions (absolute). Pi 1.6.0 does not tell the server which session is calling, so it is required.\n- More.",
  };
  const tool = adaptTool(server);
  assert.equal(tool.description, "Reads the stored entries of one session file in file order. Without sessionPath: the session this Pi is running.");
  assert.doesNotMatch(tool.details, /does not tell/);
  assert.match(tool.details, /- More\./);
  assert.equal(firstSentence("a".repeat(300), 50).length, 50);
  assert.equal(firstSentence("one two three four", 12), "one two…");
  const list = adaptTool({
    ...listSessions,
    description: "Lists.\n- The calling session is left out unless includeCurrentSession is true, but only when the server knows it: Pi 1.6.0 does not tell an MCP server which session is calling. Pass your own session file as excludeSessionPath to leave it out.\n- Pages.",
  });
  assert.doesNotMatch(list.details, /Pi 1\.6\.0|Pass your own/);
  assert.match(list.outputSchema.properties.sessionsRead.type, /string/);
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
    assert.match(wrong.error, /^PI_RETROSPECT_BIN=.*notexec is set but is not an executable file: fix it, or unset it/);
    assert.doesNotMatch(wrong.error, /not installed|no PI_RETROSPECT_BIN/);
    // A running Pi keeps its environment: only a restart sees a changed variable.
    assert.match(wrong.error, /restart Pi/);
    assert.doesNotMatch(wrong.error, /run \/reload/);
    assert.match(INSTALL_HELP, /cargo install --locked --path crates\/cli/);
    // Pi 1.6 takes a bare `./x.tgz` for an extension file and then fails to start.
    assert.match(INSTALL_HELP, /pi install "npm:pi-retrospect@file:\/ABSOLUTE\/PATH\/pi-retrospect-<version>\.tgz"/);
    assert.doesNotMatch(INSTALL_HELP, /pi install \.\//);
    assert.equal(ALL_TOOLS.length, 7);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("/retro runs the CLI command for the current project", () => {
  assert.deepEqual(retroCommand("stats"), { sub: "stats", args: ["stats", "--here", "--by", "model", "--color", "never"] });
  assert.deepEqual(retroCommand("  failures "), { sub: "failures", args: ["failures", "--here", "--by", "signature", "--json"] });
  assert.deepEqual(retroCommand("search -E no such  file"), {
    sub: "search",
    args: ["search", "--here", "--color", "never", "--", "-E no such  file"],
  });
  assert.match(retroCommand("search").usage, /needs the text/);
  assert.match(retroCommand("search a\u0000b").usage, /NUL/);
  assert.match(retroCommand(`search ${"a".repeat(300_000)}`).usage, /at most/);
  assert.match(retroCommand("stats now").usage, /takes no arguments/);
  assert.match(retroCommand("").usage, /^usage: \/retro/);
  assert.match(retroCommand("bogus").usage, /^unknown \/retro command "bogus"/);
});

test("/retro shows its command, the CLI's text, nothing found with warnings, or its error", () => {
  const run = { command: "/retro search", sub: "search", cwd: "/p" };
  assert.deepEqual(retroResult({ ...run, code: 0, stdout: "a\nb\n\n", stderr: "" }), { level: "info", text: "/retro search (/p):\na\nb" });
  assert.deepEqual(retroResult({ ...run, code: 1, stdout: "", stderr: "" }), { level: "info", text: "/retro search (/p):\nnothing found" });
  const warned = retroResult({ ...run, code: 1, stdout: "", stderr: "pi-retrospect: warning: /s/broken.jsonl: first line is not valid JSON\n" });
  assert.equal(warned.level, "warning");
  assert.equal(warned.text, "/retro search (/p):\nnothing found\n\nwarning: /s/broken.jsonl: first line is not valid JSON");
  assert.deepEqual(
    retroResult({ ...run, code: 2, stdout: "", stderr: "error: unrecognized subcommand 'failures'\n\nUsage: pi-retrospect [OPTIONS] <COMMAND>\n" }),
    { level: "error", text: "/retro search (/p): error: unrecognized subcommand 'failures'" },
  );
  assert.deepEqual(retroResult({ ...run, code: null, stdout: "", stderr: "" }), { level: "error", text: "/retro search (/p): exited with status null" });
  assert.match(retroResult({ ...run, timedOut: true, timeoutMs: 5000 }).text, /^\/retro search \(\/p\): the CLI was stopped after 5 s .*timeout/);
});

test("/retro failures shows a bounded summary of groups, the most recent last", () => {
  const groups = Array.from({ length: 40 }, (_, i) => ({
    count: 40 - i,
    nSessions: 1,
    key: `bash: error ${i}\u001b]0;title\u0007`,
    firstSeen: `2026-01-01T00:00:${String(i).padStart(2, "0")}.000Z`,
    lastSeen: `2026-01-01T00:00:${String(i).padStart(2, "0")}.000Z`,
    examplePath: "/s/a.jsonl",
    exampleEntryId: "abc",
  }));
  const text = formatFailureGroups({ nFailures: 820, groups: [...groups].reverse() }, 15);
  const lines = text.split("\n");
  assert.match(lines[0], /^820 failures in 40 groups .*the 15 seen most recently, newest last/);
  assert.equal(lines.length, 1 + 15 * 3 + 1);
  assert.match(lines.at(-3), /bash: error 39/, "the newest group is last, on screen");
  assert.doesNotMatch(text, /\u001b/);
  assert.match(lines.at(-1), /session_failures/);
  const result = retroResult({ command: "/retro failures", sub: "failures", code: 0, stdout: JSON.stringify({ nFailures: 1, groups: groups.slice(0, 1) }), stderr: "" });
  assert.match(result.text, /^\/retro failures:\n1 failure in 1 group/);
});

test("codemode's declaration gets a shallow output schema and only the host's argument descriptions", () => {
  const server = {
    ...sessionStats,
    inputSchema: {
      type: "object",
      properties: {
        sessionPath: { type: ["string", "null"], description: "server text" },
        by: { $ref: "#/$defs/By", description: "Groupings, long text." },
        excludeSessionPath: { type: ["string", "null"], description: "server text" },
      },
      $defs: { By: { description: "a grouping", enum: ["session", "model"] } },
    },
    outputSchema: {
      type: "object",
      properties: { total: { type: "object", description: "Every record.", properties: { cost: { type: "number" } } }, rows: { type: "array", items: { $ref: "#/$defs/Row" } } },
      required: ["total"],
      $defs: { Row: { type: "object" } },
    },
  };
  const tool = adaptTool(server);
  assert.equal(tool.parameters.properties.by.description, undefined);
  assert.equal(tool.parameters.$defs.By.description, undefined);
  assert.deepEqual(tool.parameters.$defs.By.enum, ["session", "model"]);
  assert.match(tool.parameters.properties.sessionPath.description, /list_sessions/);
  assert.match(tool.parameters.properties.excludeSessionPath.description, /Also leave out/);
  assert.deepEqual(tool.outputSchema, {
    type: "object",
    properties: { total: { type: "object" }, rows: { type: "array" }, sessionsRead: { type: "string" } },
    required: ["total"],
  });
  // The whole schemas stay available for the namespace instructions.
  assert.equal(tool.fullOutputSchema.properties.total.properties.cost.type, "number");
  assert.equal(tool.fullInputSchema.properties.by.description, "Groupings, long text.");
});

test("a timeout variable is a whole number of milliseconds; a larger one is clamped, anything else warns", () => {
  const read = (text) => parseTimeout("PI_RETROSPECT_CALL_TIMEOUT_MS", text, 120_000);
  assert.deepEqual(read(undefined), { ms: 120_000 });
  assert.deepEqual(read(""), { ms: 120_000 });
  assert.deepEqual(read("5000"), { ms: 5000 });
  assert.deepEqual(read(" 1 "), { ms: 1 });
  assert.deepEqual(read(String(MAX_TIMER_MS)), { ms: MAX_TIMER_MS });
  // Node fires a timer above 2^31-1 ms after 1 ms: a large value must not mean "at once".
  assert.equal(MAX_TIMER_MS, 2147483647);
  assert.deepEqual(read("3000000000"), { ms: MAX_TIMER_MS });
  assert.deepEqual(read("99999999999999999999999"), { ms: MAX_TIMER_MS });
  for (const bad of ["0", "000", "-5", "1.5", "1e3", "Infinity", "NaN", "5s", "abc"]) {
    const parsed = read(bad);
    assert.equal(parsed.ms, 120_000, bad);
    assert.match(parsed.warning, /^PI_RETROSPECT_CALL_TIMEOUT_MS=".*" is not a whole number of milliseconds/, bad);
    assert.ok(parsed.warning.includes(JSON.stringify(bad)), bad);
    assert.match(parsed.warning, /the default 120000 ms is used$/, bad);
  }
});

test("sessionsRead: excluding the current session wins over includeCurrentSession, and says so", () => {
  for (const tool of [adaptTool(sessionFailures), adaptTool(searchSessions), adaptTool(listSessions)]) {
    const prepared = prepareArguments(tool, { excludeSessionPath: CURRENT, includeCurrentSession: true }, CURRENT);
    assert.equal(prepared.args.excludeSessionPath, CURRENT, tool.name);
    assert.match(prepared.sessionsRead, /except the current session/, tool.name);
    assert.doesNotMatch(prepared.sessionsRead, /current session included/, tool.name);
    assert.equal(prepared.dropCurrent, undefined, tool.name);
  }
});

test("sessionsRead: the current session spelled another way is the current session", () => {
  const dir = mkdtempSync(join(tmpdir(), "pi-retrospect-same-"));
  try {
    const project = join(dir, "--proj--");
    mkdirSync(project);
    const current = join(project, "2026-12-01T10-00-00-000Z_0199.jsonl");
    writeFileSync(current, "");
    symlinkSync(project, join(dir, "link"));
    const spellings = [
      `${project}/../--proj--/${basename(current)}`,
      `${project}//${basename(current)}`,
      `${project}/./${basename(current)}`,
      join(dir, "link", basename(current)),
    ];
    // Also a path that is not on disk: compared once resolved.
    const absent = CURRENT.replace("/--home-me-app--/", "/--home-me-app--/../--home-me-app--//");
    for (const [spelled, cur] of [...spellings.map((path) => [path, current]), [absent, CURRENT]]) {
      for (const tool of [adaptTool(sessionFailures), adaptTool(searchSessions), adaptTool(listSessions)]) {
        const prepared = prepareArguments(tool, { excludeSessionPath: spelled }, cur);
        assert.match(prepared.sessionsRead, /except the current session/, `${tool.name} ${spelled}`);
        assert.doesNotMatch(prepared.sessionsRead, /is read too/, `${tool.name} ${spelled}`);
        assert.equal(prepared.dropCurrent, undefined, `${tool.name} ${spelled}`);
      }
    }
    // Another file stays another session.
    const other = join(project, "other.jsonl");
    writeFileSync(other, "");
    const prepared = prepareArguments(adaptTool(sessionFailures), { excludeSessionPath: other }, current);
    assert.match(prepared.sessionsRead, /is read too/);
    // list_sessions drops the current session from its answer however the listing spells it.
    const listed = prepareArguments(adaptTool(listSessions), { excludeSessionPath: other }, current);
    const answer = { sessions: [{ path: join(dir, "link", basename(current)) }, { path: `${project}/a.jsonl` }] };
    assert.deepEqual(completeResult(answer, listed).sessions, [{ path: `${project}/a.jsonl` }]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sessionsRead: a call with only limit named no sessions; a grouping alone reads every session", () => {
  const failures = adaptTool(sessionFailures);
  const limited = prepareArguments(failures, { limit: 5 }, CURRENT);
  assert.match(limited.sessionsRead, /^only the current session .* \(the call named no sessions;/);
  assert.doesNotMatch(limited.sessionsRead, /gave no arguments/);
  const grouped = prepareArguments(failures, { startTimestamp: "7d", by: "signature" }, CURRENT);
  assert.match(grouped.sessionsRead, /^the sessions the filters choose except the current session/);
  for (const [tool, call] of [
    [adaptTool(sessionStats), { by: ["session"] }],
    [failures, { by: "signature" }],
    [adaptTool(searchSessions), { pattern: "x" }],
  ]) {
    assert.match(prepareArguments(tool, call, CURRENT).sessionsRead, /^every session of the store except the current session/, JSON.stringify(call));
  }
});
