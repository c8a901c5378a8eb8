// What only the host knows, as plain functions the unit tests call without Pi: where the
// binary is, which store this Pi uses, how a server tool becomes a Pi tool, and how a call is
// completed with the current session. Nothing here describes a tool itself: names, schemas,
// descriptions and annotations come from the server's `tools/list`.

import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, relative, resolve, sep } from "node:path";

/** What every tool answers when no binary is found. */
export const INSTALL_HELP =
  "pi-retrospect is not installed: no PI_RETROSPECT_BIN, no pi-retrospect on PATH and no " +
  "binary for this platform in the package. Install the binary with " +
  "`cargo install --locked --path crates/cli` (from the pi-retrospect repository) or install " +
  "the packed package, which carries it: `cargo xtask pi-package`, then " +
  "`pi install ./pi-retrospect-<version>.tgz`. Then run /reload.";

/**
 * The tools that read one session: without a session chosen by the call they read the one
 * this Pi is running. Applied to whichever of them the server lists.
 */
export const READING_TOOLS = new Set([
  "session_entries",
  "inspect_session",
  "session_handoff",
  "session_failures",
  "session_stats",
]);

/** Tools that leave the current session out unless `includeCurrentSession` is true. */
export const LEAVING_OUT_TOOLS = new Set(["list_sessions"]);

/**
 * Arguments that choose the sessions a call reads: when a call gives any of them, a reading
 * tool is not pointed at the current session (`session_stats({cwdPrefix})` keeps its meaning).
 */
export const SESSION_SELECTORS = ["sessionPath", "cwds", "cwdPrefix", "id", "name"];

const INCLUDE_CURRENT = "includeCurrentSession";
const EXCLUDE = "excludeSessionPath";

/** Node's name for the platform, as the package's `bin/<platform>/` directories are named. */
export function platformKey(platform = process.platform, arch = process.arch) {
  return `${platform}-${arch}`;
}

function binaryName(platform) {
  return platform === "win32" ? "pi-retrospect.exe" : "pi-retrospect";
}

/** Whether `path` is a regular file this process may execute. */
export function isExecutable(path) {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the binary: `PI_RETROSPECT_BIN`, else `pi-retrospect` on `PATH`, else
 * `bin/<platform>/pi-retrospect` inside the package. Returns `{path, source}` or `{error}`.
 * @param {{env?: NodeJS.ProcessEnv, packageDir: string, platform?: string, arch?: string,
 *   executable?: (path: string) => boolean}} options
 */
export function findBinary(options) {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  const executable = options.executable ?? isExecutable;
  const name = binaryName(platform);
  const fromEnv = env.PI_RETROSPECT_BIN;
  if (fromEnv) {
    // A binary named explicitly is never silently replaced by another one.
    if (executable(fromEnv)) return { path: fromEnv, source: "PI_RETROSPECT_BIN" };
    return { error: `PI_RETROSPECT_BIN=${fromEnv} is not an executable file. ${INSTALL_HELP}` };
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (executable(candidate)) return { path: candidate, source: "PATH" };
  }
  const packaged = join(options.packageDir, "bin", platformKey(platform, arch), name);
  if (executable(packaged)) return { path: packaged, source: "package" };
  return { error: INSTALL_HELP };
}

/**
 * The store flags that make the CLI read the store this Pi writes to: the default root
 * `<agentDir>/sessions` when the session directory lies inside it, else Pi's custom session
 * directory (which the CLI lists together with the default root).
 * @param {{agentDir: string, sessionDir?: string}} options
 */
export function storeArgs({ agentDir, sessionDir }) {
  const root = resolve(agentDir, "sessions");
  if (!sessionDir) return ["--sessions-root", root];
  const dir = resolve(sessionDir);
  const inside = relative(root, dir);
  if (inside && !inside.startsWith(`..${sep}`) && inside !== ".." && !isAbsolute(inside)) {
    return ["--sessions-root", root];
  }
  return ["--session-dir", dir];
}

/**
 * The environment for the binary: Pi's agent directory made explicit, and no
 * `PI_SESSION_FILE` (one inherited from an outer Pi would name the wrong session; the extension
 * passes the current one per call instead).
 */
export function childEnv(env, agentDir) {
  const copy = { ...env, PI_CODING_AGENT_DIR: agentDir };
  delete copy.PI_SESSION_FILE;
  return copy;
}

/**
 * Turns a tool from the server's `tools/list` into what the extension registers: the same
 * name, schemas, description and read-only hint, with the host's defaults written into the
 * schema (a reading tool's `sessionPath` becomes optional; `includeCurrentSession` means what
 * it says, since the host knows the current session).
 */
export function adaptTool(tool) {
  const parameters = structuredClone(tool.inputSchema ?? { type: "object" });
  parameters.properties ??= {};
  const notes = [];
  const readsSession = READING_TOOLS.has(tool.name) && "sessionPath" in parameters.properties;
  if (readsSession) {
    if (Array.isArray(parameters.required)) {
      parameters.required = parameters.required.filter((name) => name !== "sessionPath");
    }
    const property = parameters.properties.sessionPath;
    property.description = joinText(
      property.description,
      "Default: the session this Pi is running, when the call chooses no sessions.",
    );
    notes.push(
      "In this Pi, sessionPath defaults to the current session when the call chooses no sessions " +
        `(none of ${SESSION_SELECTORS.join(", ")}).`,
    );
  }
  const leavesOut = LEAVING_OUT_TOOLS.has(tool.name);
  const serverTakesInclude = INCLUDE_CURRENT in parameters.properties;
  if (leavesOut) {
    parameters.properties[INCLUDE_CURRENT] = {
      ...(parameters.properties[INCLUDE_CURRENT] ?? {}),
      type: "boolean",
      default: false,
      description:
        "Also list the session this Pi is running (default false: it is left out with its runs).",
    };
    notes.push(
      "In this Pi the current session is known: it is left out with its runs unless " +
        "includeCurrentSession is true.",
    );
  }
  return {
    name: tool.name,
    label: tool.title ?? tool.annotations?.title ?? tool.name,
    description: joinText(tool.description ?? "", notes.join(" ")),
    parameters,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
    host: {
      readsSession,
      leavesOut,
      serverTakesInclude,
      serverTakesExclude: EXCLUDE in (tool.inputSchema?.properties ?? {}),
    },
  };
}

function joinText(first, second) {
  if (!second) return first ?? "";
  if (!first) return second;
  return `${first}${first.endsWith("\n") ? "" : "\n"}${second}`;
}

/**
 * Completes a call's arguments with the current session. Returns `{args}`, or `{error}` when a
 * reading tool has no session to read (a Pi session that is not saved to a file).
 * @param {ReturnType<typeof adaptTool>} tool
 * @param {Record<string, unknown> | undefined} input
 * @param {string | undefined} currentFile the current session file, if any
 */
export function prepareArguments(tool, input, currentFile) {
  const args = { ...(input ?? {}) };
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined) delete args[key];
  }
  if (tool.host.readsSession && !SESSION_SELECTORS.some((key) => isGiven(args[key]))) {
    if (!currentFile) {
      return {
        error:
          "sessionPath: this Pi session is not saved to a file (it runs without a session " +
          "file), so there is no current session to read; pass a sessionPath from list_sessions",
      };
    }
    args.sessionPath = currentFile;
  }
  if (tool.host.leavesOut) {
    const include = args[INCLUDE_CURRENT] === true;
    if (!tool.host.serverTakesInclude) delete args[INCLUDE_CURRENT];
    if (!include && currentFile && !isGiven(args[EXCLUDE]) && tool.host.serverTakesExclude) {
      args[EXCLUDE] = currentFile;
    }
  }
  return { args };
}

function isGiven(value) {
  if (value === undefined || value === null || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

/** The subcommands of `/retro`, each the CLI command it runs for the current project. */
export const RETRO_USAGE =
  "usage: /retro failures | /retro search TEXT | /retro stats (the current project's " +
  "failures, search hits or tokens and cost, from the pi-retrospect CLI)";

/**
 * Parses the text after `/retro` into the CLI arguments it runs (before the store flags), or a
 * usage message.
 */
export function retroCommand(text) {
  const trimmed = (text ?? "").trim();
  const space = trimmed.search(/\s/);
  const sub = space < 0 ? trimmed : trimmed.slice(0, space);
  const rest = space < 0 ? "" : trimmed.slice(space + 1).trim();
  switch (sub) {
    case "failures":
    case "stats":
      if (rest) return { usage: `/retro ${sub} takes no arguments\n${RETRO_USAGE}` };
      return { args: [sub, "--here", "--color", "never"] };
    case "search":
      if (!rest) return { usage: `/retro search needs the text to search for\n${RETRO_USAGE}` };
      // `--` so a text that starts with `-` is searched for, not taken as a flag.
      return { args: ["search", "--here", "--color", "never", "--", rest] };
    default:
      return { usage: sub ? `unknown /retro command ${JSON.stringify(sub)}\n${RETRO_USAGE}` : RETRO_USAGE };
  }
}

/**
 * What `/retro` shows for a finished CLI run: its text on success; for `search` and
 * `failures`, status 1 with nothing on stderr means nothing was found; otherwise the CLI's
 * error message (its first paragraph, without clap's usage lines).
 * @param {{command: string, code: number | null, stdout: string, stderr: string}} run
 */
export function retroResult({ command, code, stdout, stderr }) {
  const text = stdout.replace(/\s+$/, "");
  if (code === 0) return { level: "info", text: text || `${command}: no output` };
  if (code === 1 && !stderr.trim()) return { level: "info", text: text || `${command}: nothing found` };
  const message = stderr.trim().split(/\n\s*\n/)[0]?.trim() || `exited with status ${code}`;
  return { level: "error", text: `${command}: ${message}` };
}
