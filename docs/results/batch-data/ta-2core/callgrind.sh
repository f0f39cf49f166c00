#!/bin/bash
# usage: cg.sh BIN PROTO THREADS RECORDS TAG
B=$1; P=$2; T=$3; R=$4; TAG=$5
OUT=/tmp/b31/cg-$TAG-$P-$T-$R
rm -rf $OUT.d; mkdir -p $OUT.d
valgrind --tool=callgrind --callgrind-out-file=$OUT.out \
  $B run --protocol $P --workload ycsb-f --ops-per-txn 16 --payload 100 --theta 0.99 \
  --threads $T --ack commit --records $R --duration 2s --warmup 0ms --cooldown 0ms --out $OUT.d --overwrite > $OUT.log 2>&1
grep -E "^(silo|protocol)" $OUT.log
