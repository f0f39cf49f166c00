#!/bin/bash
# The 100K run of batch.md's 2-thread bar, run under /work/bin/measure with nothing else running.
# Usage: BASE=bin SAMPLE=bin NEW=bin measure.sh [OUTDIR]
# BASE: release build of 4bf3a30; NEW: the assigner's one-word path; SAMPLE: a harness build
# with meter latency sampling (not part of this code; its rows are not used in batch.md).
O=${1:-docs/results/batch-data/ta-2core/r100000}
$BASE compare --builds main=$BASE,sample=$SAMPLE,assign=$NEW --protocol silo,silo-ta \
  --workload ycsb-f --ops-per-txn 16 --payload 100 --theta 0.99 --threads 2 --ack commit \
  --records 100000 --rounds 7 --duration 2s --warmup 300ms --out $O --overwrite | tee $O/output.txt
