// splitmix64 and xoshiro256**, exactly as written in random.h (and docs/SAMPLING.md).
#include "sample/random.h"

#include <chrono>
#include <exception>
#include <random>

namespace sinter {
namespace {

constexpr uint64_t rotate_left(uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

}  // namespace

uint64_t SplitMix64::next() {
  state_ += 0x9E3779B97F4A7C15ull;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t choice_seed(uint64_t seed, int32_t choice) {
  SplitMix64 stream(seed);
  uint64_t value = seed;
  for (int32_t i = 0; i < choice; ++i) value = stream.next();
  return value;
}

Xoshiro256StarStar::Xoshiro256StarStar(uint64_t seed) {
  SplitMix64 expand(seed);
  for (uint64_t& word : state_) word = expand.next();
}

Xoshiro256StarStar Xoshiro256StarStar::from_state(const std::array<uint64_t, 4>& state) {
  Xoshiro256StarStar generator;
  generator.state_ = state;
  return generator;
}

uint64_t Xoshiro256StarStar::next() {
  uint64_t* s = state_.data();
  const uint64_t result = rotate_left(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotate_left(s[3], 45);
  return result;
}

double Xoshiro256StarStar::next_double() {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;  // 2^-53
  return static_cast<double>(next() >> 11) * kTwoToMinus53;
}

uint64_t random_seed() {
  try {
    std::random_device device;
    const uint64_t high = device();
    const uint64_t low = device();
    return (high << 32) ^ low;
  } catch (const std::exception&) {
    // No random device on this platform: the clock and a stack address are the best left.
    int marker = 0;
    const auto ticks = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    SplitMix64 mix(ticks ^ reinterpret_cast<uintptr_t>(&marker));
    return mix.next();
  }
}

}  // namespace sinter
