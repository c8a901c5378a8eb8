// The stdio client against a fake server: run with `node --test` in pi-package/.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { LineReader, McpServer, SharedStart } from "../extension/mcp-client.js";

const FAKE = fileURLToPath(new URL("./fake-server.js", import.meta.url));

function fake(options = {}) {
  return new McpServer({ command: process.execPath, args: [FAKE], ...options });
}

test("the handshake keeps the instructions, and the tool list follows its cursor", async () => {
  const server = fake();
  try {
    await server.start({ timeoutMs: 10_000 });
    assert.equal(server.instructions, "Fake tools.\nMore.");
    const tools = await server.listTools();
    assert.deepEqual(tools.map((tool) => tool.name), ["first", "second"]);
  } finally {
    server.close();
  }
});

test("calls are answered by id, concurrently, and errors carry the server's message", async () => {
  const server = fake();
  try {
    await server.start();
    const [a, b, pong] = await Promise.all([
      server.callTool("echo", { n: 1 }),
      server.callTool("echo", { n: 2 }),
      server.callTool("ping_first", {}),
    ]);
    assert.deepEqual([a.structuredContent, b.structuredContent], [{ n: 1 }, { n: 2 }]);
    assert.equal(pong.content[0].text, "pong {}");
    await assert.rejects(server.callTool("nope", {}), /unknown tool nope/);
    assert.equal(server.alive, true);
  } finally {
    server.close();
  }
});

test("a server that dies fails the waiting call with its stderr, and reports the exit", async () => {
  const exits = [];
  const server = fake({ onExit: (error) => exits.push(error.message) });
  await server.start();
  const waiting = server.callTool("hang", {});
  await assert.rejects(server.callTool("die", {}), /exited with status 3: fatal: asked to die/);
  await assert.rejects(waiting, /exited with status 3/);
  assert.equal(server.alive, false);
  assert.equal(exits.length, 1);
  await assert.rejects(server.callTool("echo", {}), /exited with status 3/);
});

test("an aborted call rejects and tells the server to cancel it", async () => {
  const server = fake();
  try {
    await server.start();
    const controller = new AbortController();
    const call = server.callTool("hang", {}, controller.signal);
    controller.abort();
    await assert.rejects(call, /cancelled/);
    // The server saw the cancellation for that request id.
    while (!server.stderrTail.includes("cancelled")) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.match(server.stderrTail, /^cancelled \d+$/m);
  } finally {
    server.close();
  }
});

test("close ends the server by closing its stdin", async () => {
  const server = fake();
  await server.start();
  const exited = once(server.child, "exit");
  // An idle server does not hold the event loop (so it never keeps Pi from exiting): the
  // test holds it while it waits.
  const keepAlive = setInterval(() => {}, 1000);
  server.close();
  const [code] = await exited;
  clearInterval(keepAlive);
  assert.equal(code, 0);
  assert.equal(server.alive, false);
});

function exitOf(server) {
  const child = server.child;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve([child.exitCode, child.signalCode]);
  return once(child, "exit");
}

test("a call the server does not answer in time fails naming the timeout, and the server is killed", async () => {
  const server = fake();
  await server.start();
  const exited = exitOf(server);
  const waiting = server.callTool("hang", {});
  await assert.rejects(server.callTool("hang", {}, undefined, { timeoutMs: 200 }), /hang: .* did not answer within 200 ms \(the timeout\); the server was stopped/);
  // Every other waiting call fails too, and the process is gone.
  await assert.rejects(waiting, /did not answer within 200 ms/);
  assert.equal(server.alive, false);
  const [, signal] = await exited;
  assert.equal(signal, "SIGKILL");
});

test("a handshake that times out kills the process it gave up on", async () => {
  const server = fake({ env: { ...process.env, FAKE_MODE: "silent" } });
  const started = server.start({ timeoutMs: 300 });
  await assert.rejects(started, /the MCP handshake: .* did not answer within 300 ms/);
  const [, signal] = await exitOf(server);
  assert.equal(signal, "SIGKILL");
  assert.equal(server.alive, false);
});

test("a reply over the line cap stops the server with a clear error instead of growing without bound", async () => {
  const server = fake({ maxLineBytes: 1024 * 1024 });
  await server.start();
  const exited = exitOf(server);
  await assert.rejects(server.callTool("flood", {}), /wrote more than 1048576 bytes without a newline.*stopped/);
  assert.equal(server.alive, false);
  await exited;
});

test("the line reader joins split lines, keeps multibyte characters and enforces its cap", () => {
  const reader = new LineReader(16);
  const text = Buffer.from('{"a":"é"}\n{"b":');
  assert.deepEqual(reader.push(text.subarray(0, 7)), []);
  assert.deepEqual(reader.push(text.subarray(7)), ['{"a":"é"}']);
  assert.deepEqual(reader.push(Buffer.from("1}\n\n")), ['{"b":1}', ""]);
  assert.equal(reader.push(Buffer.from("x".repeat(17))), undefined);
  // Many small chunks of one long line are each scanned once: 64 MiB in 64 KiB chunks stays fast.
  const big = new LineReader(128 * 1024 * 1024);
  const chunk = Buffer.alloc(64 * 1024, 120);
  for (let i = 0; i < 1024; i++) assert.deepEqual(big.push(chunk), []);
  const [line] = big.push(Buffer.from("\n"));
  assert.equal(line.length, 64 * 1024 * 1024);
});

test("a timeout above what a Node timer keeps is clamped instead of firing at once", async () => {
  const server = fake();
  await server.start();
  const call = server.callTool("hang", {}, undefined, { timeoutMs: 3_000_000_000 });
  const outcome = await Promise.race([
    call.then(
      () => "answered",
      (error) => error.message,
    ),
    new Promise((resolve) => setTimeout(() => resolve("still waiting"), 300)),
  ]);
  assert.equal(outcome, "still waiting");
  assert.equal(server.alive, true);
  server.close();
  await assert.rejects(call, /the server was stopped/);
});

test("a handshake whose start signal aborts kills its process", async () => {
  const server = fake({ env: { ...process.env, FAKE_MODE: "silent" } });
  const controller = new AbortController();
  const started = server.start({ timeoutMs: 60_000, signal: controller.signal });
  const exited = exitOf(server);
  setTimeout(() => controller.abort(), 100);
  await assert.rejects(started, /cancelled/);
  const [, signal] = await exited;
  assert.equal(signal, "SIGKILL");
});

test("a shared start is given up, killing its process, only once every waiting call is cancelled", async () => {
  const server = fake({ env: { ...process.env, FAKE_MODE: "silent" } });
  const shared = new SharedStart((signal) => server.start({ timeoutMs: 60_000, signal }));
  const one = new AbortController();
  const two = new AbortController();
  const first = shared.wait(one.signal);
  const second = shared.wait(two.signal);
  one.abort();
  await assert.rejects(first, /cancelled/);
  await new Promise((resolve) => setTimeout(resolve, 200));
  // The other call still waits for it.
  assert.equal(server.child.exitCode, null);
  assert.equal(server.child.signalCode, null);
  const exited = exitOf(server);
  two.abort();
  await assert.rejects(second, /cancelled/);
  const [, signal] = await exited;
  assert.equal(signal, "SIGKILL");
  await assert.rejects(shared.promise, /cancelled/);
});

/** Whether the process `pid` has ended (gone, or a zombie nobody has reaped yet). */
function ended(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return true;
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state === "Z" || state === "X";
}

test("when the Node process exits, a server mid-handshake and a stopped server are killed with it", { skip: process.platform !== "linux" }, async () => {
  // A process that loads the client, starts one server that never answers its handshake and
  // one it then stops (SIGSTOP), and exits on SIGTERM the way Pi does.
  const client = new URL("../extension/mcp-client.js", import.meta.url).href;
  const script = `
    import { McpServer } from ${JSON.stringify(client)};
    const fake = ${JSON.stringify(FAKE)};
    const silent = new McpServer({ command: process.execPath, args: [fake], env: { ...process.env, FAKE_MODE: "silent" } });
    silent.start({ timeoutMs: 600000 }).catch(() => {});
    const stopped = new McpServer({ command: process.execPath, args: [fake] });
    await stopped.start();
    process.kill(stopped.child.pid, "SIGSTOP");
    process.on("SIGTERM", () => process.exit(143));
    setInterval(() => {}, 1000);
    process.stdout.write(JSON.stringify([silent.child.pid, stopped.child.pid]) + "\\n");
  `;
  const host = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  let pids = [];
  try {
    const [line] = await once(createInterface({ input: host.stdout }), "line");
    pids = JSON.parse(line);
    const hostExit = once(host, "exit");
    host.kill("SIGTERM");
    const [code] = await hostExit;
    assert.equal(code, 143);
    const deadline = Date.now() + 5000;
    while (!pids.every(ended) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(
      pids.map((pid) => (ended(pid) ? "ended" : `pid ${pid} still running`)),
      ["ended", "ended"],
    );
  } finally {
    host.kill("SIGKILL");
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
});
