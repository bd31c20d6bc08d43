#!/usr/bin/env python3
"""An independent transcription of the algorithms in docs/SAMPLING.md, in plain Python.

It produced the golden values in generator_test.cpp and draw_golden_test.cpp; run it to print
them again. It shares no code with src/sample: agreement between the two pins the documented
algorithm, and the published reference vectors (xoshiro256** from state {1,2,3,4}, splitmix64
from seed 1234567) pin this transcription.
"""
import math
import struct

MASK = (1 << 64) - 1


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def splitmix64(seed):
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Xoshiro:
    def __init__(self, seed=None, state=None):
        if state is None:
            g = splitmix64(seed)
            state = [next(g) for _ in range(4)]
        self.s = list(state)

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def next_double(self):
        return (self.next() >> 11) * 2.0**-53


def probabilities(logits):
    """compute_probabilities: p_i = float(double(float(e_i)) / sum e_i), e_i = exp(l_i - max)."""
    m = max(logits)
    e = [math.exp(l - m) for l in logits]
    total = sum(e)
    return [f32(f32(x) / total) for x in e]


def draw(ids, p, u):
    total = sum(p)
    target = u * total
    cumulative = 0.0
    last = ids[0]
    for i, pi in zip(ids, p):
        if pi <= 0:
            continue
        cumulative += pi
        last = i
        if cumulative > target:
            return i
    return last


def default_chain(logits, temperature, top_p, min_p, rng):
    """Default order with top_k >= vocabulary (a no-op that sorts nothing), typical 1, no
    penalties, no bias. Sums run in the order the candidates have at that point."""
    p_by_id = probabilities(logits)  # top_p: softmax over the set, still in id order
    ids = sorted(range(len(logits)), key=lambda i: (-logits[i], i))  # then sorts
    cumulative = 0.0
    for n in range(len(ids)):
        cumulative += p_by_id[ids[n]]
        if cumulative >= f32(top_p):
            ids = ids[: n + 1]
            break
    lg = [logits[i] for i in ids]
    threshold = f32(max(lg) + f32(math.log(f32(min_p))))  # min_p, in float, keeps the order
    kept = [(i, l) for i, l in zip(ids, lg) if l >= threshold]
    ids = [i for i, _ in kept]
    lg = [f32(l / f32(temperature)) for _, l in kept]  # temperature
    return draw(ids, probabilities(lg), rng.next_double())


if __name__ == "__main__":
    ref = Xoshiro(state=[1, 2, 3, 4])
    print("xoshiro {1,2,3,4}:", [ref.next() for _ in range(10)])
    print("splitmix64(1234567):", [x for x, _ in zip(splitmix64(1234567), range(5))])
    for seed in (0, 42, 0xFFFFFFFFFFFFFFFF):
        g = Xoshiro(seed)
        print(f"seed {seed}: state", [hex(w) for w in g.s])
        print("  next:", [g.next() for _ in range(6)])
        g = Xoshiro(seed)
        print("  doubles:", [repr(g.next_double()) for _ in range(4)])

    logits = [1.0, 2.5, -0.5, 0.25, 3.0, 2.5, -2.0, 0.75]
    g = Xoshiro(1234)
    ids = list(range(len(logits)))
    print("plain draw, seed 1234:", [draw(ids, probabilities(logits), g.next_double()) for _ in range(24)])
    g = Xoshiro(20240601)
    print("default chain, seed 20240601:", [default_chain(logits, 0.8, 0.95, 0.05, g) for _ in range(24)])
