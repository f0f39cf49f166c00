#!/usr/bin/env python3
"""Per-protocol table (markdown) of interleaved rounds, from `txlab run` results.json files or
from the per-launch lines `txlab cluster` prints, one per file (`rR-PROTOCOL.json`).

Throughput, new-orders/s (TPC-C) and the ratio rococo / protocol (within each round): median
over the rounds with a 95 % percentile bootstrap interval of the median (10,000 resamples,
seed 1). Latencies are the rounds' medians; commit rate is commits / attempts, i.e.
1 - abort_rate; the p99 ratio is the median of the rounds' ratios; read-only retries per
read-only commit (OrderStatus, StockLevel) are the
rounds' medians. Usage: summarize.py FILE..."""
import json, random, statistics, sys
from collections import defaultdict

def records(paths):
    for path in paths:
        d = json.load(open(path))
        if "runs" in d:
            yield from d["runs"]
        else:
            client = next(n for n in d["nodes"] if n["role"] == "client")
            # Every cluster runs one point (repeat 0); the round is the file's rR prefix.
            rnd = int(path.rsplit("/", 1)[-1].split("-", 1)[0][1:])
            yield dict(client["record"], repeat=rnd)

def ci(xs, rng):
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(10000))
    return meds[249], meds[9749]

def fmt(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.2f}"

def main(paths):
    rows = defaultdict(dict)  # protocol -> round -> record
    for rec in records(paths):
        rows[rec["protocol"]][rec["repeat"]] = rec
    rng = random.Random(1)
    base = rows.get("rococo", {})
    tpcc = any("new_order" in r["result"].get("commits_by_kind", {})
               for rs in rows.values() for r in rs.values())
    head = "| protocol | rounds | txn/s (median [95% CI])"
    head += " | new-orders/s (median [95% CI]) | rococo / protocol, new-orders/s" if tpcc else \
        " | rococo / protocol, txn/s"
    head += " | p50 ms | p90 ms | p99 ms | rococo / protocol, p99 | commit rate |"
    if tpcc:
        head += " RO retries per RO commit |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for proto in ["rococo", "2pl-2pc", "occ-2pc"]:
        rs = rows.get(proto)
        if not rs:
            continue
        keys = sorted(rs)
        res = [rs[k]["result"] for k in keys]
        tps = [r["throughput_tps"] for r in res]
        no = [r.get("commits_by_kind", {}).get("new_order", 0) / r["elapsed_s"] for r in res]
        metric = no if tpcc else tps
        ratios = []
        for k, m in zip(keys, metric):
            b = base.get(k)
            if b is not None and m > 0:
                br = b["result"]
                bm = br.get("commits_by_kind", {}).get("new_order", 0) / br["elapsed_s"] \
                    if tpcc else br["throughput_tps"]
                ratios.append(bm / m)
        def med_ci(xs):
            lo, hi = ci(xs, rng)
            return f"{fmt(statistics.median(xs))} [{fmt(lo)}, {fmt(hi)}]"
        line = f"| {proto} | {len(res)} | {med_ci(tps)}"
        if tpcc:
            line += f" | {med_ci(no)}"
        line += " | 1" if proto == "rococo" else f" | {med_ci(ratios)}" if ratios else " | -"
        lat = lambda q: statistics.median(r["latency"][q] for r in res) / 1000
        commit = statistics.median(1 - r["abort_rate"] for r in res)
        p99 = [base[k]["result"]["latency"]["p99_us"] / rs[k]["result"]["latency"]["p99_us"]
               for k in keys if k in base]
        p99r = "1" if proto == "rococo" else f"{statistics.median(p99):.2f}"
        line += f" | {lat('p50_us'):.2f} | {lat('p90_us'):.2f} | {lat('p99_us'):.2f} | {p99r}"
        line += f" | {commit:.3f} |"
        if tpcc:
            ro = statistics.median(
                r["counters"].get("ro_retries", 0)
                / max(1, r["commits_by_kind"].get("order_status", 0)
                      + r["commits_by_kind"].get("stock_level", 0))
                for r in res)
            line += f" {ro:.1f} |"
        print(line)

if __name__ == "__main__":
    main(sys.argv[1:])
