#!/usr/bin/env bash
# Interleaved rounds: for each round, each binary (old = main's, new = this branch's), each
# warm-up: one `txlab cluster --local 3` launch of rococo on scaled TPC-C; prints txn/s and
# new-orders/s of the measured second, and the launch's wall time.
set -u
OLD=$1; NEW=$2; ROUNDS=${3:-3}; WARMUPS=${4:-"300ms 1s"}
ARGS=(run --protocol rococo --workload tpcc --tpcc-scaled --districts 20 --district-customers 1000 --clients-per-server 5 --duration 1s --repeat 1)
echo "round binary warmup txn_per_s new_orders_per_s commits wall_s"
for r in $(seq 1 "$ROUNDS"); do
  for b in old new; do
    exe=$OLD; [ "$b" = new ] && exe=$NEW
    for w in $WARMUPS; do
      t0=$(date +%s.%N)
      line=$("$exe" cluster --local 3 --timeout-s 120 -- "${ARGS[@]}" --warmup "$w" 2>/tmp/tcpwarm-last-stderr | tail -1)
      t1=$(date +%s.%N)
      vals=$(printf '%s' "$line" | python3 -c '
import sys, json
try:
    d = json.loads(sys.stdin.read()); r = d["nodes"][-1]["record"]["result"]
    print(round(r["throughput_tps"]), round(r["commits_by_kind"].get("new_order", 0) / r["elapsed_s"]), r["commits"])
except Exception as e:
    print("ERR", "ERR", repr(e)[:60])')
      echo "$r $b $w $vals $(python3 -c "print(round($t1 - $t0, 1))")"
    done
  done
done
