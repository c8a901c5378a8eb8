//! `node benches/pi-open.mjs FILE [--runs N]`: Pi's side of the transcript benchmark.
//!
//! Opens a session with Pi's own SDK (`@earendil-works/pi-coding-agent`, from
//! `$ORACLE_CACHE/node_modules`, default `/tmp/oracle-cache`, as `/work/shared/oracle/setup.sh`
//! installs it) and does the work `xtask/src/bin/transcript_open.rs` does:
//! `SessionManager.open` (parse every entry, index by id, leaf), `getBranch()` (the active
//! branch) and `buildSessionContext()` (the messages sent to the model).
//!
//! `open` may migrate or repair the file and writes beside it, so every run opens a fresh COPY
//! in a new temporary directory; the copy is not timed. Only open + branch + context is timed,
//! with `process.hrtime`. Node start-up and loading the SDK are not timed either, which favours
//! Pi. Each run prints one line on stdout:
//! `ms <wall ms> entries <n> branch <n> context <n> rss_mb <resident MB after the run>`.
//! Needs Node 22 (the SDK's engine).

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const usage = "usage: node pi-open.mjs FILE [--runs N]";
const args = process.argv.slice(2);
let file;
let runs = 1;
for (let idx = 0; idx < args.length; idx++) {
  if (args[idx] === "--runs") {
    runs = Number(args[++idx]);
    if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs needs a positive number\n${usage}`);
  } else if (file === undefined) {
    file = args[idx];
  } else {
    throw new Error(usage);
  }
}
if (file === undefined) throw new Error(usage);

const cache = process.env.ORACLE_CACHE || "/tmp/oracle-cache";
const sdk = join(cache, "node_modules/@earendil-works/pi-coding-agent/dist/index.js");
const { SessionManager } = await import(pathToFileURL(sdk).href);

for (let run = 0; run < runs; run++) {
  const dir = mkdtempSync(join(tmpdir(), "pi-open-"));
  try {
    const copy = join(dir, basename(file));
    copyFileSync(file, copy);
    const started = process.hrtime.bigint();
    const manager = SessionManager.open(copy);
    const branch = manager.getBranch();
    const context = manager.buildSessionContext();
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    const rss = process.memoryUsage().rss / (1024 * 1024);
    console.log(
      `ms ${elapsed.toFixed(1)} entries ${manager.getEntryCount()} branch ${branch.length} ` +
        `context ${context.messages.length} rss_mb ${rss.toFixed(1)}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
