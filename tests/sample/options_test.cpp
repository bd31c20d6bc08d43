// SamplerOptions: the defaults, validation errors and stage names.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sample/sampler_options.h"

namespace sinter {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(SamplerOptions, DefaultsAreLlamaCpps) {
  const SamplerOptions options;
  EXPECT_EQ(options.temperature, 0.8f);
  EXPECT_EQ(options.top_k, 40);
  EXPECT_EQ(options.top_p, 0.95f);
  EXPECT_EQ(options.min_p, 0.05f);
  EXPECT_EQ(options.typical_p, 1.0f);
  EXPECT_EQ(options.min_keep, 0);
  EXPECT_EQ(options.repeat_penalty, 1.0f);
  EXPECT_EQ(options.repeat_last_n, 64);
  EXPECT_EQ(options.frequency_penalty, 0.0f);
  EXPECT_EQ(options.presence_penalty, 0.0f);
  EXPECT_TRUE(options.logit_bias.empty());
  EXPECT_FALSE(options.seed.has_value());
  EXPECT_EQ(options.order, default_sampler_order());
  EXPECT_TRUE(options.validate(32000).ok());
}

TEST(SamplerOptions, DefaultOrderIsLlamaCpps) {
  EXPECT_EQ(default_sampler_order(),
            (std::vector<SamplerStage>{SamplerStage::kLogitBias, SamplerStage::kPenalties,
                                       SamplerStage::kTopK, SamplerStage::kTypicalP, SamplerStage::kTopP,
                                       SamplerStage::kMinP, SamplerStage::kTemperature}));
  EXPECT_EQ(format_sampler_order(default_sampler_order()),
            "logit_bias;penalties;top_k;typ_p;top_p;min_p;temperature");
}

// Each case breaks one option; the error must be kInvalidArgument and name the field.
TEST(SamplerOptions, ValidationNamesTheBadField) {
  struct Case {
    const char* field;
    void (*spoil)(SamplerOptions&);
  };
  const Case cases[] = {
      {"temperature", [](SamplerOptions& o) { o.temperature = -0.1f; }},
      {"temperature", [](SamplerOptions& o) { o.temperature = kNaN; }},
      {"temperature", [](SamplerOptions& o) { o.temperature = kInf; }},
      {"top_k", [](SamplerOptions& o) { o.top_k = -1; }},
      {"top_p", [](SamplerOptions& o) { o.top_p = 0.0f; }},
      {"top_p", [](SamplerOptions& o) { o.top_p = 1.5f; }},
      {"top_p", [](SamplerOptions& o) { o.top_p = kNaN; }},
      {"min_p", [](SamplerOptions& o) { o.min_p = -0.01f; }},
      {"min_p", [](SamplerOptions& o) { o.min_p = 1.01f; }},
      {"typical_p", [](SamplerOptions& o) { o.typical_p = 0.0f; }},
      {"typical_p", [](SamplerOptions& o) { o.typical_p = 2.0f; }},
      {"min_keep", [](SamplerOptions& o) { o.min_keep = -1; }},
      {"repeat_penalty", [](SamplerOptions& o) { o.repeat_penalty = 0.0f; }},
      {"repeat_penalty", [](SamplerOptions& o) { o.repeat_penalty = -1.0f; }},
      {"repeat_penalty", [](SamplerOptions& o) { o.repeat_penalty = kInf; }},
      {"repeat_last_n", [](SamplerOptions& o) { o.repeat_last_n = -2; }},
      {"frequency_penalty", [](SamplerOptions& o) { o.frequency_penalty = kNaN; }},
      {"presence_penalty", [](SamplerOptions& o) { o.presence_penalty = -kInf; }},
      {"logit_bias[1]",
       [](SamplerOptions& o) {
         o.logit_bias = {{3, 1.0f}, {100, 1.0f}};
       }},
      {"logit_bias[0]",
       [](SamplerOptions& o) {
         o.logit_bias = {{-1, 1.0f}};
       }},
      {"logit_bias[0]",
       [](SamplerOptions& o) {
         o.logit_bias = {{2, kNaN}};
       }},
      {"logit_bias[0]",
       [](SamplerOptions& o) {
         o.logit_bias = {{2, kInf}};
       }},
      {"order[2]",
       [](SamplerOptions& o) {
         o.order = {SamplerStage::kTopK, SamplerStage::kTopP, SamplerStage::kTopK};
       }},
      {"order[0]", [](SamplerOptions& o) { o.order = {static_cast<SamplerStage>(42)}; }},
  };
  for (const Case& c : cases) {
    SamplerOptions options;
    c.spoil(options);
    const Status status = options.validate(100);
    ASSERT_FALSE(status.ok()) << c.field;
    EXPECT_EQ(status.error().code(), ErrorCode::kInvalidArgument) << c.field;
    EXPECT_NE(status.error().message().find(c.field), std::string::npos) << status.error().message();
  }
}

TEST(SamplerOptions, EdgeValuesThatAreAllowed) {
  SamplerOptions options;
  options.temperature = 0.0f;  // greedy
  options.top_k = 0;
  options.top_p = 1.0f;
  options.min_p = 0.0f;
  options.typical_p = 1.0f;
  options.repeat_last_n = -1;
  options.frequency_penalty = -2.0f;  // negative penalties encourage repetition, as in OpenAI's API
  options.presence_penalty = -2.0f;
  options.logit_bias = {{0, -kInf}, {99, 100.0f}, {0, 5.0f}};
  options.order = {};
  EXPECT_TRUE(options.validate(100).ok());
  options.min_p = 1.0f;
  options.top_p = 1e-6f;
  EXPECT_TRUE(options.validate(100).ok());
}

TEST(SamplerOptions, VocabularyMustBePositive) {
  const Status status = SamplerOptions().validate(0);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message().find("vocabulary"), std::string::npos);
}

TEST(SamplerStageNames, RoundTripAndAliases) {
  for (SamplerStage stage : default_sampler_order()) {
    EXPECT_EQ(parse_sampler_stage(sampler_stage_name(stage)), stage);
  }
  EXPECT_EQ(parse_sampler_stage("top-k"), SamplerStage::kTopK);
  EXPECT_EQ(parse_sampler_stage("nucleus"), SamplerStage::kTopP);
  EXPECT_EQ(parse_sampler_stage("typical"), SamplerStage::kTypicalP);
  EXPECT_EQ(parse_sampler_stage("temp"), SamplerStage::kTemperature);
  EXPECT_EQ(parse_sampler_stage("dry"), std::nullopt);
}

TEST(SamplerStageNames, ParseAnOrder) {
  const auto order = parse_sampler_order("penalties;top_k,temp;");
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<SamplerStage>{SamplerStage::kPenalties, SamplerStage::kTopK,
                                               SamplerStage::kTemperature}));
  const auto empty = parse_sampler_order("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  const auto bad = parse_sampler_order("top_k;xtc");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("\"xtc\""), std::string::npos);
}

}  // namespace
}  // namespace sinter
