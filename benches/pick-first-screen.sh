#!/usr/bin/env bash
# Measures how long `pi-retrospect pick` takes, from the start of the process to the end of its
# first screen, on a real terminal: tmux gives an 80x24 terminal, util-linux `script` runs the
# picker in it and logs every chunk of output with its time (--log-timing), and the time of
# the chunk that completes the first frame (its last line holds "quit") is the figure. The
# time the whole store is listed (the title starts counting names: "reading names") is shown
# beside it. Each run is then left with Esc. Prints every run, then the median, minimum and
# maximum of both, in milliseconds.
#
# Usage: benches/pick-first-screen.sh STORE DIR [RUNS]
#   STORE  a sessions root (`cargo xtask fixtures --big 10000 --out STORE`)
#   DIR    the directory the picker starts in (its sessions are the first screen)
#   RUNS   how many runs (15)
# BIN names the binary (default target/release/pi-retrospect). Needs tmux, script, python3.
set -euo pipefail

store=$(realpath "$1")
here=$(realpath "$2")
runs=${3:-15}
bin=$(realpath "${BIN:-target/release/pi-retrospect}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

first=()
listed=()
for run in $(seq "$runs"); do
  session="pick-bench-$$-$run"
  rm -f "$work/timing" "$work/out"
  tmux new-session -d -s "$session" -x 80 -y 24 \
    "cd '$here' && script -q --log-timing '$work/timing' --log-out '$work/out' -c '$bin pick --sessions-root $store'"
  for _ in $(seq 500); do
    if [ -f "$work/out" ] && grep -q "reading names" "$work/out"; then break; fi
    sleep 0.02
  done
  tmux send-keys -t "$session" Escape
  while tmux has-session -t "$session" 2>/dev/null; do sleep 0.05; done
  times=$(python3 - "$work/out" "$work/timing" <<'EOF'
import sys
data = open(sys.argv[1], 'rb').read()
start = data.index(b'\n') + 1 if data.startswith(b'Script started') else 0
elapsed, end, found = 0.0, start, {}
for line in open(sys.argv[2]):
    delay, size = line.split()
    elapsed += float(delay)
    end += int(size)
    for marker in (b'quit', b'reading names'):
        if marker not in found and marker in data[start:end]:
            found[marker] = elapsed * 1000
print('%.1f %.1f' % (found.get(b'quit', -1), found.get(b'reading names', -1)))
EOF
)
  first+=("${times% *}")
  listed+=("${times#* }")
  echo "run $run: first screen ${times% *} ms, whole store listed ${times#* } ms"
done
summary() {
  sort -n | awk -v what="$1" '{ v[NR] = $1 } END {
    median = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%s: median %.1f ms, min %.1f ms, max %.1f ms over %d runs\n", what, median, v[1], v[NR], NR
  }'
}
printf '%s\n' "${first[@]}" | summary "first screen"
printf '%s\n' "${listed[@]}" | summary "whole store listed"
