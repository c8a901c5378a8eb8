// The stdio client against a fake server: run with `node --test` in pi-package/.

import assert from "node:assert/strict";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { McpServer } from "../extension/mcp-client.js";

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
