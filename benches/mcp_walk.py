#!/usr/bin/env python3
"""`python3 benches/mcp_walk.py BIN SESSIONS_ROOT SESSION_FILE [--limit N]`: walks the pages of
`session_entries` and of `inspect_session` (view overview) over one session through
`pi-retrospect mcp` (raw JSON-RPC over pipes, standard library only) and checks that every entry
comes exactly once: each physical line but the header for session_entries, and `nTotal`
checkpoints for inspect_session. Prints pages, items, the largest page and the wall time.
"""

import argparse
import json
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("root")
    parser.add_argument("session")
    parser.add_argument("--limit", type=int, default=500)
    args = parser.parse_args()
    server = subprocess.Popen([args.bin, "mcp", "--sessions-root", args.root],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    next_id = [0]

    def request(method, params):
        next_id[0] += 1
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method,
                                       "params": params}) + "\n")
        server.stdin.flush()
        while True:
            message = json.loads(server.stdout.readline())
            if message.get("id") == next_id[0]:
                return message

    request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "walk", "version": "0"}})
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")

    def walk(tool, arguments, rows_key, key):
        seen, n_dups, n_pages, max_bytes, cursor = [], 0, 0, 0, None
        started = time.monotonic()
        first = None
        while True:
            page_args = dict(arguments, **({"cursor": cursor} if cursor else {}))
            result = request("tools/call", {"name": tool, "arguments": page_args})["result"]
            if result.get("isError"):
                sys.exit(f"{tool}: {result['content'][0]['text']}")
            page = result["structuredContent"]
            first = first or page
            n_pages += 1
            max_bytes = max(max_bytes, page["bytes"])
            seen.extend(key(item) for item in page[rows_key])
            cursor = page.get("nextCursor")
            if not cursor:
                break
        n_dups = len(seen) - len(set(seen))
        print(f"{tool}: {n_pages} pages, {len(seen)} items, {len(set(seen))} unique, "
              f"{n_dups} repeated, largest page {max_bytes} B, {time.monotonic() - started:.1f} s")
        return seen, first

    with open(args.session, "rb") as file:
        n_lines = sum(1 for _ in file)
    lines, _ = walk("session_entries", {"sessionPath": args.session, "limit": args.limit},
                    "entries", lambda row: row["lineNo"])
    ok = sorted(lines) == list(range(2, n_lines + 1)) and len(lines) == n_lines - 1
    print(f"session_entries: every line 2..{n_lines} exactly once: {ok}")
    checkpoints, first = walk("inspect_session",
                              {"sessionPath": args.session, "view": "overview", "limit": 50},
                              "checkpoints", lambda item: item["entryId"])
    ok_inspect = len(checkpoints) == len(set(checkpoints)) == first["nTotal"]
    print(f"inspect_session: nTotal {first['nTotal']}, every checkpoint exactly once: {ok_inspect}")
    server.stdin.close()
    server.wait()
    sys.exit(0 if ok and ok_inspect else 1)


if __name__ == "__main__":
    main()
