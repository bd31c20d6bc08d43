// Small synthetic models for runtime tests, written once per test binary.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "model/synth.h"
#include "support/test_paths.h"

namespace sinter::testing {

// A 2-layer llama with grouped-query attention (4 query heads over 2 KV heads), F32 weights.
inline const std::string& tiny_llama() {
  static const std::string path = [] {
    const std::string file = scratch_dir() + "/../tiny-llama.gguf";
    SynthOptions options;
    options.preset = "tiny";
    options.seed = 7;
    auto status = synthesize(options, file);
    EXPECT_TRUE(status) << status.error().message();
    return file;
  }();
  return path;
}

}  // namespace sinter::testing
