#!/usr/bin/env python3
"""Summarizes scripts/policy_round.sh output: per theta, the median per-round ratio rdeg/mc of
throughput, p90, p99 and p99.9 latency, each with a 95 % bootstrap interval.

    python3 scripts/policy_summary.py runs.txt
"""
import random
import statistics as st
import sys

rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
data = {}
for theta, rnd, pol, tps, p90, p99, p999 in rows:
    data.setdefault(theta, {}).setdefault(rnd, {})[pol] = [float(x) for x in (tps, p90, p99, p999)]
random.seed(1)


def interval(xs):
    meds = sorted(st.median(random.choices(xs, k=len(xs))) for _ in range(4000))
    return meds[100], meds[3899]


for theta in sorted(data, key=float):
    rounds = [v for v in data[theta].values() if "mc" in v and "rdeg" in v]
    cells = []
    for k, name in enumerate(["throughput", "p90", "p99", "p99.9"]):
        ratio = [v["rdeg"][k] / v["mc"][k] for v in rounds]
        lo, hi = interval(ratio)
        cells.append(f"{name} {st.median(ratio):.3f} [{lo:.3f}, {hi:.3f}]")
    print(f"theta {theta} ({len(rounds)} rounds), rdeg/mc: " + "; ".join(cells))
