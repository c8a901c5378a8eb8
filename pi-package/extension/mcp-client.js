// A small Model Context Protocol client over a child process's stdio: newline-delimited
// JSON-RPC 2.0, as `pi-retrospect mcp` speaks it. Only what the extension needs: initialize,
// tools/list (following cursors), tools/call with cancellation, answering the server's pings,
// and ending the child. Every child it starts is tracked and killed when Pi exits. It has no
// dependencies, so the package installs offline.

import { spawn } from "node:child_process";

/** The MCP protocol version the client asks for; the server answers with the one it speaks. */
export const PROTOCOL_VERSION = "2025-06-18";

/** How much of the server's stderr is kept to explain an exit. */
const STDERR_TAIL_BYTES = 4096;

/** How long a closed server gets to exit before it is sent SIGTERM, then SIGKILL. */
const EXIT_GRACE_MS = 2000;

/** The longest delay a Node timer keeps (a longer one fires after 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The children started and not yet exited, one set per process even when Pi loads the
 * extension more than once (`/reload`), so one exit hook ends them all.
 */
const CHILDREN_KEY = Symbol.for("pi-retrospect.extension.children");
const children = (globalThis[CHILDREN_KEY] ??= { live: new Set(), hooked: false });

/**
 * Tracks a child the extension started (a server, a handshake, a `/retro` run) until it
 * exits; when the Node process exits first, the child's process group is killed. Pi exits
 * without waiting for timers, and a stopped or stuck child would outlive it otherwise.
 */
export function track(child) {
  children.live.add(child);
  child.once("exit", () => children.live.delete(child));
  child.once("error", () => {
    // A child that never started has nothing to kill.
    if (child.pid === undefined) children.live.delete(child);
  });
  if (!children.hooked) {
    children.hooked = true;
    process.once("exit", killAll);
  }
  return child;
}

/**
 * Kills every tracked child with SIGKILL, which also ends a stopped process (SIGTERM would
 * wait for a SIGCONT), and its process group.
 */
export function killAll() {
  for (const child of children.live) {
    if (child.exitCode === null && child.signalCode === null) killGroup(child, "SIGKILL");
  }
}

/** A running `pi-retrospect mcp` and the requests waiting for its answers. */
export class McpServer {
  /**
   * @param {{command: string, args: string[], cwd?: string, env?: NodeJS.ProcessEnv,
   *   onExit?: (error: Error) => void, onToolsChanged?: () => void}} options
   */
  constructor(options) {
    this.options = options;
    this.child = undefined;
    this.nextId = 1;
    /** @type {Map<number, {resolve: (value: any) => void, reject: (error: Error) => void}>} */
    this.pending = new Map();
    this.stderrTail = "";
    this.exited = undefined;
    this.instructions = undefined;
  }

  /** Whether the process is running and has not been told to stop. */
  get alive() {
    return this.child !== undefined && this.exited === undefined && !this.closing;
  }

  /**
   * Starts the process and performs the MCP handshake. When `signal` aborts first, the
   * process is killed and the start fails with "cancelled".
   * @param {{timeoutMs?: number, signal?: AbortSignal}} [options]
   */
  async start(options = {}) {
    const { command, args, cwd, env } = this.options;
    // Its own process group, so giving up on it also ends whatever it started (a wrapper
    // script's children).
    const child = spawn(command, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: process.platform !== "win32" });
    this.child = child;
    track(child);
    child.stdin.on("error", () => {
      // A server that exits while a request is written: the exit handler reports it.
    });
    const reader = new LineReader(this.options.maxLineBytes ?? MAX_LINE_BYTES);
    child.stdout.on("data", (chunk) => {
      const lines = reader.push(chunk);
      if (lines === undefined) {
        this.abandon(
          new Error(
            `${command} mcp wrote more than ${reader.max} bytes without a newline (a reply this ` +
              "large is not one this client reads); it was stopped",
          ),
        );
        return;
      }
      for (const line of lines) {
        const trimmed = line.trim();
        if (trimmed) this.receive(trimmed);
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
    });
    const started = new Promise((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    child.on("error", (error) => this.finish(error));
    child.on("exit", (code, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      const tail = this.stderrTail.trim();
      this.finish(new Error(`${command} mcp ${how}${tail ? `: ${tail}` : ""}`));
    });
    let result;
    try {
      await started;
      const initialize = this.request(
        "initialize",
        {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "pi-retrospect-extension", version: "1" },
        },
        undefined,
        { timeoutMs: options.timeoutMs, what: "the MCP handshake" },
      );
      const onAbort = () => this.abandon(new Error("cancelled: the MCP handshake was given up"));
      options.signal?.addEventListener("abort", onAbort, { once: true });
      if (options.signal?.aborted) onAbort();
      try {
        result = await initialize;
      } finally {
        options.signal?.removeEventListener("abort", onAbort);
      }
    } catch (error) {
      // A server that never finished its handshake is of no use and must not outlive the call
      // that gave up on it (its pipes would also keep Pi from exiting).
      this.abandon(error);
      throw error;
    }
    this.instructions = typeof result?.instructions === "string" ? result.instructions : undefined;
    this.serverVersion = typeof result?.serverInfo?.version === "string" ? result.serverInfo.version : undefined;
    this.notify("notifications/initialized");
    this.updateRef();
    return result;
  }

  /** Every tool the server lists, following `nextCursor`. */
  async listTools(options = {}) {
    const tools = [];
    let cursor;
    do {
      const page = await this.request("tools/list", cursor === undefined ? {} : { cursor }, undefined, {
        timeoutMs: options.timeoutMs,
        what: "tools/list",
      });
      tools.push(...(page?.tools ?? []));
      cursor = typeof page?.nextCursor === "string" && page.nextCursor ? page.nextCursor : undefined;
    } while (cursor !== undefined);
    return tools;
  }

  /**
   * Calls a tool and returns its `CallToolResult`.
   * @param {string} name
   * @param {Record<string, unknown>} args
   * @param {AbortSignal} [signal]
   * @param {{timeoutMs?: number}} [options] a call not answered in time stops the server
   */
  callTool(name, args, signal, options = {}) {
    return this.request("tools/call", { name, arguments: args }, signal, {
      timeoutMs: options.timeoutMs,
      what: `${name}`,
    });
  }

  /**
   * Sends a request and resolves with its result; rejects with the server's error, when the
   * process exits first, when `signal` aborts (the server is told to cancel), or after
   * `timeoutMs` (a server that does not answer is stuck: it is stopped, failing every waiting
   * request, and the next call starts a new one).
   * @param {{timeoutMs?: number, what?: string}} [options]
   */
  request(method, params, signal, options = {}) {
    if (this.exited) return Promise.reject(this.exited);
    if (signal?.aborted) return Promise.reject(new Error("cancelled"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      let timer;
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        this.notify("notifications/cancelled", { requestId: id, reason: "cancelled by Pi" });
        this.updateRef();
        reject(new Error("cancelled"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      this.pending.set(id, {
        resolve: (value) => {
          settle();
          resolve(value);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      if (options.timeoutMs) {
        // A delay above what a timer keeps would fire at once: it is clamped instead.
        const delay = Math.min(options.timeoutMs, MAX_TIMER_MS);
        timer = setTimeout(() => {
          if (!this.pending.has(id)) return;
          const seconds = delay >= 1000 ? `${delay / 1000} s` : `${delay} ms`;
          this.abandon(
            new Error(
              `${options.what ?? method}: ${this.options.command} mcp did not answer within ${seconds} ` +
                "(the timeout); the server was stopped",
            ),
          );
        }, delay);
      }
      this.updateRef();
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  /** Sends a notification (no answer). */
  notify(method, params) {
    this.send(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
  }

  send(message) {
    if (!this.child || this.exited || this.closing) return;
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Handles one line from the server. */
  receive(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      // The server writes only protocol messages; anything else is ignored rather than fatal.
      return;
    }
    if (message === null || typeof message !== "object") return;
    if (typeof message.method === "string") {
      if (message.id !== undefined) {
        // A request from the server: it may ping; the client offers nothing else.
        if (message.method === "ping") {
          this.send({ jsonrpc: "2.0", id: message.id, result: {} });
        } else {
          this.send({
            jsonrpc: "2.0",
            id: message.id,
            error: { code: -32601, message: `${message.method} is not supported by this client` },
          });
        }
      } else if (message.method === "notifications/tools/list_changed") {
        this.options.onToolsChanged?.();
      }
      return;
    }
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    this.updateRef();
    if (message.error) {
      const error = new Error(String(message.error.message ?? "MCP error"));
      error.code = message.error.code;
      waiting.reject(error);
    } else {
      waiting.resolve(message.result);
    }
  }

  /** Records the exit and fails every waiting request with its reason. */
  finish(error) {
    if (this.exited) return;
    this.exited = error;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
    if (!this.closing) this.options.onExit?.(error);
  }

  /**
   * Keeps Pi's event loop alive only while a request waits, so an idle server never keeps Pi
   * from exiting (the server ends when its stdin closes with Pi).
   */
  updateRef() {
    const child = this.child;
    if (!child || this.exited) return;
    const busy = this.pending.size > 0;
    for (const handle of [child, child.stdin, child.stdout, child.stderr]) {
      if (busy) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  /** Ends the server: closes its stdin, then signals it if it has not exited. */
  close() {
    const child = this.child;
    if (!child || this.exited || this.closing) return;
    this.closing = true;
    for (const waiting of this.pending.values()) waiting.reject(new Error("the server was stopped"));
    this.pending.clear();
    child.stdin.end();
    const term = setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const kill = setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      }, EXIT_GRACE_MS);
      kill.unref();
    }, EXIT_GRACE_MS);
    term.unref();
  }

  /**
   * Gives up on the server: kills it at once (SIGKILL also ends a stopped process) and fails
   * every waiting request with `error`.
   */
  abandon(error) {
    const child = this.child;
    this.finish(error);
    if (child) killGroup(child, "SIGKILL");
    child?.stdout?.destroy();
    child?.stdin?.destroy();
    child?.stderr?.destroy();
  }

  /** Ends the server and its process group at once, also when it is stopped or stuck. */
  kill() {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) killGroup(child, "SIGKILL");
  }
}

/**
 * A server start shared by the calls that wait for it. A call that is cancelled stops
 * waiting; when every call waiting has been cancelled, nobody wants the server and the start
 * is given up, killing its process (a handshake to a stuck binary would otherwise run on
 * until its timeout, or outlive Pi).
 */
export class SharedStart {
  /**
   * @param {(signal: AbortSignal) => Promise<any>} run starts the server; it must end its
   *   process when `signal` aborts
   */
  constructor(run) {
    this.controller = new AbortController();
    this.waiting = 0;
    this.promise = run(this.controller.signal);
    // A start nobody waits for any more must not be an unhandled rejection.
    this.promise.catch(() => {});
  }

  /** Waits for the start, or rejects with "cancelled" when `signal` aborts first. */
  wait(signal) {
    if (signal?.aborted) return Promise.reject(new Error("cancelled"));
    this.waiting++;
    return new Promise((resolve, reject) => {
      let done = false;
      const leave = () => {
        if (done) return false;
        done = true;
        this.waiting--;
        signal?.removeEventListener("abort", onAbort);
        return true;
      };
      const onAbort = () => {
        if (!leave()) return;
        if (this.waiting === 0) this.controller.abort();
        reject(new Error("cancelled"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.promise.then(
        (value) => {
          if (leave()) resolve(value);
        },
        (error) => {
          if (leave()) reject(error);
        },
      );
    });
  }
}

/** Sends `signal` to the child's process group (to the child alone where there is none). */
export function killGroup(child, signal) {
  if (child.pid === undefined) return;
  try {
    if (process.platform !== "win32") process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // The group is gone already; the child itself may remain.
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }
}

/** The longest line the client reads from the server (a reply is one line). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * Splits a byte stream into lines in linear time: each chunk is scanned once for newlines and
 * the bytes of an unfinished line are only joined when its newline arrives. Returns undefined
 * once an unfinished line is longer than `max` bytes.
 */
export class LineReader {
  constructor(max = MAX_LINE_BYTES) {
    this.max = max;
    this.parts = [];
    this.size = 0;
  }

  /** The lines `chunk` completes (without their newlines), or undefined past the cap. */
  push(chunk) {
    const lines = [];
    let start = 0;
    let newline;
    while ((newline = chunk.indexOf(10, start)) >= 0) {
      const piece = chunk.subarray(start, newline);
      if (this.size + piece.length > this.max) return undefined;
      this.parts.push(piece);
      lines.push(Buffer.concat(this.parts).toString("utf8"));
      this.parts = [];
      this.size = 0;
      start = newline + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.size += rest.length;
      if (this.size > this.max) return undefined;
      this.parts.push(rest);
    }
    return lines;
  }
}
