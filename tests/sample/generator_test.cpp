// The generator behind every draw: published reference vectors pin the algorithms, and golden
// values for sinter's seeding (printed by reference_sampler.py, an independent transcription)
// pin what a seed means on every machine.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "sample/random.h"

namespace sinter {
namespace {

TEST(SplitMix64, MatchesPublishedOutputForSeed1234567) {
  SplitMix64 generator(1234567);
  const std::array<uint64_t, 5> expected = {6457827717110365317ull, 3203168211198807973ull,
                                            9817491932198370423ull, 4593380528125082431ull,
                                            16408922859458223821ull};
  for (uint64_t value : expected) EXPECT_EQ(generator.next(), value);
}

TEST(Xoshiro256StarStar, MatchesReferenceImplementationFromState1234) {
  // The outputs of Blackman and Vigna's xoshiro256starstar.c with s = {1, 2, 3, 4}.
  auto generator = Xoshiro256StarStar::from_state({1, 2, 3, 4});
  const std::array<uint64_t, 10> expected = {11520ull,
                                             0ull,
                                             1509978240ull,
                                             1215971899390074240ull,
                                             1216172134540287360ull,
                                             607988272756665600ull,
                                             16172922978634559625ull,
                                             8476171486693032832ull,
                                             10595114339597558777ull,
                                             2904607092377533576ull};
  for (uint64_t value : expected) EXPECT_EQ(generator.next(), value);
}

// The golden values of docs/SAMPLING.md: if these change, every seeded run changes.
TEST(Xoshiro256StarStar, SeedExpansionGoldenValues) {
  Xoshiro256StarStar seed0(0);
  EXPECT_EQ(seed0.state()[0], 0xe220a8397b1dcdafull);
  EXPECT_EQ(seed0.state()[1], 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(seed0.state()[2], 0x06c45d188009454full);
  EXPECT_EQ(seed0.state()[3], 0xf88bb8a8724c81ecull);
  const std::array<uint64_t, 6> seed0_outputs = {11091344671253066420ull, 13793997310169335082ull,
                                                 1900383378846508768ull,  7684712102626143532ull,
                                                 13521403990117723737ull, 18442103541295991498ull};
  for (uint64_t value : seed0_outputs) EXPECT_EQ(seed0.next(), value);

  Xoshiro256StarStar seed42(42);
  const std::array<uint64_t, 6> seed42_outputs = {1546998764402558742ull,  6990951692964543102ull,
                                                  12544586762248559009ull, 17057574109182124193ull,
                                                  18295552978065317476ull, 14199186830065750584ull};
  for (uint64_t value : seed42_outputs) EXPECT_EQ(seed42.next(), value);

  Xoshiro256StarStar seed_max(UINT64_MAX);
  const std::array<uint64_t, 3> seed_max_outputs = {10328197420357168392ull, 14156678507024973869ull,
                                                    9357971779955476126ull};
  for (uint64_t value : seed_max_outputs) EXPECT_EQ(seed_max.next(), value);
}

TEST(Xoshiro256StarStar, UniformDoublesAreTheTop53Bits) {
  Xoshiro256StarStar generator(42);
  // Exact: (output >> 11) * 2^-53 is representable.
  EXPECT_EQ(generator.next_double(), 0.08386297105988216);
  EXPECT_EQ(generator.next_double(), 0.3789802506626686);
  EXPECT_EQ(generator.next_double(), 0.6800434110281394);
  EXPECT_EQ(generator.next_double(), 0.9246929453253876);

  Xoshiro256StarStar again(42);
  EXPECT_EQ(again.next_double(), static_cast<double>(1546998764402558742ull >> 11) / 9007199254740992.0);
}

TEST(Xoshiro256StarStar, DoublesStayInUnitIntervalAndFillIt) {
  Xoshiro256StarStar generator(7);
  double smallest = 1.0;
  double largest = 0.0;
  double sum = 0.0;
  constexpr int kCount = 100000;
  for (int i = 0; i < kCount; ++i) {
    const double u = generator.next_double();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    smallest = std::min(smallest, u);
    largest = std::max(largest, u);
    sum += u;
  }
  EXPECT_LT(smallest, 1e-3);
  EXPECT_GT(largest, 1.0 - 1e-3);
  EXPECT_NEAR(sum / kCount, 0.5, 0.005);  // sd of the mean: 0.29 / sqrt(1e5) = 0.0009
}

TEST(RandomSeed, TwoDrawsDiffer) {
  // 64 bits from the random device: equal twice in a row with probability 2^-64.
  EXPECT_NE(random_seed(), random_seed());
}

}  // namespace
}  // namespace sinter
