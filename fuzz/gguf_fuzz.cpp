// Feeds arbitrary bytes to the GGUF reader: it must return an Error or a file, never crash or
// read outside the buffer. Whatever parses is then used the way the engine uses it: every
// tensor's bytes touched, every metadata value read as every type typed access offers, the
// file-level statistics computed, and the diagnosis of `sinter inspect` made (tokenizer,
// hyper-parameters checked against the tensors, weight binding, memory estimate) and written as
// JSON. Whatever counts the file claims, nothing is sized from them beyond what the file holds,
// the issues stay few and short, and the JSON parses back.
// Seeds: fuzz/corpus/gguf/ (made by tests/gguf/fuzz_corpus_test.cpp).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/inspect_report.h"
#include "core/mapped_file.h"
#include "gguf/file_stats.h"
#include "gguf/gguf_file.h"
#include "model/tensor_blocks.h"
#include "runtime/diagnosis.h"

namespace {

using sinter::Metadata;

template <class T>
size_t touch(const Metadata& metadata, const std::string& key) {
  auto value = metadata.get<T>(key);
  // Both outcomes are fine; a failure must still carry a message naming the key.
  if (!value) return value.error().message().size();
  if constexpr (requires { value->size(); }) {
    return value->size();
  } else {
    return sizeof(*value);
  }
}

size_t read_every_way(const Metadata& metadata, const std::string& key) {
  size_t sum = 0;
  sum += touch<bool>(metadata, key);
  sum += touch<uint8_t>(metadata, key);
  sum += touch<int8_t>(metadata, key);
  sum += touch<uint16_t>(metadata, key);
  sum += touch<int16_t>(metadata, key);
  sum += touch<uint32_t>(metadata, key);
  sum += touch<int32_t>(metadata, key);
  sum += touch<uint64_t>(metadata, key);
  sum += touch<int64_t>(metadata, key);
  sum += touch<float>(metadata, key);
  sum += touch<double>(metadata, key);
  sum += touch<std::string>(metadata, key);
  sum += touch<std::vector<std::string>>(metadata, key);
  sum += touch<std::vector<float>>(metadata, key);
  sum += touch<std::vector<uint8_t>>(metadata, key);
  sum += touch<std::vector<int32_t>>(metadata, key);
  sum += touch<std::vector<uint32_t>>(metadata, key);
  sum += touch<std::vector<int64_t>>(metadata, key);
  sum += touch<std::vector<double>>(metadata, key);
  sum += touch<std::vector<std::vector<int32_t>>>(metadata, key);
  sum += touch<std::vector<std::vector<std::string>>>(metadata, key);
  if (auto array = metadata.get_array(key)) {
    const sinter::GgufArray& a = **array;
    const size_t n = a.size();
    if (n > 0) sum += a.at(0).to_display().size() + a.at(n - 1).type_description().size();
  }
  return sum;
}

// The diagnosis, as `sinter inspect FILE --json` makes it.
size_t diagnose_as_inspect(const sinter::GgufFile& file) {
  const sinter::Diagnosis d = sinter::diagnose(file);
  // A few issues of each severity and one counting the rest; each message short.
  if (d.issues.size() > 2 * (sinter::kMaxIssuesPerSeverity + 1)) __builtin_trap();
  for (const auto& issue : d.issues) {
    if (issue.message.empty() || issue.message.size() > sinter::kMaxIssueBytes + 3) __builtin_trap();
  }
  if (d.n_layer < 0 || d.n_vocab < 0 || d.n_embd < 0 || d.n_ctx_train < 0) __builtin_trap();  // no int32 wrap
  // A loadable model has exactly the blocks its tensors are numbered in (every architecture so
  // far numbers its layers blk.N).
  if (d.loadable && static_cast<uint64_t>(d.n_layer) != sinter::tensor_blocks(file.tensors()).count)
    __builtin_trap();
  const std::string json = sinter::cli::diagnosis_json(d, file.metadata())
                               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (nlohmann::json::parse(json, nullptr, false).is_discarded()) __builtin_trap();  // valid JSON, always
  return json.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = sinter::MappedFile::from_bytes({data, size}, "fuzz.gguf");
  auto gguf = sinter::GgufFile::parse(file);
  if (!gguf) {
    if (gguf.error().message().empty()) __builtin_trap();  // every error says what was wrong
    return 0;
  }

  size_t sum = 0;
  for (const auto& t : gguf->tensors()) {
    if (t.bytes > 0) sum += t.data[0] + t.data[t.bytes - 1];
    sum += static_cast<size_t>(t.element_count()) + t.shape_string().size();
    if (gguf->find_tensor(t.name) != &t) __builtin_trap();  // names are unique and indexed
  }
  for (const auto& [key, value] : gguf->metadata().entries()) {
    sum += value.to_display().size() + value.type_description().size();
    sum += read_every_way(gguf->metadata(), key);
  }
  const sinter::GgufFileStats stats = sinter::compute_file_stats(*gguf);
  if (stats.payload_bytes > file->size()) __builtin_trap();  // every tensor lies inside the buffer
  sum += stats.n_params;
  sum += diagnose_as_inspect(*gguf);
  volatile size_t sink = sum;
  (void)sink;
  return 0;
}
