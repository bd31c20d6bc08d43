#!/usr/bin/env bash
# The embeddings benchmark of issue 28 / BENCHMARKS.md: embeddings per second over 1000 inputs of
# mixed length (4-300 words, log-uniform; about 70 words on average), for random-weight models of
# real embedding shapes with BERT's WordPiece vocabulary, sinter against a native llama.cpp
# (libllama from ../shared/native-reference, driven by bench/embed_reference.cpp) on the same
# files and threads, in alternation (A B A B). Each engine twice: inputs packed many per forward
# pass (batched), and one input per pass, to show what batching gains. Model loading is not timed.
#
#   scripts/bench-embed.sh [--rounds 2] [--threads 2] [--type f32] [--models "bert:bge-small nomic-bert:nomic-embed"]
#
# --models takes ARCH:PRESET pairs (`sinter synth ARCH --dims PRESET`). Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=2 threads=2 type=f32 models="bert:bge-small nomic-bert:nomic-embed"
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --type) type=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
sinter=${SINTER:-build/bin/sinter}
dir=${BENCH_DIR:-/tmp/sinter-bench-embed}
mkdir -p "$dir"

# The native harness, linked against the libllama that ../shared/native-reference/build makes.
refh=$(../shared/native-reference/build)
native_home=$(dirname "$refh")
native_src=../shared/native-reference/llama.cpp
harness=$native_home/embed_reference
if [[ ! -x $harness || bench/embed_reference.cpp -nt $harness ]]; then
  g++ -O2 -std=c++17 bench/embed_reference.cpp -I "$native_src/include" -I "$native_src/ggml/include" \
    -L "$native_home/build/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$native_home/build/bin" -o "$harness.tmp"
  mv "$harness.tmp" "$harness"
fi

[[ -f $dir/tokenizer/tokenizer.json ]] || node tests/references/make_bert_tokenizer.mjs "$dir/tokenizer" >/dev/null
inputs=$dir/inputs.txt
python3 - "$inputs" <<'EOF'
import random, sys
words = ("the of and to in is that for it as was with be by on not he this are or his from at which but have an "
         "they you were her she there been one all we their has would when if so more no out up said what its about "
         "into than them can only other time new some could these two may first then do any like my now over such our "
         "man me even most made after also did many before must through back years where much your way well down "
         "should because each just those people how too little state good very make world still own see men work "
         "long get here between both life being under never day same another know while last might us great old year "
         "off come since against go came right used take three").split()
r = random.Random(7)
with open(sys.argv[1], "w") as f:
    for _ in range(1000):
        n = int(round(4 * 75 ** r.random()))
        f.write(" ".join(r.choice(words) for _ in range(n)).capitalize() + ".\n")
EOF

median() { python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.1f}')" "$@"; }
sinter_rate() {  # MODEL PER_PASS -> inputs/s
  "$sinter" embed -m "$1" -f "$inputs" -t "$threads" --inputs-per-pass "$2" --output jsonl -v 2>&1 >/dev/null |
    sed -n 's/.* \([0-9.]*\) inputs\/s.*/\1/p'
}
native_rate() {  # MODEL MAX_SEQS -> inputs/s
  "$harness" "$1" "$threads" "$inputs" "$2" 2>/dev/null | awk '{printf "%.1f\n", $1 / $3}'
}

echo "| model | sinter batched | llama.cpp batched | sinter one at a time | llama.cpp one at a time | batching gain (sinter) |"
echo "|---|---:|---:|---:|---:|---:|"
for pair in $models; do
  arch=${pair%%:*} preset=${pair#*:}
  model=$dir/$arch-$preset-$type.gguf
  [[ -f $model ]] || "$sinter" synth "$arch" "$model" --dims "$preset" --type "$type" --seed 1 \
    --tokenizer "$dir/tokenizer/tokenizer.json" --tokenizer-config "$dir/tokenizer/tokenizer_config.json" >/dev/null
  sb=() nb=() s1=() n1=()
  for ((r = 0; r < rounds; ++r)); do
    sb+=("$(sinter_rate "$model" 0)")
    nb+=("$(native_rate "$model" 64)")
    s1+=("$(sinter_rate "$model" 1)")
    n1+=("$(native_rate "$model" 1)")
  done
  echo "| $arch $preset $type | ${sb[*]} | ${nb[*]} | ${s1[*]} | ${n1[*]} | $(python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}x')" "$(median "${sb[@]}")" "$(median "${s1[@]}")") |"
done
