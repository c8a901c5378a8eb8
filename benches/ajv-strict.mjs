//! `PI_RETROSPECT_AJV=/tmp/ajv node benches/ajv-strict.mjs BIN [SESSIONS_ROOT]`: compiles every
//! input and output schema the MCP server lists with ajv in strict mode (JSON Schema 2020-12,
//! `strict: true`, so unknown keywords, `required` names without `properties`, missing types
//! and the like are errors, as clients that validate with ajv see them), and, given a store,
//! validates a `list_sessions` and a `session_stats` page against their output schemas.
//!
//! ajv is not a dependency of the project: `PI_RETROSPECT_AJV` names a directory where
//! `npm i ajv ajv-formats` was run; without it the script says so and exits 0, so it can sit
//! in a check list on machines without Node packages. Exits 1 when a schema fails.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ajvHome = process.env.PI_RETROSPECT_AJV;
if (!ajvHome) {
  console.log("PI_RETROSPECT_AJV is not set (a directory with `npm i ajv ajv-formats`): skipped");
  process.exit(0);
}
const [bin, givenRoot] = process.argv.slice(2);
if (!bin) throw new Error("usage: node ajv-strict.mjs BIN [SESSIONS_ROOT]");
const require = createRequire(join(ajvHome, "package.json"));
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats");

// An empty store when none is given: listing the tools needs no sessions.
const scratch = givenRoot ? null : mkdtempSync(join(tmpdir(), "ajv-strict-"));
const root = givenRoot ?? scratch;
const server = spawn(bin, ["mcp", "--sessions-root", root], { stdio: ["pipe", "pipe", "inherit"] });
const waiting = new Map();
let buffered = "";
server.stdout.on("data", (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf("\n")) >= 0) {
    const message = JSON.parse(buffered.slice(0, newline));
    buffered = buffered.slice(newline + 1);
    waiting.get(message.id)?.(message);
  }
});
let nextId = 0;
const request = (method, params) =>
  new Promise((resolve) => {
    const id = ++nextId;
    waiting.set(id, resolve);
    server.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  });

await request("initialize", {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "ajv-strict", version: "1" },
});
server.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
const { result } = await request("tools/list", {});

let nFailed = 0;
const validators = new Map();
for (const tool of result.tools) {
  for (const [kind, schema] of [["input", tool.inputSchema], ["output", tool.outputSchema]]) {
    if (!schema) {
      console.log(`FAIL ${tool.name} ${kind}: no schema`);
      nFailed++;
      continue;
    }
    // One ajv per schema: several schemas may share an $id.
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    try {
      validators.set(`${tool.name} ${kind}`, ajv.compile(schema));
      console.log(`ok   ${tool.name} ${kind}`);
    } catch (error) {
      console.log(`FAIL ${tool.name} ${kind}: ${error.message}`);
      nFailed++;
    }
  }
}

if (givenRoot) {
  for (const [name, args] of [["list_sessions", {}], ["session_stats", {}], ["session_stats", { by: ["model", "day"] }]]) {
    const { result: call } = await request("tools/call", { name, arguments: args });
    const validate = validators.get(`${name} output`);
    if (call.isError || !validate) {
      console.log(`FAIL ${name} ${JSON.stringify(args)}: ${JSON.stringify(call.content?.[0]?.text)}`);
      nFailed++;
    } else if (!validate(call.structuredContent)) {
      console.log(`FAIL ${name} ${JSON.stringify(args)} output: ${JSON.stringify(validate.errors.slice(0, 3))}`);
      nFailed++;
    } else {
      console.log(`ok   ${name} ${JSON.stringify(args)} output validates`);
    }
  }
}

server.stdin.end();
if (scratch) rmSync(scratch, { recursive: true, force: true });
console.log(nFailed === 0 ? "all schemas pass ajv strict mode" : `${nFailed} failed`);
process.exit(nFailed === 0 ? 0 : 1);
