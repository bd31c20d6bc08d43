#!/usr/bin/env bash
# Agreement of next-token probabilities on one GGUF file between sinter, the oracle
# (node-llama-cpp's llama.cpp build, what the conformance tests compare against), the oracle with
# flash attention on (tests/references/oracle_probs_flash.mjs; node-llama-cpp turns it off for
# models whose key and value heads differ in size) and the native llama.cpp of
# ../shared/native-reference (its `refh logits`, flash attention resolved by llama.cpp's default).
# Prints the mean and median KL (over the whole vocabulary) and the largest |Δp| of each pair over
# the positions of one sequence, so that a disagreement can be placed: when the llama.cpp runs
# agree and sinter is off, sinter is wrong; when sinter agrees with one and they differ, they do.
#
#   scripts/compare-engines.sh MODEL [POSITIONS=84] [SEED=5]
#
# The sequence is POSITIONS token ids drawn (seeded) below min(vocabulary, 1024). Not run by CI:
# the native build takes long to make. docs/NUMERICS.md cites what it found.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:?usage: scripts/compare-engines.sh MODEL [POSITIONS] [SEED]}
positions=${2:-84}
seed=${3:-5}
sinter=${SINTER:-build/bin/sinter}
refh=$(../shared/native-reference/build)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

vocab=$("$sinter" inspect "$model" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p' | head -1)
ids=$(python3 -c "import random, sys; r = random.Random(int(sys.argv[1])); n = min(int(sys.argv[2]), 1024); \
print(','.join(str(r.randrange(n)) for _ in range(int(sys.argv[3]))))" "$seed" "${vocab:-1024}" "$positions")

"$sinter" probs "$model" "$ids" >"$work/sinter.json"
../shared/oracle/run probs "$model" "$ids" >"$work/oracle.json"
node tests/references/oracle_probs_flash.mjs "$model" "$ids" >"$work/oracle-flash.json"
LD_LIBRARY_PATH=$(dirname "$refh")/build/bin "$refh" logits "$model" 2 "$ids" >"$work/native.txt" 2>/dev/null

python3 - "$work" <<'EOF'
import json, math, statistics, sys
work = sys.argv[1]

def from_logits(path):
    rows = []
    for line in open(path):
        logits = [float(x) for x in line.split()]
        peak = max(logits)
        weights = [math.exp(x - peak) for x in logits]
        total = sum(weights)
        rows.append({i: w / total for i, w in enumerate(weights)})
    return rows

def from_json(path):
    return [{int(t): p for t, p in row} for row in json.load(open(path))]

engines = {"sinter": from_json(f"{work}/sinter.json"), "oracle": from_json(f"{work}/oracle.json"),
           "oracle-flash": from_json(f"{work}/oracle-flash.json"), "native": from_logits(f"{work}/native.txt")}

def compare(reference, other):
    kls, dps = [], []
    for p, q in zip(reference, other):
        # KL(reference ‖ other) over the reference's tokens (every token: all list them).
        kls.append(sum(pr * math.log(pr / max(q.get(t, 0.0), 1e-12)) for t, pr in p.items() if pr > 1e-9))
        dps.append(max(abs(pr - q.get(t, 0.0)) for t, pr in p.items()))
    return sum(kls) / len(kls), statistics.median(kls), max(dps)

print("| pair (reference ‖ other) | mean KL | median KL | max abs dp |")
print("|---|---:|---:|---:|")
for a, b in (("native", "sinter"), ("native", "oracle"), ("native", "oracle-flash"),
             ("oracle-flash", "sinter"), ("oracle", "sinter")):
    mean, median, dp = compare(engines[a], engines[b])
    print(f"| {a} ‖ {b} | {mean:.3g} | {median:.3g} | {dp:.3g} |")
EOF
