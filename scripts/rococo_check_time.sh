#!/usr/bin/env bash
# Running time of ROCOCO's offline checker on scaled TPC-C, as `txlab rococo-check` reports it on
# stderr (profiles built and analysed; process start-up excluded): 30 runs each of the read-write
# types and of all types, min / median / max in microseconds.
# Usage: /work/bin/measure scripts/rococo_check_time.sh [path/to/txlab]   (a release build)
set -euo pipefail
txlab=${1:-./target/release/txlab}
for variant in "--tpcc-scaled" "--tpcc-scaled --include-read-only"; do
    for _ in $(seq 30); do
        # Exit 1 (unreorderable) is expected with --include-read-only.
        { "$txlab" rococo-check --workload tpcc $variant --json 2>&1 >/dev/null || true; } |
            sed -n 's/analysed in \([0-9]*\) us/\1/p'
    done | sort -n | awk -v v="$variant" \
        '{a[NR] = $1} END {print v ": min " a[1] " median " a[int((NR + 1) / 2)] " max " a[NR] " us (n=" NR ")"}'
done
