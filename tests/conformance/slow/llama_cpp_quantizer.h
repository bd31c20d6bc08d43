// llama.cpp's own `llama-quantize`, called in-process: libllama as shipped with the oracle's
// node-llama-cpp package (run ../shared/oracle/run once to install it), loaded with dlopen.
// llama_model_quantize applies llama.cpp's per-tensor mixture rules and quantizes each tensor with
// ggml_quantize_chunk (no importance matrix), so its files are the reference for both the
// types sinter chooses and the error it reaches.
#pragma once

#include <cstdint>
#include <string>

namespace sinter::testing {

class LlamaCppQuantizer {
 public:
  // The process-wide instance; check available() before use.
  static LlamaCppQuantizer& instance();
  bool available() const { return quantize_ != nullptr; }
  // Why it is not available (library not found, symbols or parameter layout not as expected).
  const std::string& problem() const { return problem_; }

  // Quantizes `input` to `output` with llama.cpp's file type `file_type` (llama_ftype, e.g. 15
  // for Q4_K_M). Returns "" on success, else what went wrong.
  std::string quantize(const std::string& input, const std::string& output, uint32_t file_type, int threads,
                       bool pure = false) const;

 private:
  LlamaCppQuantizer();
  using QuantizeFn = uint32_t (*)(const char*, const char*, const void*);
  QuantizeFn quantize_ = nullptr;
  void* default_params_ = nullptr;  // llama_model_quantize_default_params
  std::string problem_;
};

}  // namespace sinter::testing
