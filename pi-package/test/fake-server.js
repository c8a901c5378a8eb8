// A stand-in for `pi-retrospect mcp` in the client's tests: answers over stdio the way the
// real server does, with behaviours the tests ask for by tool name.

import { createInterface } from "node:readline";

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const lines = createInterface({ input: process.stdin });
// A server that never answers its handshake (and ignores stdin closing): FAKE_MODE=silent.
const silent = process.env.FAKE_MODE === "silent";
if (silent) setInterval(() => {}, 1000);
const held = new Map();
let pingId = 1000;

lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (silent) return;
  if (message.method === "initialize") {
    send({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "fake", version: "0" }, instructions: "Fake tools.\nMore." } });
  } else if (message.method === "tools/list") {
    // Two pages, as a server that pages its list would send.
    if (message.params?.cursor === "page-2") {
      send({ jsonrpc: "2.0", id: message.id, result: { tools: [{ name: "second", inputSchema: { type: "object" } }] } });
    } else {
      send({ jsonrpc: "2.0", id: message.id, result: { tools: [{ name: "first", inputSchema: { type: "object" } }], nextCursor: "page-2" } });
    }
  } else if (message.method === "tools/call") {
    const { name, arguments: args } = message.params;
    if (name === "echo") {
      send({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "echo" }], structuredContent: args } });
    } else if (name === "ping_first") {
      // Asks the client something before answering.
      send({ jsonrpc: "2.0", id: pingId, method: "ping" });
      held.set(pingId++, message.id);
    } else if (name === "hang") {
      held.set(`hang-${message.id}`, message.id);
    } else if (name === "flood") {
      // A reply that never ends: bytes without a newline.
      const block = "x".repeat(64 * 1024);
      const write = () => {
        while (process.stdout.write(block));
        process.stdout.once("drain", write);
      };
      write();
    } else if (name === "die") {
      process.stderr.write("fatal: asked to die\n");
      process.exit(3);
    } else {
      send({ jsonrpc: "2.0", id: message.id, error: { code: -32602, message: `unknown tool ${name}` } });
    }
  } else if (message.method === "notifications/cancelled") {
    const id = message.params.requestId;
    send({ jsonrpc: "2.0", id: 9999, method: "notifications/message", params: { cancelled: id } });
    process.stderr.write(`cancelled ${id}\n`);
  } else if (message.id !== undefined && held.has(message.id)) {
    // The client's answer to the ping: now answer the call.
    const callId = held.get(message.id);
    held.delete(message.id);
    send({ jsonrpc: "2.0", id: callId, result: { content: [{ type: "text", text: `pong ${JSON.stringify(message.result)}` }] } });
  }
});
lines.on("close", () => {
  if (!silent) process.exit(0);
});
