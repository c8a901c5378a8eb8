// What only the host knows, as plain functions the unit tests call without Pi: where the
// binary is, which store this Pi uses, how a server tool becomes a Pi tool, and how a call is
// completed with the current session. Nothing here describes a tool itself: names, schemas,
// descriptions and annotations come from the server's `tools/list`.

import { accessSync, constants, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, delimiter, isAbsolute, join, relative, resolve, sep } from "node:path";

/** The install forms that work in Pi 1.6 (a bare `./x.tgz` is taken for an extension file). */
export const INSTALL_FORMS =
  '`pi install "npm:pi-retrospect@file:/ABSOLUTE/PATH/pi-retrospect-<version>.tgz"` or ' +
  "`pi install /ABSOLUTE/PATH/TO/UNPACKED/package`";

/** What every tool answers when no binary is found. */
export const INSTALL_HELP =
  "pi-retrospect is not installed: no PI_RETROSPECT_BIN, no pi-retrospect on PATH and no " +
  "binary for this platform in the package. Install the binary with " +
  "`cargo install --locked --path crates/cli` (from the pi-retrospect repository), or build " +
  "the package that carries it with `cargo xtask pi-package` and install the tarball with " +
  `${INSTALL_FORMS}. Then run /reload.`;

/** Every tool the server has, registered (each answering the install error) even without a binary. */
export const ALL_TOOLS = [
  "list_sessions",
  "session_entries",
  "inspect_session",
  "search_sessions",
  "session_stats",
  "session_handoff",
  "session_failures",
];

/** Tools that read one session: without a `sessionPath` they read the one this Pi is running. */
export const ONE_SESSION_TOOLS = new Set(["session_entries", "inspect_session", "session_handoff"]);

/**
 * Tools that read the whole store. They leave the current session out unless
 * `includeCurrentSession` is true, as `list_sessions` does.
 */
export const STORE_TOOLS = new Set(["list_sessions", "search_sessions", "session_stats", "session_failures"]);

/**
 * Store tools that read the current session when the call names nothing else: `session_stats({})`
 * is this session's cost, `session_failures({})` what failed here. Any other argument (a time
 * window, `by`, `kind`, `excludeSessionPath`, `includeCurrentSession`, a filter) asks about the
 * store, as the skill's retrospective does.
 */
export const CURRENT_BY_DEFAULT_TOOLS = new Set(["session_stats", "session_failures"]);

/** Arguments that only page or shape the answer: they do not turn a call into a store-wide one. */
export const SHAPING_ARGUMENTS = new Set(["limit", "cursor", "offset", "timeZone", "rollup"]);

/** The field the host adds to a result to say which sessions the call read. */
export const SESSIONS_READ = "sessionsRead";

/** Kept for the tests and for older callers: the tools that may read the current session. */
export const READING_TOOLS = new Set([...ONE_SESSION_TOOLS, ...CURRENT_BY_DEFAULT_TOOLS]);

/** Tools that leave out the current session unless asked (kept name). */
export const LEAVING_OUT_TOOLS = STORE_TOOLS;

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
    return {
      error:
        `PI_RETROSPECT_BIN=${fromEnv} is set but is not an executable file: fix it, or unset it ` +
        "to use pi-retrospect on PATH or the binary in this package, then restart Pi (a running " +
        "Pi keeps the environment it started with; /reload does not change it).",
    };
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

/** The first sentence of a text (up to `max` characters), for a short tool description. */
export function firstSentence(text, max = 200) {
  const line = (text ?? "").split("\n")[0].trim();
  const match = /^(.+?[.])(\s|$)/.exec(line);
  const sentence = match ? match[1] : line;
  if (sentence.length <= max) return sentence;
  const cut = sentence.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:(]+$/, "")}…`;
}

/** What the host says, per tool, in place of the server's text about the calling session. */
function hostNote(name) {
  if (ONE_SESSION_TOOLS.has(name)) return "Without sessionPath: the session this Pi is running.";
  if (CURRENT_BY_DEFAULT_TOOLS.has(name)) {
    return (
      "`{}` reads this Pi's session; any other argument reads the store without it " +
      `(includeCurrentSession adds it). ${SESSIONS_READ} says which.`
    );
  }
  if (STORE_TOOLS.has(name)) return "Leaves out this Pi's session unless includeCurrentSession.";
  return "";
}

/**
 * Turns a tool from the server's `tools/list` into what the extension registers: the same
 * name, schemas and read-only hint; a short description (the server's first sentence and what
 * the host adds) so every tool fits codemode's inline budget, the server's whole text staying
 * in `details` for the namespace instructions; the server's caveats about not knowing the
 * calling session replaced by what the host does.
 */
export function adaptTool(tool) {
  const parameters = structuredClone(tool.inputSchema ?? { type: "object" });
  parameters.properties ??= {};
  const properties = parameters.properties;
  const oneSession = ONE_SESSION_TOOLS.has(tool.name) && "sessionPath" in properties;
  const currentByDefault = CURRENT_BY_DEFAULT_TOOLS.has(tool.name);
  const store = STORE_TOOLS.has(tool.name);
  if (oneSession || currentByDefault) {
    if (Array.isArray(parameters.required)) {
      parameters.required = parameters.required.filter((name) => name !== "sessionPath");
    }
  }
  if ("sessionPath" in properties && (oneSession || currentByDefault)) {
    properties.sessionPath = {
      ...properties.sessionPath,
      description: oneSession
        ? "A `path` from list_sessions (default: this Pi's session)."
        : "Only this `path` from list_sessions, with its runs.",
    };
  }
  const serverTakesInclude = INCLUDE_CURRENT in properties;
  const serverTakesExclude = EXCLUDE in properties;
  if (store) {
    properties[INCLUDE_CURRENT] = {
      ...(properties[INCLUDE_CURRENT] ?? {}),
      type: "boolean",
      default: false,
      description: "Also read this Pi's session (default false).",
    };
    if (serverTakesExclude) {
      properties[EXCLUDE] = {
        ...properties[EXCLUDE],
        description: "Also leave out this session file, with its runs.",
      };
    }
  }
  let outputSchema = tool.outputSchema;
  if (outputSchema && (store || oneSession) && outputSchema.type === "object") {
    outputSchema = structuredClone(outputSchema);
    outputSchema.properties = {
      ...(outputSchema.properties ?? {}),
      [SESSIONS_READ]: { type: "string", description: "Which sessions the call read (added by the Pi package)." },
    };
  }
  const fullOutputSchema = outputSchema;
  const fullInputSchema = tool.inputSchema;
  outputSchema = outputSchema ? shallowOutputSchema(outputSchema) : undefined;
  shortenDescriptions(parameters);
  const note = hostNote(tool.name);
  const short = joinText(firstSentence(tool.description ?? "", 110), note);
  return {
    name: tool.name,
    label: tool.title ?? tool.annotations?.title ?? tool.name,
    description: short || tool.name,
    details: joinText(withoutCallerCaveats(tool.description ?? ""), note),
    parameters,
    outputSchema,
    fullOutputSchema,
    fullInputSchema,
    annotations: tool.annotations,
    host: { oneSession, currentByDefault, store, serverTakesInclude, serverTakesExclude },
  };
}

/**
 * The output schema codemode declares: the top-level fields with their JSON types, without
 * descriptions or nested shapes. Codemode renders the whole output type into the model's
 * prompt, and the servers' full schemas (up to 14 KB each) would leave most tools out of its
 * inline budget; the full schema stays in the namespace instructions.
 */
export function shallowOutputSchema(schema) {
  if (schema?.type !== "object" || typeof schema.properties !== "object") return schema;
  const properties = {};
  for (const [name, field] of Object.entries(schema.properties)) {
    const type = field?.type;
    properties[name] = type === undefined ? {} : { type };
  }
  return {
    type: "object",
    properties,
    ...(Array.isArray(schema.required) ? { required: schema.required } : {}),
  };
}

/** Input properties whose description the package keeps in codemode's declaration. */
const DESCRIBED_INPUTS = new Set(["sessionPath", INCLUDE_CURRENT, EXCLUDE]);

/**
 * Drops the descriptions of an input schema (in place) but those of the properties the host
 * gives a meaning: with them the seven declarations do not fit codemode's inline budget; the
 * server's descriptions, which explain the arguments, are in the namespace instructions.
 */
function shortenDescriptions(schema) {
  const strip = (node, seen) => {
    if (node === null || typeof node !== "object" || seen.has(node)) return;
    seen.add(node);
    if (typeof node.description === "string") delete node.description;
    for (const value of Object.values(node)) strip(value, seen);
  };
  const seen = new Set();
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (DESCRIBED_INPUTS.has(name)) {
      const { description, ...rest } = property;
      strip(rest, seen);
      schema.properties[name] = { ...rest, ...(description ? { description } : {}) };
    } else {
      strip(property, seen);
    }
  }
  for (const value of Object.values(schema.$defs ?? {})) strip(value, seen);
}

/** The server's description without its lines about not knowing the calling session. */
export function withoutCallerCaveats(text) {
  return text
    .split("\n")
    .map((line) =>
      line
        .replace(/[;,]?\s*Pi 1\.6\.0 does not tell[^.]*\.( Pass your own session file[^.]*\.)?/g, ".")
        .replace(/\.\./g, "."),
    )
    .filter((line) => !/does not know which session/.test(line))
    .join("\n");
}

function joinText(first, second) {
  if (!second) return first ?? "";
  if (!first) return second;
  return `${first}${first.endsWith("\n") ? "" : " "}${second}`;
}

/**
 * Completes a call's arguments with the current session. Returns `{args, sessionsRead,
 * dropCurrent}`, or `{error}` when a tool has no session to read (a Pi session that is not
 * saved to a file). `dropCurrent` asks the caller to remove the current session from a
 * list_sessions answer (the server leaves out one session per call, and the call named another).
 * @param {ReturnType<typeof adaptTool>} tool
 * @param {Record<string, unknown> | undefined} input
 * @param {string | undefined} currentFile the current session file, if any
 */
export function prepareArguments(tool, input, currentFile) {
  const args = { ...(input ?? {}) };
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined) delete args[key];
  }
  const host = tool.host;
  const noSessionFile =
    "sessionPath: this Pi session is not saved to a file (it runs without a session file), so " +
    "there is no current session to read; pass a sessionPath from list_sessions";
  if (host.oneSession) {
    if (isGiven(args.sessionPath)) return { args, sessionsRead: `the session ${args.sessionPath}` };
    if (!currentFile) return { error: noSessionFile };
    args.sessionPath = currentFile;
    return { args, sessionsRead: `the current session ${currentFile}` };
  }
  if (!host.store) return { args };
  const include = args[INCLUDE_CURRENT] === true;
  const given = Object.keys(args).filter((key) => !SHAPING_ARGUMENTS.has(key) && isGiven(args[key]));
  if (!host.serverTakesInclude) delete args[INCLUDE_CURRENT];
  if (isGiven(args.sessionPath)) return { args, sessionsRead: `the session ${args.sessionPath} with its runs` };
  if (host.currentByDefault && given.length === 0) {
    if (!currentFile) return { error: noSessionFile };
    args.sessionPath = currentFile;
    return {
      args,
      sessionsRead:
        `only the current session ${currentFile} (the call named no sessions; give startTimestamp, ` +
        "cwds, by or includeCurrentSession to read the store)",
    };
  }
  const excluded = isGiven(args[EXCLUDE]) ? String(args[EXCLUDE]) : undefined;
  const filtered = given.some((key) => !NOT_CHOOSING_SESSIONS.has(key))
    ? "the sessions the filters choose"
    : "every session of the store";
  if (!currentFile) return { args, sessionsRead: excluded ? `${filtered} except ${excluded}` : filtered };
  if (excluded !== undefined && sameSessionFile(excluded, currentFile)) {
    // The server leaves out the session excludeSessionPath names (compared as files, not as
    // text), whatever includeCurrentSession says.
    if (host.serverTakesExclude) args[EXCLUDE] = currentFile;
    return {
      args,
      sessionsRead:
        `${filtered} except the current session ${currentFile}` +
        (include ? " (excludeSessionPath names it, and includeCurrentSession does not bring it back)" : ""),
    };
  }
  if (include) {
    const what = excluded ? `${filtered} except ${excluded}` : filtered;
    return { args, sessionsRead: `${what}, the current session included` };
  }
  if (!excluded) {
    if (host.serverTakesExclude) args[EXCLUDE] = currentFile;
    return { args, sessionsRead: `${filtered} except the current session ${currentFile}` };
  }
  // The server leaves out one session per call: list_sessions drops the current one from its
  // answer; the counting tools cannot, and say so.
  if (tool.name === "list_sessions") {
    return { args, dropCurrent: currentFile, sessionsRead: `${filtered} except ${excluded} and the current session` };
  }
  return {
    args,
    sessionsRead:
      `${filtered} except ${excluded}; the current session ${currentFile} is read too (one ` +
      "session can be left out per call)",
  };
}

/**
 * Arguments that do not choose sessions: they say what to count or find in each session, how
 * to group or order it, or which session to leave out. A call with only these reads every
 * session of the store.
 */
const NOT_CHOOSING_SESSIONS = new Set([
  INCLUDE_CURRENT,
  EXCLUDE,
  "by",
  "repeats",
  "rollup",
  "cwdMatch",
  "sortBy",
  "sortDirection",
  "order",
  "pattern",
  "regex",
  "case",
  "wholeWord",
  "thinking",
  "toolArgs",
  "toolResults",
  "system",
  "roles",
  "tools",
  "models",
  "kind",
]);

/** `path` made absolute the way the server reads it: `~` is the home directory. */
function expandHome(path) {
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return join(homedir(), path.slice(2));
  return path;
}

/**
 * Whether two session paths name the same file, as the server decides: the same file on disk
 * (device and inode, so a symlink, `..` or `//` in either does not matter), else, when one
 * cannot be read, the same absolute path once `.`, `..` and `//` are resolved.
 */
export function sameSessionFile(a, b) {
  if (a === b) return true;
  const left = expandHome(String(a));
  const right = expandHome(String(b));
  if (resolve(left) === resolve(right)) return true;
  try {
    const one = statSync(left, { bigint: true });
    const other = statSync(right, { bigint: true });
    return one.dev === other.dev && one.ino === other.ino;
  } catch {
    return false;
  }
}

/**
 * Adds what the host knows to a tool's structured result: which sessions were read, and for
 * list_sessions without the current session when the server could not leave it out.
 */
export function completeResult(structured, prepared) {
  if (structured === null || typeof structured !== "object" || Array.isArray(structured)) return structured;
  const result = { ...structured };
  if (prepared.dropCurrent && Array.isArray(result.sessions)) {
    // Only a namesake is looked at on disk, so a long listing costs no more than one stat each.
    const name = basename(prepared.dropCurrent);
    result.sessions = result.sessions.filter(
      (session) =>
        typeof session?.path !== "string" ||
        basename(session.path) !== name ||
        !sameSessionFile(session.path, prepared.dropCurrent),
    );
  }
  if (prepared.sessionsRead) result[SESSIONS_READ] = prepared.sessionsRead;
  return result;
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

/** How many failure groups `/retro failures` shows (the most recent ones). */
export const RETRO_FAILURE_GROUPS = 15;

/** How long `/retro` waits for the CLI before it stops it. */
export const RETRO_TIMEOUT_MS = 60_000;

/**
 * The longest delay a Node timer keeps: a longer one fires after 1 ms, so a timeout above it
 * is clamped to it (about 24.8 days, in practice no timeout).
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Reads a timeout variable (`PI_RETROSPECT_CALL_TIMEOUT_MS`, `PI_RETROSPECT_RETRO_TIMEOUT_MS`):
 * a whole number of milliseconds from 1 up; one above MAX_TIMER_MS is clamped to it. Anything
 * else (`0`, `-5`, `1.5`, `1e3`, `Infinity`, text) gives `fallback` and a warning naming the
 * value. Returns `{ms, warning?}`.
 * @param {string} name the variable's name
 * @param {string | undefined} text its value
 * @param {number} fallback
 */
export function parseTimeout(name, text, fallback) {
  if (text === undefined || text === "") return { ms: fallback };
  const trimmed = text.trim();
  if (/^[0-9]+$/.test(trimmed) && /[1-9]/.test(trimmed)) {
    // BigInt keeps a value of any length exact before the clamp.
    const value = BigInt(trimmed);
    return { ms: value > BigInt(MAX_TIMER_MS) ? MAX_TIMER_MS : Number(value) };
  }
  return {
    ms: fallback,
    warning:
      `${name}=${JSON.stringify(text)} is not a whole number of milliseconds from 1 to ` +
      `${MAX_TIMER_MS} (larger values are clamped to it); the default ${fallback} ms is used`,
  };
}

/** The longest `/retro search` text (the CLI's argument list has a bound). */
const RETRO_MAX_TEXT = 4096;

/**
 * Parses the text after `/retro` into the CLI arguments it runs (before the store flags) and
 * the heading its output gets, or a usage message.
 */
export function retroCommand(text) {
  const trimmed = (text ?? "").trim();
  const space = trimmed.search(/\s/);
  const sub = space < 0 ? trimmed : trimmed.slice(0, space);
  const rest = space < 0 ? "" : trimmed.slice(space + 1).trim();
  switch (sub) {
    case "failures":
      if (rest) return { usage: `/retro ${sub} takes no arguments\n${RETRO_USAGE}` };
      return { sub, args: ["failures", "--here", "--by", "signature", "--json"] };
    case "stats":
      if (rest) return { usage: `/retro ${sub} takes no arguments\n${RETRO_USAGE}` };
      return { sub, args: ["stats", "--here", "--by", "model", "--color", "never"] };
    case "search":
      if (!rest) return { usage: `/retro search needs the text to search for\n${RETRO_USAGE}` };
      if (rest.includes("\0")) return { usage: "/retro search: the text cannot hold a NUL character" };
      if (rest.length > RETRO_MAX_TEXT) {
        return { usage: `/retro search: the text is ${rest.length} characters long; at most ${RETRO_MAX_TEXT}` };
      }
      // `--` so a text that starts with `-` is searched for, not taken as a flag.
      return { sub, args: ["search", "--here", "--color", "never", "--", rest] };
    default:
      return { usage: sub ? `unknown /retro command ${JSON.stringify(sub)}\n${RETRO_USAGE}` : RETRO_USAGE };
  }
}

/** Shows control characters escaped, so session text cannot drive the terminal. */
export function escapeControls(text) {
  return String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
}

/** The warnings the CLI wrote to stderr, and the rest (an error message). */
function splitStderr(stderr) {
  const warnings = [];
  const other = [];
  for (const line of stderr.split("\n")) {
    if (!line.trim()) continue;
    if (/^pi-retrospect: (warning|note):/.test(line)) warnings.push(line.replace(/^pi-retrospect: /, ""));
    else other.push(line);
  }
  return { warnings, other };
}

/** `/retro failures`: the CLI's groups by signature, the most recent last (on screen). */
export function formatFailureGroups(document, limit = RETRO_FAILURE_GROUPS) {
  const groups = Array.isArray(document?.groups) ? [...document.groups] : [];
  const nFailures = document?.nFailures ?? groups.reduce((sum, group) => sum + (group.count ?? 0), 0);
  if (groups.length === 0) return "no failures in this project's sessions";
  groups.sort((a, b) => String(a.lastSeen).localeCompare(String(b.lastSeen)));
  const shown = groups.slice(-limit);
  const lines = [
    `${nFailures} failure${nFailures === 1 ? "" : "s"} in ${groups.length} group${groups.length === 1 ? "" : "s"} ` +
      `(same tool and error text)${groups.length > shown.length ? `; the ${shown.length} seen most recently` : ""}, newest last:`,
  ];
  for (const group of shown) {
    const last = String(group.lastSeen ?? "").replace("T", " ").replace(/\.\d+Z$/, "Z");
    lines.push(`${String(group.count).padStart(5)}×  ${group.nSessions} session${group.nSessions === 1 ? "" : "s"}, last ${last}`);
    lines.push(`        ${escapeControls(group.key)}`);
    lines.push(`        e.g. ${escapeControls(group.examplePath)} ${escapeControls(group.exampleEntryId)}`);
  }
  lines.push(
    "Every failure: session_failures in a codemode script, or `pi-retrospect failures --here` in a shell.",
  );
  return lines.join("\n");
}

/**
 * What `/retro` shows for a finished CLI run, headed by the command it ran: its text on
 * success; for `search` and `failures`, status 1 with only warnings on stderr means nothing was
 * found; warnings are shown after the text (as a warning); otherwise the CLI's error message
 * (its first paragraph, without clap's usage lines).
 * @param {{command: string, sub?: string, code: number | null, stdout: string, stderr: string,
 *   timedOut?: boolean, cwd?: string}} run
 */
export function retroResult({ command, sub, code, stdout, stderr, timedOut, timeoutMs = RETRO_TIMEOUT_MS, cwd }) {
  const heading = `${command}${cwd ? ` (${cwd})` : ""}`;
  if (timedOut) {
    return { level: "error", text: `${heading}: the CLI was stopped after ${timeoutMs / 1000} s without an answer (the timeout)` };
  }
  const { warnings, other } = splitStderr(stderr ?? "");
  const finished = code === 0 || (code === 1 && other.length === 0);
  if (!finished) {
    const message = (stderr ?? "").trim().split(/\n\s*\n/)[0]?.trim() || `exited with status ${code}`;
    return { level: "error", text: `${heading}: ${message}` };
  }
  let body = (stdout ?? "").replace(/\s+$/, "");
  if (sub === "failures") {
    if (code === 1) body = "";
    else {
      try {
        body = formatFailureGroups(JSON.parse(stdout));
      } catch {
        return { level: "error", text: `${heading}: the CLI's --json output could not be read` };
      }
    }
  }
  if (!body) body = code === 1 ? "nothing found" : "no output";
  const shownWarnings = warnings.slice(0, 5).map(escapeControls);
  if (warnings.length > 5) shownWarnings.push(`… and ${warnings.length - 5} more warnings`);
  const text = [`${heading}:`, body, ...(shownWarnings.length ? ["", ...shownWarnings] : [])].join("\n");
  return { level: warnings.length > 0 ? "warning" : "info", text };
}
