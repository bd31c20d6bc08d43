#!/usr/bin/env bash
# Three-way agreement of next-token probabilities on one GGUF file: sinter, the oracle
# (node-llama-cpp's llama.cpp build, what the conformance tests compare against) and the native
# llama.cpp of ../shared/native-reference (its `refh logits`). Prints the mean and median KL and
# the largest |Δp| of each pair over the positions of one sequence, so that a disagreement can be
# placed: when the oracle and the native build agree and sinter is off, sinter is wrong; when
# sinter agrees with one llama.cpp build and the builds differ, the builds differ.
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
LD_LIBRARY_PATH=$(dirname "$refh")/build/bin "$refh" logits "$model" 2 "$ids" >"$work/native.txt" 2>/dev/null

python3 - "$work" <<'EOF'
import json, math, statistics, sys
work = sys.argv[1]

def from_logits(path, top=64):
    rows = []
    for line in open(path):
        logits = [float(x) for x in line.split()]
        peak = max(logits)
        weights = [math.exp(x - peak) for x in logits]
        total = sum(weights)
        order = sorted(range(len(weights)), key=lambda i: -weights[i])[:top]
        rows.append({i: weights[i] / total for i in order})
    return rows

def from_json(path):
    return [{int(t): p for t, p in row} for row in json.load(open(path))]

engines = {"sinter": from_json(f"{work}/sinter.json"), "oracle": from_json(f"{work}/oracle.json"),
           "native": from_logits(f"{work}/native.txt")}

def compare(reference, other):
    kls, dps = [], []
    for p, q in zip(reference, other):
        # KL(reference ‖ other) over the reference's listed tokens (the mass both list).
        kls.append(sum(pr * math.log(pr / max(q.get(t, 0.0), 1e-12)) for t, pr in p.items() if pr > 1e-9))
        dps.append(max(abs(pr - q.get(t, 0.0)) for t, pr in p.items()))
    return sum(kls) / len(kls), statistics.median(kls), max(dps)

print("| pair (reference ‖ other) | mean KL | median KL | max abs dp |")
print("|---|---:|---:|---:|")
for a, b in (("native", "sinter"), ("native", "oracle"), ("oracle", "sinter")):
    mean, median, dp = compare(engines[a], engines[b])
    print(f"| {a} ‖ {b} | {mean:.3g} | {median:.3g} | {dp:.3g} |")
EOF
