#!/usr/bin/env python3
"""Per-round silo-ta / silo of each build of a `compare --builds` run, and across builds.

usage: within_build.py DIR/results.csv
"""
import csv
import statistics
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
tps = {(r["protocol"], r["repeat"]): float(r["throughput_tps"]) for r in rows}
rounds = sorted({r["repeat"] for r in rows}, key=int)
builds = sorted({r["protocol"].split(":")[0] for r in rows})


def show(label, num, den):
    ratios = [tps[(num, k)] / tps[(den, k)] for k in rounds]
    per_round = " ".join(f"{x:.3f}" for x in ratios)
    print(f"{label}: median {statistics.median(ratios):.3f}; per round {per_round}")


for b in builds:
    show(f"{b}: silo-ta / silo", f"{b}:silo-ta", f"{b}:silo")
for b in builds:
    if b != "main":
        for p in ("silo", "silo-ta"):
            show(f"{p}: {b} / main", f"{b}:{p}", f"main:{p}")
