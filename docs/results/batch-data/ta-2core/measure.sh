#!/bin/bash
# Runs under /work/bin/measure (nothing else running). Usage: NEW=bin BASE=bin measure.sh RECORDS ROUNDS OUTDIR
# Two release builds of txlab-cli, interleaved within each round (`compare --builds`).
R=${1:-100000}; N=${2:-9}; O=${3:-docs/results/batch-data/ta-2core/r$R}
$NEW compare --builds main=$BASE,new=$NEW --protocol silo,silo-ta --workload ycsb-f \
  --ops-per-txn 16 --payload 100 --theta 0.99 --threads 2 --ack commit --records $R \
  --rounds $N --duration 2s --warmup 300ms --out $O --overwrite | tee $O/output.txt
