#!/bin/bash
# Runs under /work/bin/measure. Usage: measure.sh ROUNDS DURATION WARMUP OUTDIR
N=${1:-5}; D=${2:-2s}; W=${3:-300ms}; O=${4:-docs/results/batch-data/ta-2core}
# NEW: this build (b022b24), MAIN: ddec2ed, both release builds of txlab-cli copied to /tmp.
NEW=/tmp/b31/txlab-new; BASE=/tmp/b31/txlab-base
for r in 100000 10000000; do
  echo "== records=$r $(date -u)"
  timeout $([ $r = 100000 ] && echo 140 || echo 220) $NEW compare --builds new=$NEW,main=$BASE --protocol silo,silo-ta --workload ycsb-f \
    --ops-per-txn 16 --payload 100 --theta 0.99 --threads 2 --ack commit --records $r \
    --rounds $N --duration $D --warmup $W --out $O/r$r --overwrite
done
date -u
