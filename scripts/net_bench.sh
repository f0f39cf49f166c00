#!/usr/bin/env bash
# The distribution layer's measurements (docs/results/net.md): every configuration once per
# round, rounds alternating forward and reverse order (ABBA), results as JSON lines.
#   scripts/net_bench.sh [rounds] [out.jsonl]
# Run it under /work/bin/measure; summarize with scripts/net_summary.py out.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
out=${2:-target/net_bench.jsonl}
cargo build --release -q -p txlab-net --features tcp,sim --example net_bench
bin=target/release/examples/net_bench
configs=(
  "throughput inproc 64 1 100000" "throughput inproc 1024 1 100000" "throughput inproc 16384 1 20000"
  "throughput inproc-encode 64 1 100000" "throughput inproc-encode 1024 1 100000" "throughput inproc-encode 16384 1 20000"
  "W throughput inproc 1024 1 100000" "W throughput inproc-encode 1024 1 100000"
  "throughput tcp 64 1 100000" "throughput tcp 1024 1 100000" "throughput tcp 16384 1 20000" "throughput tcp 64 0 50000"
  "throughput tcp2 64 1 100000" "throughput tcp2 1024 1 100000" "throughput tcp2 16384 1 20000" "throughput tcp2 64 0 50000" "throughput tcp2 1024 0 50000"
  "rtt inproc 64 2000" "rtt inproc 1024 2000" "rtt inproc 16384 2000" "rtt inproc-encode 1024 2000"
  "rtt tcp 64 2000" "rtt tcp 1024 2000" "rtt tcp 16384 2000"
  "rtt tcp2 64 2000" "rtt tcp2 1024 2000" "rtt tcp2 16384 2000"
  "rtt inproc-link100 64 2000"
  "step 200000" "sim window 20000" "sim pingpong 5000"
)
: > "$out"
for r in $(seq 1 "$rounds"); do
  if (( r % 2 )); then order=$(seq 0 $((${#configs[@]} - 1))); else order=$(seq $((${#configs[@]} - 1)) -1 0); fi
  for i in $order; do
    c=${configs[$i]}
    if [[ $c == W* ]]; then
      NET_BENCH_WORDS=1 timeout 120 "$bin" ${c#W } | sed "s/^{/{\"round\":$r,/" >> "$out"
    else
      timeout 120 "$bin" $c | sed "s/^{/{\"round\":$r,/" >> "$out"
    fi
  done
done
echo "wrote $out"
