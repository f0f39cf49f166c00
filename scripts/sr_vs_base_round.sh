#!/bin/bash
# base vs sr interleaved on the micro workload, 12 rounds per theta: one line per run: theta round mode tps p90 p99
#   scripts/sr_vs_base_round.sh [path to txlab] > runs.txt
B=${1:-target/release/txlab}
for th in 0.5 0.7 0.8 0.9 0.99; do for i in $(seq 1 12); do for p in batch-base batch-sr; do
 d=$(mktemp -d); $B run --protocol $p --workload micro --theta $th --duration 1500ms --warmup 500ms --repeat 1 --out $d >/dev/null 2>&1
 python3 -c "
import csv
for r in csv.DictReader(open('$d/results.csv')): print('$th', '$i', '$p', r['throughput_tps'], r['p90_us'], r['p99_us'])"
 rm -rf $d; done; done; done
