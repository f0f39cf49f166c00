#!/usr/bin/env python3
"""Summarize scripts/net_bench.sh output: median and min-max over rounds per configuration, and
the four performance bars of docs/results/net.md as ratios taken within each round."""
import json, statistics, sys
from collections import defaultdict

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = defaultdict(list)
per_round = defaultdict(dict)
for r in rows:
    b = r["bench"]
    if b == "throughput":
        key = f"throughput {r['driver']} {r['bytes']}B{' u64s' if r['words'] else ''} batching={'on' if r['batching'] else 'off'}"
        v = r["msgs_per_s"]
    elif b == "rtt":
        key = f"rtt {r['driver']} {r['bytes']}B"
        by[key + " p99"].append(r["p99_ns"] / 1000)
        per_round[r["round"]][key + " p99"] = r["p99_ns"] / 1000
        key += " p50"
        v = r["p50_ns"] / 1000
    elif b == "step":
        key, v = "step events/s", r["events_per_s"]
    else:
        key, v = f"sim {r['workload']} msgs/wall-s", r["msgs_per_wall_s"]
    by[key].append(v)
    per_round[r["round"]][key] = v

def fmt(v):
    return f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"

print("| configuration | median | min | max | rounds |")
print("| --- | ---: | ---: | ---: | ---: |")
for k in sorted(by):
    v = by[k]
    print(f"| {k} | {fmt(statistics.median(v))} | {fmt(min(v))} | {fmt(max(v))} | {len(v)} |")

def ratio(name, num, den):
    vals = [per_round[r][num] / per_round[r][den] for r in sorted(per_round)
            if num in per_round[r] and den in per_round[r]]
    if vals:
        print(f"| {name} | {statistics.median(vals):.2f} | {min(vals):.2f} | {max(vals):.2f} | {len(vals)} |")

print()
print("| ratio (within each round) | median | min | max | rounds |")
print("| --- | ---: | ---: | ---: | ---: |")
ratio("tcp2 64B batched / unbatched", "throughput tcp2 64B batching=on", "throughput tcp2 64B batching=off")
ratio("inproc / inproc-encode, 1 KiB bytes", "throughput inproc 1024B batching=on", "throughput inproc-encode 1024B batching=on")
ratio("inproc / inproc-encode, 1 KiB as u64s", "throughput inproc 1024B u64s batching=on", "throughput inproc-encode 1024B u64s batching=on")
