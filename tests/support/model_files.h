// Model files for tests of how architectures read GGUF files: a synthetic tiny model, a copy of a
// file with its metadata (and tensors) edited, and binding a file's weights without loading them.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/registry.h"
#include "model/synth.h"
#include "support/test_paths.h"

namespace sinter::testing {

// The tiny preset of `architecture` (seed 4), in the test's scratch folder.
inline std::string synth_tiny(const std::string& architecture) {
  const std::string file = scratch_dir() + "/" + architecture + "-tiny.gguf";
  SynthOptions options;
  options.architecture = architecture;
  options.seed = 4;
  const Status status = synthesize(options, file);
  EXPECT_TRUE(status.ok()) << status.error().message();
  return file;
}

// A preset of `architecture` with `seed`, written once per test binary beside the tests' scratch
// folders (shared by the tests of one executable).
inline const std::string& synth_preset(const std::string& architecture, const std::string& preset,
                                       uint32_t seed) {
  static std::map<std::string, std::string> made;
  const std::string key = architecture + "-" + preset + "-" + std::to_string(seed);
  auto [it, fresh] = made.emplace(key, scratch_dir() + "/../synth-" + key + ".gguf");
  if (fresh) {
    SynthOptions options;
    options.architecture = architecture;
    options.preset = preset;
    options.seed = seed;
    const Status status = synthesize(options, it->second);
    EXPECT_TRUE(status.ok()) << status.error().message();
  }
  return it->second;
}

// What to do with a tensor of the copy: false drops it; a changed shape writes F32 zeros.
using TensorEdit = std::function<bool(const std::string& name, std::vector<int64_t>& shape)>;

// A copy of `source`, named `name` in the scratch folder, with its metadata edited.
inline std::string rewrite_gguf(const std::string& source, const std::string& name,
                                const std::function<void(Metadata&)>& edit, const TensorEdit& tensor = {}) {
  auto file = GgufFile::open(source);
  EXPECT_TRUE(file.ok());
  GgufWriter writer;
  for (const auto& [key, value] : file->metadata().entries()) writer.metadata().set(key, value);
  edit(writer.metadata());
  for (const auto& t : file->tensors()) {
    std::vector<int64_t> shape = t.shape;
    if (tensor && !tensor(t.name, shape)) continue;
    if (shape == t.shape) {
      EXPECT_TRUE(
          writer.add_tensor_bytes(t.name, t.type, shape, std::vector<uint8_t>(t.data, t.data + t.bytes)));
    } else {
      int64_t count = 1;
      for (int64_t d : shape) count *= d;
      EXPECT_TRUE(writer.add_tensor_bytes(t.name, DType::F32, shape,
                                          std::vector<uint8_t>(static_cast<size_t>(count) * sizeof(float))));
    }
  }
  const std::string path = scratch_dir() + "/" + name + ".gguf";
  const Status written = writer.write(path);
  EXPECT_TRUE(written.ok()) << written.error().message();
  return path;
}

// Reads the file's hyper-parameters and binds its weights as `architecture` (nothing loaded).
inline Result<std::unique_ptr<Model>> bind_model(const std::string& path, const std::string& architecture) {
  SINTER_ASSIGN(GgufFile file, GgufFile::open(path));
  WeightBinder binder(file, WeightBinder::Mode::kBind);
  SINTER_ASSIGN(auto model, find_architecture(architecture)->create(file.metadata(), binder));
  binder.finish();
  SINTER_TRY(binder.status());
  return model;
}

}  // namespace sinter::testing
