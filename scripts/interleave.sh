#!/bin/bash
# Interleaved A/B runs for overhead ratios on a noisy machine (docs/results/nwr.md).
#
#   scripts/interleave.sh ROUNDS THREADS WORKLOAD [txlab run flags...] > runs.txt
#   python3 scripts/ratio_summary.py runs.txt
#
# Each round runs every protocol of $PROTOS once (`txlab run --repeat 1`), one after the other,
# so slow phases of the host hit all protocols of a round alike; the summary prints each
# protocol's median and, for every NWR variant, the ratio of medians and the median of the
# per-round ratios against its baseline. Binary: $BIN (default ./target/release/txlab).
set -euo pipefail
B=${BIN:-./target/release/txlab}
R=$1; T=$2; W=$3; shift 3
PROTOS=${PROTOS:-silo silo-nwr tictoc tictoc-nwr mvto mvto-nwr}
here=$(dirname "$0")
for i in $(seq 1 "$R"); do
  for p in $PROTOS; do
    d=$(mktemp -d)
    "$B" run --protocol "$p" --workload "$W" --threads "$T" "$@" --repeat 1 --out "$d" >/dev/null
    python3 "$here/ratio_row.py" "$d" "$i"
    rm -rf "$d"
  done
done
