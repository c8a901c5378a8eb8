#!/usr/bin/env python3
"""paired.py ROUNDS LABEL=COMMAND ...: runs the commands back to back in each round and prints, per
command, the median wall time and CPU time (user+system of the child) and the median of the
per-round ratios to the first command. Used for the paired figures in benches/README.md."""
import sys, subprocess, time, resource, statistics
rounds = int(sys.argv[1])
cmds = [a.split('=', 1) for a in sys.argv[2:]]
res = {l: ([], []) for l, _ in cmds}
for r in range(rounds):

    for label, cmd in cmds:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        res[label][0].append(wall * 1000); res[label][1].append(cpu * 1000)
b = cmds[0][0]
for label, _ in cmds:
    w, c = res[label]
    rw = statistics.median([x / y for x, y in zip(w, res[b][0])])
    rc = statistics.median([x / y for x, y in zip(c, res[b][1])])
    print(f"{label:14s} wall med {statistics.median(w):6.1f} min {min(w):6.1f} ratio {rw:.2f}x (of meds {statistics.median(w)/statistics.median(res[b][0]):.2f}x) | cpu med {statistics.median(c):6.1f} ratio {rc:.2f}x")
