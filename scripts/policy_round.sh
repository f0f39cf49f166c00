#!/bin/bash
# mc (prod-degree) against rdeg on batch-srvc, single-thread validator layout, micro workload,
# 12 interleaved rounds per theta: one line per run: theta round policy tps p90 p99 p999
#   scripts/policy_round.sh [path to txlab] > runs.txt
B=${1:-target/release/txlab}
for th in 0.8 0.9 0.99; do for i in $(seq 1 12); do for pol in mc rdeg; do
 d=$(mktemp -d); $B run --protocol batch-srvc --reorder-workers 0 --policy $pol --workload micro --theta $th --duration 1500ms --warmup 500ms --repeat 1 --out $d >/dev/null 2>&1
 python3 -c "
import csv
for r in csv.DictReader(open('$d/results.csv')): print('$th', '$i', '$pol', r['throughput_tps'], r['p90_us'], r['p99_us'], r['p999_us'])"
 rm -rf $d; done; done; done
