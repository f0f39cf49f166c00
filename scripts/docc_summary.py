#!/usr/bin/env python3
"""Medians, per-round ratios and statistics of scripts/docc_rounds.py's JSON lines.

    python3 scripts/docc_summary.py OUT.jsonl [NUM/DEN ...]

Prints, per label: median throughput (min-max), median p50/p99 latency, commits per CPU-second,
and the statistics of docs/results/docc.md (retries per commit, retry lookups saved, waiting time
per transaction, OLLP restarts by type, lock-manager utilization). Each NUM/DEN prints the ratio
of the two labels' throughputs: the median of the per-round ratios with a bootstrap 95 % interval
over rounds (10,000 resamples, seed 1), and the same for commits per CPU-second.
"""
import collections, json, random, statistics, sys

def load(path):
    rows = collections.defaultdict(dict)
    for line in open(path):
        r = json.loads(line)
        rows[r["label"]][r["round"]] = r
    return rows

def med(xs):
    return statistics.median(xs)

def boot(ratios, n=10_000):
    rng = random.Random(1)
    ms = sorted(med([rng.choice(ratios) for _ in ratios]) for _ in range(n))
    return ms[int(0.025 * n)], ms[int(0.975 * n) - 1]

def per_cpu(r):
    return r["commits"] / max(r["cpu_time_s"], 1e-9)

def stats(rs):
    c = collections.Counter()
    commits = sum(r["commits"] for r in rs)
    elapsed = sum(r["elapsed_s"] for r in rs)
    for r in rs:
        c.update(r["counters"])
    out = []
    if commits:
        out.append("retries/commit %.3f" % (sum(r["retries"] for r in rs) / commits))
    if c.get("docc_retries"):
        out.append("lookups saved %d (seen before %d)" % (c["docc_retry_lookups_saved"], c["docc_retry_lookups_seen_before"]))
    if c.get("docc_waits"):
        out.append("wait/txn %.1f us (%.0f%% waited)" % (c["docc_wait_ns"] / 1e3 / max(commits, 1), 100 * c["docc_waits"] / max(commits, 1)))
    if c.get("ollp_restarts"):
        kinds = collections.Counter()
        for r in rs:
            kinds.update(r["kinds"])
        by = ", ".join("%s %.2f" % (k[len("restarts:"):], c[k] / max(kinds[k[len("restarts:"):]], 1)) for k in sorted(c) if k.startswith("restarts:"))
        out.append("OLLP restarts/commit by type: " + by)
        out.append("barriers %d" % c.get("barriers", 0))
    if c.get("lock_manager_busy_ns"):
        out.append("lock-manager utilization %.0f%%" % (100 * c["lock_manager_busy_ns"] / 1e9 / elapsed))
    return "; ".join(out)

def main():
    rows = load(sys.argv[1])
    for label, by_round in rows.items():
        rs = [by_round[k] for k in sorted(by_round)]
        tps = [r["tps"] for r in rs]
        over = " (oversubscribed)" if rs[0]["oversubscribed"] else ""
        print("%-28s %8.1fk [%.1fk-%.1fk]  p50 %8.0f us  p99 %8.0f us  %7.0f commits/CPU-s  n=%d%s" % (
            label, med(tps) / 1e3, min(tps) / 1e3, max(tps) / 1e3,
            med([r["p50_us"] for r in rs]), med([r["p99_us"] for r in rs]),
            med([per_cpu(r) for r in rs]), len(rs), over))
        s = stats(rs)
        if s:
            print("    " + s)
    for spec in sys.argv[2:]:
        num, den = spec.split("/")
        common = sorted(set(rows[num]) & set(rows[den]))
        rt = [rows[num][k]["tps"] / rows[den][k]["tps"] for k in common]
        rc = [per_cpu(rows[num][k]) / per_cpu(rows[den][k]) for k in common]
        lo, hi = boot(rt)
        clo, chi = boot(rc)
        print("%s / %s: throughput %.2f [%.2f, %.2f], per CPU-second %.2f [%.2f, %.2f] (rounds %s)" % (
            num, den, med(rt), lo, hi, med(rc), clo, chi, " ".join("%.2f" % x for x in rt)))

if __name__ == "__main__":
    main()
