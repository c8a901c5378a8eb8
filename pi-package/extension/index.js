// The pi-retrospect extension: registers every tool `pi-retrospect mcp` lists as a codemode
// tool of the same name, forwards calls to one server per Pi process (started on the first
// call, restarted after it dies, ended with Pi), completes calls with the current session, and
// adds `/retro` for a person at the TUI.
//
// Tools must exist when the extension loads (the codemode tool lists them with their schemas),
// but a server must not run for an invocation that never calls one. So the tools are registered
// from the list packed beside the extension (`tools.json`, the packed binary's own `tools/list`);
// only a package directory without it asks the binary with a short-lived `pi-retrospect mcp`.
// The serving process starts on the first call and registers what it lists, so a different
// binary (PI_RETROSPECT_BIN, PATH) replaces the packed list. Without any list the seven tools
// are registered by name and each answers how to install the binary.

import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { getAgentDir } from "@earendil-works/pi-coding-agent";

import {
  ALL_TOOLS,
  MAX_TIMER_MS,
  RETRO_TIMEOUT_MS,
  adaptTool,
  completeResult,
  childEnv,
  findBinary,
  parseTimeout,
  prepareArguments,
  retroCommand,
  retroResult,
  storeArgs,
} from "./host.js";
import { McpServer, SharedStart, killAll, killGroup, track } from "./mcp-client.js";

const PACKAGE_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

/** How long the server gets to start and list its tools. */
const LIST_TIMEOUT_MS = 30_000;

/**
 * How long one call may take before the server is taken for stuck, stopped and replaced
 * (`PI_RETROSPECT_CALL_TIMEOUT_MS` changes it).
 */
const CALL_TIMEOUT = parseTimeout("PI_RETROSPECT_CALL_TIMEOUT_MS", process.env.PI_RETROSPECT_CALL_TIMEOUT_MS, 120_000);
const CALL_TIMEOUT_MS = CALL_TIMEOUT.ms;

/** How long `/retro` waits for the CLI (`PI_RETROSPECT_RETRO_TIMEOUT_MS` changes it). */
const RETRO = parseTimeout("PI_RETROSPECT_RETRO_TIMEOUT_MS", process.env.PI_RETROSPECT_RETRO_TIMEOUT_MS, RETRO_TIMEOUT_MS);
const RETRO_TIMEOUT = Math.min(RETRO.ms, MAX_TIMER_MS);

/** The variables that were ignored, each named once per process. */
const TIMEOUT_WARNINGS = [CALL_TIMEOUT.warning, RETRO.warning].filter(Boolean);

/** The namespace the tools are listed under in codemode. */
const NAMESPACE = "pi_retrospect";

/**
 * One server per Pi process, shared by the extension instances Pi creates when it replaces
 * the session runtime (`/new`, `/resume`, `/fork`, `/reload`).
 */
const STATE_KEY = Symbol.for("pi-retrospect.extension.state");
const state = (globalThis[STATE_KEY] ??= {
  server: undefined,
  serverKey: undefined,
  starting: undefined,
  listed: new Map(),
  timeoutsWarned: false,
});

export default async function piRetrospect(pi) {
  const agentDir = getAgentDir();
  const found = findBinary({ packageDir: PACKAGE_DIR });
  const packed = readPackedTools();
  let tools = packed?.tools;
  let instructions = packed?.instructions;
  let listError;
  if (!tools && found.path) {
    try {
      tools = await listedTools(found.path, agentDir);
      instructions = state.listed.get(found.path)?.instructions;
    } catch (error) {
      listError = `${found.path} mcp could not list its tools: ${messageOf(error)}`;
    }
  }
  tools ??= ALL_TOOLS.map((name) => ({ name, inputSchema: { type: "object" } }));
  const registered = new Map();
  const register = (list, serverInstructions) => {
    const adaptedList = list.map((tool) => ({ tool, adapted: adaptTool(tool) }));
    const namespace = namespaceOf(serverInstructions, adaptedList.map(({ adapted }) => adapted));
    for (const { tool, adapted } of adaptedList) {
      const key = JSON.stringify(tool);
      if (registered.get(tool.name)?.key === key) continue;
      registered.set(tool.name, { key, adapted });
      pi.registerTool({
        name: adapted.name,
        label: adapted.label,
        description: adapted.description,
        parameters: adapted.parameters,
        ...(adapted.outputSchema ? { outputSchema: adapted.outputSchema } : {}),
        annotations: { ...(adapted.annotations ?? {}), readOnlyHint: adapted.annotations?.readOnlyHint === true },
        exposure: "codemode",
        ...(namespace ? { namespace } : {}),
        execute: (_toolCallId, params, signal, _onUpdate, ctx) =>
          callTool(registered.get(tool.name).adapted, params, signal, ctx, register),
      });
    }
  };
  register(tools, instructions);

  pi.on("session_start", (_event, ctx) => {
    const problem = found.error ?? listError;
    if (problem && ctx.hasUI) ctx.ui.notify(`pi-retrospect: ${problem}`, "warning");
    if (TIMEOUT_WARNINGS.length > 0 && !state.timeoutsWarned) {
      state.timeoutsWarned = true;
      for (const warning of TIMEOUT_WARNINGS) {
        if (ctx.hasUI) ctx.ui.notify(`pi-retrospect: ${warning}`, "warning");
        else process.stderr.write(`pi-retrospect: warning: ${warning}\n`);
      }
    }
  });

  pi.on("session_shutdown", (event) => {
    // The next runtime of this process keeps using the server; only quitting ends it, and
    // with it anything still starting or stuck (Pi does not wait for a graceful exit).
    if (event.reason === "quit") {
      stopServer();
      killAll();
    }
  });

  pi.registerCommand("retro", {
    description: "The current project's failures, search hits or tokens and cost (pi-retrospect)",
    getArgumentCompletions: (prefix) => {
      const items = ["failures", "search ", "stats"]
        .filter((value) => value.startsWith(prefix))
        .map((value) => ({ value, label: value.trim() }));
      return items.length > 0 ? items : null;
    },
    handler: async (args, ctx) => {
      let shown;
      try {
        shown = await runRetro(args, ctx);
      } catch (error) {
        shown = { level: "error", text: `/retro: ${messageOf(error)}` };
      }
      if (ctx.hasUI) ctx.ui.notify(shown.text, shown.level);
      else process.stderr.write(`${shown.text}\n`);
    },
  });
}

/** The tools the binary at `binary` lists, asked once per process and binary. */
async function listedTools(binary, agentDir) {
  const cached = state.listed.get(binary);
  if (cached) return cached.tools;
  const lister = new McpServer({
    command: binary,
    args: ["mcp", ...storeArgs({ agentDir })],
    env: childEnv(process.env, agentDir),
  });
  try {
    await lister.start({ timeoutMs: LIST_TIMEOUT_MS });
    const tools = await lister.listTools({ timeoutMs: LIST_TIMEOUT_MS });
    state.listed.set(binary, { tools, instructions: lister.instructions });
    return tools;
  } finally {
    lister.close();
  }
}

/** The tool list `cargo xtask pi-package` wrote beside the extension, if any. */
function readPackedTools() {
  try {
    const packed = JSON.parse(readFileSync(join(PACKAGE_DIR, "tools.json"), "utf8"));
    return Array.isArray(packed?.tools) ? packed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The tools' namespace: a one-line description in codemode's listing, and the server's
 * instructions with every tool's whole description for `describeNamespace("pi_retrospect")`.
 */
function namespaceOf(instructions, adapted) {
  if (!instructions) return undefined;
  const [first] = instructions.split("\n");
  const details = adapted
    .map(
      (tool) =>
        `## ${tool.name}\n${tool.details}` +
        (tool.fullInputSchema ? `\nInput schema: ${JSON.stringify(tool.fullInputSchema)}` : "") +
        (tool.fullOutputSchema ? `\nOutput schema: ${JSON.stringify(tool.fullOutputSchema)}` : ""),
    )
    .join("\n\n");
  return {
    name: NAMESPACE,
    aliases: ["pi-retrospect"],
    description: `${first} Each tool's whole description: describeNamespace("${NAMESPACE}").instructions.`,
    instructions: `${instructions}\n\n${details}`,
  };
}

/** Forwards one call to the server, completing it with the current session. */
async function callTool(tool, params, signal, ctx, register) {
  const currentFile = ctx.sessionManager.getSessionFile();
  const prepared = prepareArguments(tool, params, currentFile);
  if (prepared.error) throw new Error(prepared.error);
  const server = await serverFor(ctx, register, signal);
  let result;
  try {
    result = await server.callTool(tool.name, prepared.args, signal, { timeoutMs: CALL_TIMEOUT_MS });
  } catch (error) {
    if (!server.alive) {
      if (state.server === server) stopServer();
      throw new Error(`${messageOf(error)} (a new server starts on the next call)`);
    }
    throw error;
  }
  const content = Array.isArray(result?.content) ? result.content : [];
  const structured =
    result?.structuredContent !== undefined && result?.isError !== true
      ? completeResult(result.structuredContent, prepared)
      : result?.structuredContent;
  return {
    content: content.length > 0 ? content : [{ type: "text", text: "" }],
    ...(structured !== undefined ? { structuredContent: structured } : {}),
    ...(result?.isError === true ? { isError: true } : {}),
    // The document is already in structuredContent; keeping a second copy in the session
    // file would only grow it.
    details: undefined,
  };
}

/**
 * The running server for this store, started (or restarted) when needed. A call cancelled
 * while the server starts stops waiting; the start is given up once every call waiting for it
 * is cancelled.
 */
async function serverFor(ctx, register, signal) {
  const found = findBinary({ packageDir: PACKAGE_DIR });
  if (found.error) throw new Error(found.error);
  const agentDir = getAgentDir();
  const args = ["mcp", ...storeArgs({ agentDir, sessionDir: ctx.sessionManager.getSessionDir() })];
  const key = JSON.stringify([found.path, args]);
  if (state.server?.alive && state.serverKey === key) return state.server;
  if (signal?.aborted) throw new Error("cancelled");
  if (state.starting?.key === key) return state.starting.shared.wait(signal);
  stopServer();
  let starting;
  const shared = new SharedStart(async (startSignal) => {
    const server = new McpServer({
      command: found.path,
      args,
      // The server needs no working directory of its own; a project directory removed while
      // Pi runs must not make the binary look missing.
      cwd: existsSync(ctx.cwd) ? ctx.cwd : agentDir,
      env: childEnv(process.env, agentDir),
      onToolsChanged: () => {
        server.listTools().then((tools) => register(tools, server.instructions), () => {});
      },
    });
    await server.start({ timeoutMs: LIST_TIMEOUT_MS, signal: startSignal });
    // The serving binary may be newer than the one listed at load (PI_RETROSPECT_BIN changed,
    // a reinstall): register what it has.
    const onAbort = () => server.abandon(new Error("cancelled: the server's start was given up"));
    startSignal.addEventListener("abort", onAbort, { once: true });
    if (startSignal.aborted) onAbort();
    try {
      register(await server.listTools({ timeoutMs: LIST_TIMEOUT_MS }), server.instructions);
    } finally {
      startSignal.removeEventListener("abort", onAbort);
    }
    // Published here, not by a waiting call, so a started server is used even when every call
    // that waited for it was cancelled in the meantime; one another start replaced is ended.
    if (state.starting !== starting) {
      server.close();
      throw new Error("the server's start was replaced by another");
    }
    state.server = server;
    state.serverKey = key;
    return server;
  });
  starting = { key, shared };
  state.starting = starting;
  const clear = () => {
    if (state.starting === starting) state.starting = undefined;
  };
  shared.promise.then(clear, clear);
  return shared.wait(signal);
}

function stopServer() {
  state.server?.close();
  state.server = undefined;
  state.serverKey = undefined;
}

/** Runs `/retro ARGS` with the CLI for the current project and returns what to show. */
async function runRetro(text, ctx) {
  const parsed = retroCommand(text);
  if (parsed.usage) return { level: "warning", text: parsed.usage };
  const found = findBinary({ packageDir: PACKAGE_DIR });
  if (found.error) return { level: "error", text: found.error };
  const agentDir = getAgentDir();
  const args = [...parsed.args.slice(0, 1), ...storeArgs({ agentDir, sessionDir: ctx.sessionManager.getSessionDir() }), ...parsed.args.slice(1)];
  const command = `/retro ${parsed.sub}`;
  if (!existsSync(ctx.cwd)) {
    return { level: "error", text: `${command}: the project directory ${ctx.cwd} no longer exists` };
  }
  const run = await new Promise((resolve) => {
    const done = (error, stdout, stderr) => {
      const timedOut = false;
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      const spawnError = error && typeof error.code !== "number" && !timedOut ? messageOf(error) : "";
      resolve({ command, sub: parsed.sub, cwd: ctx.cwd, code, timedOut, stdout: stdout ?? "", stderr: stderr || spawnError });
    };
    try {
      // A CLI that hangs (a stuck store, a wrong binary) is killed with what it started:
      // /retro must not hold the TUI, and nothing it ran outlives it.
      let timedOut = false;
      const child = track(execFile(
        found.path,
        args,
        {
          cwd: ctx.cwd,
          env: childEnv(process.env, agentDir),
          maxBuffer: 64 * 1024 * 1024,
          encoding: "utf8",
          detached: process.platform !== "win32",
        },
        (error, stdout, stderr) => {
          clearTimeout(timer);
          if (timedOut) resolve({ command, sub: parsed.sub, cwd: ctx.cwd, code: null, timedOut, timeoutMs: RETRO_TIMEOUT, stdout: "", stderr: "" });
          else done(error, stdout, stderr);
        },
      ));
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child, "SIGKILL");
      }, RETRO_TIMEOUT);
    } catch (error) {
      done(error, "", "");
    }
  });
  return retroResult(run);
}

function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

