#!/bin/bash
# Both builds, each its own interleaved silo,silo-ta run per table size.
O=/work/wt/batchta/docs/results/batch-data/ta-2core
N=${1:-5}
for r in 100000 10000000; do
  for b in main-d6e2d76:/tmp/batchta-main-txlab new:/tmp/batchta-new-txlab; do
    L=${b%%:*}; B=${b#*:}
    echo "== $L records=$r $(date -u)"
    timeout 200 $B run --protocol silo,silo-ta --workload ycsb-f --ops-per-txn 16 --payload 100 --theta 0.99 --threads 2 --ack commit --records $r --repeat $N --duration 1s --warmup 300ms --out $O/$L-$r --overwrite
  done
done
date -u
