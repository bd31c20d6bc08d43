// The seeded generator behind every random draw of the sampler: xoshiro256** seeded by splitmix64.
//
// The algorithm is fixed and documented here and in docs/SAMPLING.md so that a seed means the
// same stream of numbers on every run, machine, compiler and thread count:
//
//   splitmix64 (Steele, Lea, Flood 2014), state s (64 bits), one output:
//     s += 0x9E3779B97F4A7C15;  z = s;
//     z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//     z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//     return z ^ (z >> 31);
//
//   xoshiro256** (Blackman, Vigna 2018), state s[4], one output:
//     result = rotl(s[1] * 5, 7) * 9;
//     t = s[1] << 17;
//     s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
//     s[2] ^= t;    s[3] = rotl(s[3], 45);
//     return result;
//
//   seeding: splitmix64 starts at the 64-bit seed; its first four outputs are s[0..3].
//   uniform double in [0, 1): (next() >> 11) * 2^-53, the top 53 bits.
//
// All arithmetic is on uint64_t, wrapping modulo 2^64; nothing depends on the platform.
// splitmix64 never yields four zero words in a row, so the xoshiro state is never all zero.
#pragma once

#include <array>
#include <cstdint>

namespace sinter {

// splitmix64: a 64-bit counter passed through a mixing function. Used only to expand a seed.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();

 private:
  uint64_t state_;
};

// xoshiro256**: period 2^256 - 1, passes BigCrush; 32 bytes of state, a few cycles a number.
class Xoshiro256StarStar {
 public:
  // The state is s[0..3] = the first four splitmix64 outputs for `seed`.
  explicit Xoshiro256StarStar(uint64_t seed);
  // A raw state, for checking against the reference implementation; must not be all zero.
  static Xoshiro256StarStar from_state(const std::array<uint64_t, 4>& state);

  uint64_t next();
  // Uniform in [0, 1) with 53 random bits: (next() >> 11) * 2^-53.
  double next_double();

  const std::array<uint64_t, 4>& state() const { return state_; }

 private:
  Xoshiro256StarStar() = default;
  std::array<uint64_t, 4> state_{};
};

// The seed of choice `choice` of a request that asks for several completions of one prompt
// (OpenAI's `n`), each with its own seed stream:
//   choice_seed(seed, 0) = seed  (so choice 0 is exactly a single request with that seed);
//   choice_seed(seed, i) = the i-th output (1-based) of splitmix64 started at `seed`, for i >= 1.
// Each choice then seeds its own xoshiro256** with its seed; a choice can be reproduced alone by
// a single request with choice_seed(seed, i).
uint64_t choice_seed(uint64_t seed, int32_t choice);

// A seed for callers that asked for a random one: 64 bits from std::random_device, or, where the
// platform has no random device, the clock and an address mixed through splitmix64.
uint64_t random_seed();

}  // namespace sinter
