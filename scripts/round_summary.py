#!/usr/bin/env python3
"""Summary of a per-theta interleaved round (scripts/sr_vs_base_round.sh, scripts/policy_round.sh):
lines `theta round label value...`. For each theta, the medians of the first value for A and B,
then for every named value the median of the per-round ratios B/A with a 95 % bootstrap
interval (4000 resamples of the rounds, as scripts/pair_summary.py) and in how many rounds B/A
was below 1.

    python3 scripts/round_summary.py runs.txt B/A name,name,...
    python3 scripts/round_summary.py sr.txt batch-sr/batch-base throughput,p90,p99
    python3 scripts/round_summary.py pol.txt rdeg/mc throughput,p90,p99,p99.9
"""
import random
import statistics as st
import sys

b, a = sys.argv[2].split("/")
names = sys.argv[3].split(",")
data = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f:
        data.setdefault(f[0], {}).setdefault(f[1], {})[f[2]] = [float(x) for x in f[3:]]
random.seed(1)


def interval(xs):
    meds = sorted(st.median(random.choices(xs, k=len(xs))) for _ in range(4000))
    return meds[100], meds[3899]


for theta in sorted(data, key=float):
    rounds = [v for v in data[theta].values() if a in v and b in v]
    ma = st.median(v[a][0] for v in rounds)
    mb = st.median(v[b][0] for v in rounds)
    cells = []
    for k, name in enumerate(names):
        ratio = [v[b][k] / v[a][k] for v in rounds]
        lo, hi = interval(ratio)
        below = sum(x < 1 for x in ratio)
        cells.append(f"{name} {st.median(ratio):.3f} [{lo:.3f}, {hi:.3f}] (below 1 in {below})")
    print(f"theta {theta} ({len(rounds)} rounds): {a} {ma / 1e3:.1f}K {b} {mb / 1e3:.1f}K; {b}/{a}: " + "; ".join(cells))
