#!/usr/bin/env python3
"""Interleaved rounds of txlab runs for docs/results/docc.md.

    python3 scripts/docc_rounds.py ROUNDS OUT.jsonl 'LABEL: txlab run flags' ['LABEL: flags' ...]

Each round runs every configuration once, in the order given (ABAB, not AABB), so slow phases of
a noisy host hit every configuration of a round alike. Every run appends one JSON line to
OUT.jsonl: the label, the round, throughput, latency percentiles (microseconds), CPU time,
commits by kind and the engine counters. Binary: $BIN (default ./target/release/txlab).
Summarize with scripts/docc_summary.py.
"""
import json, os, shlex, subprocess, sys, tempfile

def run(binary, flags):
    with tempfile.TemporaryDirectory() as d:
        cmd = [binary, "run", *flags, "--repeat", "1", "--out", d]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(d, "results.json")) as f:
            return json.load(f)["runs"][0]

def main():
    rounds, out = int(sys.argv[1]), sys.argv[2]
    configs = []
    for c in sys.argv[3:]:
        label, flags = c.split(":", 1)
        configs.append((label.strip(), shlex.split(flags)))
    binary = os.environ.get("BIN", "./target/release/txlab")
    with open(out, "a") as f:
        for r in range(1, rounds + 1):
            for label, flags in configs:
                p = run(binary, flags)
                res = p["result"]
                row = {
                    "label": label,
                    "round": r,
                    "flags": " ".join(flags),
                    "protocol": p["protocol"],
                    "threads": p["threads"],
                    "tps": res["throughput_tps"],
                    "commits": res["commits"],
                    "retries": res["retries"],
                    "elapsed_s": res["elapsed_s"],
                    "cpu_time_s": res["cpu_time_s"],
                    "p50_us": res["latency"]["p50_us"],
                    "p99_us": res["latency"]["p99_us"],
                    "oversubscribed": res["oversubscribed"],
                    "counters": res["counters"],
                    "kinds": res["commits_by_kind"],
                }
                f.write(json.dumps(row) + "\n")
                f.flush()
                print(f"round {r} {label}: {res['throughput_tps']:.0f}/s", file=sys.stderr)

if __name__ == "__main__":
    main()
