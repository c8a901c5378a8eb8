#!/usr/bin/env python3
"""Load on `pi-retrospect mcp`, measured from outside with only the standard library.

Two cases, each on a fresh server over STORE:

- concurrent: N tools/call requests written at once (list_sessions, a search_sessions page
  and a newest-first list_sessions in turn), then every answer read; reports answered / tool errors / busy
  refusals, the wall time and the server's peak RSS (VmHWM from /proc).
- stall: a writer keeps sending list_sessions calls while the client reads nothing for
  STALL seconds; reports VmRSS each second and the peak, then reads every answer.

Usage: benches/mcp_load.py BINARY STORE [--calls 300] [--stall 15] [--stall-calls 5000]
"""

import argparse
import json
import subprocess
import sys
import threading
import time


def memory_kib(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmHWM", "VmRSS"):
                fields[name] = int(value.split()[0])
    return fields["VmHWM"], fields["VmRSS"]


def start(binary, store):
    server = subprocess.Popen(
        [binary, "mcp", "--sessions-root", store],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={"HOME": "/nonexistent", "TZ": "UTC", "PATH": "/usr/bin:/bin"},
    )
    send(server, {"jsonrpc": "2.0", "id": "init", "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "mcp_load", "version": "0"}}})
    answer = read(server)
    assert answer["id"] == "init", answer
    send(server, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return server


def send(server, message):
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()


def read(server):
    line = server.stdout.readline()
    if not line:
        raise SystemExit("the server closed stdout")
    return json.loads(line)


def call(request_id, tool, arguments):
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}


def classify(answer):
    result = answer.get("result", {})
    if "error" in answer:
        return "protocol error"
    if result.get("isError"):
        text = "".join(block.get("text", "") for block in result.get("content", []))
        return "busy" if "retry" in text else "tool error"
    return "ok"


def concurrent(binary, store, n_calls):
    server = start(binary, store)
    tools = [("list_sessions", {}),
             ("search_sessions", {"pattern": "error", "limit": 20}),
             ("list_sessions", {"sortDirection": "desc", "limit": 50})]
    began = time.monotonic()
    for request_id in range(n_calls):
        tool, arguments = tools[request_id % len(tools)]
        send(server, call(request_id, tool, arguments))
    counts = {}
    seen = set()
    while len(seen) < n_calls:
        answer = read(server)
        seen.add(answer["id"])
        kind = classify(answer)
        counts[kind] = counts.get(kind, 0) + 1
    elapsed = time.monotonic() - began
    peak, now = memory_kib(server.pid)
    server.stdin.close()
    server.wait()
    print(f"concurrent: {n_calls} calls, answered {len(seen)} {counts}, "
          f"{elapsed:.1f} s, peak RSS {peak / 1024:.1f} MB, RSS at end {now / 1024:.1f} MB")


def stall(binary, store, seconds, n_calls):
    server = start(binary, store)

    def writer():
        try:
            for request_id in range(n_calls):
                line = json.dumps(call(request_id, "list_sessions", {})) + "\n"
                server.stdin.write(line.encode())
            server.stdin.flush()
        except BrokenPipeError:
            pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    samples = []
    for second in range(seconds):
        time.sleep(1)
        peak, now = memory_kib(server.pid)
        samples.append(now)
    peak, now = memory_kib(server.pid)
    print(f"stall: not reading for {seconds} s with {n_calls} calls written: RSS each second "
          f"{[round(kib / 1024, 1) for kib in samples]} MB, peak RSS {peak / 1024:.1f} MB",
          flush=True)
    counts = {}
    seen = set()
    while len(seen) < n_calls:
        answer = read(server)
        seen.add(answer["id"])
        kind = classify(answer)
        counts[kind] = counts.get(kind, 0) + 1
    thread.join()
    server.stdin.close()
    server.wait()
    peak, _ = memory_kib(server.pid) if server.poll() is None else (peak, now)
    print(f"stall: then answered {len(seen)} {counts}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("store")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--stall", type=int, default=15)
    parser.add_argument("--stall-calls", type=int, default=5000)
    args = parser.parse_args()
    if args.calls:
        concurrent(args.binary, args.store, args.calls)
    stall(args.binary, args.store, args.stall, args.stall_calls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
