#!/usr/bin/env bash
# The benchmark of issue 4 / BENCHMARKS.md: a random-weight llama of ~1.1 B parameters
# (n_embd 2048, 16 layers, 32 heads, 8 KV heads, n_ff 8192, vocabulary 32000) as F16, Q8_0,
# Q4_0 and Q4_K_M, measured by `sinter bench` and by the oracle (llama.cpp through
# node-llama-cpp) on the same files and thread count, in alternation (A B A B) because the
# machine is shared. Prints a markdown table.
#
#   scripts/bench-models.sh [--rounds 2] [--threads 2] [--types "q4_0 q8_0 q4_k_m f16"]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=2 threads=2 types="q4_0 q8_0 q4_k_m f16"
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --types) types=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
sinter=${SINTER:-build/bin/sinter}
oracle=${ORACLE:-../shared/oracle/run}
dir=${BENCH_DIR:-/tmp/sinter-bench}
mkdir -p "$dir"

[[ -f $dir/f16.gguf ]] || "$sinter" synth llama "$dir/f16.gguf" --dims 1b --type f16 --seed 1
for t in $types; do
  [[ $t == f16 || -f $dir/$t.gguf ]] || "$sinter" quantize "$dir/f16.gguf" "$dir/$t.gguf" "$t" >/dev/null
done

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join(str(d[k]) for k in sys.argv[1:]))" "$@"; }
median() { python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.2f}')" "$@"; }

echo "| model | sinter pp512 | llama.cpp (oracle) pp512 | sinter tg128 | llama.cpp (oracle) tg128 | sinter tg128 @ d1024 | weights/token | implied bandwidth |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for t in $types; do
  model=$dir/$t.gguf
  s_pp=() s_tg=() o_pp=() o_tg=() s_depth=()
  for ((r = 0; r < rounds; ++r)); do
    read -r pp tg bytes < <("$sinter" bench -m "$model" -p 512 -n 128 -r 3 -t "$threads" -o json | json pp_tps tg_tps weight_bytes_per_token)
    s_pp+=("$pp") s_tg+=("$tg")
    read -r opp otg < <(ORACLE_THREADS=$threads "$oracle" bench "$model" 512 128 3)
    o_pp+=("$opp") o_tg+=("$otg")
    read -r dtg < <("$sinter" bench -m "$model" -p 0 -n 128 -d 1024 -r 3 -t "$threads" -o json | json tg_tps)
    s_depth+=("$dtg")
  done
  tg=$(median "${s_tg[@]}")
  gbs=$(python3 -c "print(f'{$bytes * $tg / 1e9:.1f}')")
  echo "| $t | $(median "${s_pp[@]}") | $(median "${o_pp[@]}") | $tg | $(median "${o_tg[@]}") | $(median "${s_depth[@]}") | $(python3 -c "print(f'{$bytes/1e6:.0f} MB')") | $gbs GB/s |"
done
