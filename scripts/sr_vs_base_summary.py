#!/usr/bin/env python3
"""Summarizes scripts/sr_vs_base_round.sh output: per theta, the median per-round ratio sr/base of
throughput with a 95 % bootstrap interval, how many rounds were below 1, and the median p90 / p99
latency ratios.

    python3 scripts/sr_vs_base_summary.py runs.txt
"""
import random
import statistics as st
import sys

rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
data = {}
for theta, rnd, proto, tps, p90, p99 in rows:
    data.setdefault(theta, {}).setdefault(rnd, {})[proto] = (float(tps), float(p90), float(p99))
random.seed(1)


def interval(xs):
    meds = sorted(st.median(random.choices(xs, k=len(xs))) for _ in range(4000))
    return meds[100], meds[3899]


for theta in sorted(data, key=float):
    rounds = [v for v in data[theta].values() if "batch-base" in v and "batch-sr" in v]
    ratio = [v["batch-sr"][0] / v["batch-base"][0] for v in rounds]
    lo, hi = interval(ratio)
    base = st.median(v["batch-base"][0] for v in rounds)
    sr = st.median(v["batch-sr"][0] for v in rounds)
    p90 = st.median(v["batch-sr"][1] / v["batch-base"][1] for v in rounds)
    p99 = st.median(v["batch-sr"][2] / v["batch-base"][2] for v in rounds)
    below = sum(x < 1 for x in ratio)
    print(
        f"theta {theta}: base {base / 1e3:.1f}K sr {sr / 1e3:.1f}K; sr/base {st.median(ratio):.3f} "
        f"[{lo:.3f}, {hi:.3f}], below 1 in {below}/{len(ratio)}; p90 ratio {p90:.2f}, p99 ratio {p99:.2f}"
    )
