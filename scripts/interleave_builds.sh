#!/bin/bash
# Interleaved runs of several (binary, protocol) pairs, for ratios on a noisy machine.
#
#   scripts/interleave_builds.sh ROUNDS THREADS WORKLOAD "label=binary=protocol ..." [txlab run flags] > runs.txt
#   python3 scripts/pair_summary.py runs.txt b/a ...
#
# Each round runs every pair once (`txlab run --repeat 1`), one after the other, so a slow phase of
# the host hits a whole round. Prints one line per run: round, label, throughput, abort rate.
# Used to compare builds (e.g. default against `--features line-aligned-records`) in one run.
set -euo pipefail
R=$1; T=$2; W=$3; C=$4; shift 4
for i in $(seq 1 $R); do for c in $C; do
 IFS== read l b p <<< "$c"
 d=$(mktemp -d); $b run --protocol $p --workload $W --threads $T "$@" --repeat 1 --out $d >/dev/null 2>&1
 python3 -c "
import csv
for r in csv.DictReader(open('$d/results.csv')): print('$i', '$l', r['throughput_tps'], r['abort_rate'])"
 rm -rf $d; done; done
