#!/usr/bin/env bash
# Interleaved rounds over loopback tcp: `tcp-rounds.sh OUT NODES ROUNDS <txlab run flags without
# --protocol>` runs `txlab cluster --local NODES -- run --protocol P <flags>` for P = rococo,
# 2pl-2pc, occ-2pc in turn, ROUNDS times (ABCABC), one JSON file per run: OUT/rR-P.json.
# TXLAB names the binary (default: txlab on PATH).
set -euo pipefail
out=$1 nodes=$2 rounds=$3
shift 3
mkdir -p "$out"
for r in $(seq 0 $((rounds - 1))); do
  for p in rococo 2pl-2pc occ-2pc; do
    "${TXLAB:-txlab}" cluster --local "$nodes" --timeout-s 120 -- \
      run --protocol "$p" "$@" >"$out/r$r-$p.json"
  done
done
