#include "llama_cpp_quantizer.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace sinter::testing {
namespace {

// include/llama.h of the llama.cpp release node-llama-cpp ships (checked against the defaults
// below before use). Padded, so that a longer struct in another release cannot overrun it.
struct QuantizeParams {
  int32_t nthread;
  int32_t ftype;                 // enum llama_ftype
  int32_t output_tensor_type;    // enum ggml_type; GGML_TYPE_COUNT = use the mixture's rule
  int32_t token_embedding_type;  // same
  bool allow_requantize;
  bool quantize_output_tensor;
  bool only_copy;
  bool pure;
  bool keep_split;
  bool dry_run;
  const void* imatrix;
  const void* kv_overrides;
  const void* tensor_types;
  const int32_t* prune_layers;
  size_t max_buf_size;
  unsigned char padding[256];
};
using DefaultParamsFn = QuantizeParams (*)();
using LogCallback = void (*)(int level, const char* text, void* user_data);
using LogSetFn = void (*)(LogCallback, void*);

std::string find_libllama() {
  if (const char* env = std::getenv("SINTER_LIBLLAMA"); env != nullptr && *env != '\0') return env;
  std::vector<std::string> homes;
  if (const char* env = std::getenv("ORACLE_HOME"); env != nullptr && *env != '\0') homes.emplace_back(env);
  if (const char* env = std::getenv("XDG_CACHE_HOME"); env != nullptr && *env != '\0') {
    homes.push_back(std::string(env) + "/reference-oracle");
  }
  if (const char* env = std::getenv("HOME"); env != nullptr && *env != '\0') {
    homes.push_back(std::string(env) + "/.cache/reference-oracle");
  }
  for (const auto& home : homes) {
    const std::filesystem::path bins = home + "/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64";
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(bins, error)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("libllama.") && name.ends_with(".so")) return entry.path().string();
    }
  }
  return "";
}

}  // namespace

LlamaCppQuantizer& LlamaCppQuantizer::instance() {
  static LlamaCppQuantizer quantizer;
  return quantizer;
}

LlamaCppQuantizer::LlamaCppQuantizer() {
  const std::string path = find_libllama();
  if (path.empty()) {
    problem_ = "llama.cpp's libllama not found (run ../shared/oracle/run once)";
    return;
  }
  // Never closed: llama.cpp keeps global state (logs, backends) for the life of the process.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    problem_ = std::string("cannot load ") + path + ": " + dlerror();
    return;
  }
  auto quantize = reinterpret_cast<QuantizeFn>(dlsym(handle, "llama_model_quantize"));
  auto defaults = reinterpret_cast<DefaultParamsFn>(dlsym(handle, "llama_model_quantize_default_params"));
  auto log_set = reinterpret_cast<LogSetFn>(dlsym(handle, "llama_log_set"));
  if (quantize == nullptr || defaults == nullptr || log_set == nullptr) {
    problem_ = path + " lacks llama_model_quantize, its default parameters or llama_log_set";
    return;
  }
  const QuantizeParams params = defaults();
  // The release's defaults: Q8_0, no type overrides, output quantized, nothing else set.
  constexpr int32_t kGgmlTypeCount = 43;
  if (params.nthread != 0 || params.ftype != 7 || params.output_tensor_type != kGgmlTypeCount ||
      params.token_embedding_type != kGgmlTypeCount || !params.quantize_output_tensor || params.pure ||
      params.imatrix != nullptr || params.tensor_types != nullptr) {
    problem_ = path + ": llama_model_quantize_params is not laid out as this test expects";
    return;
  }
  log_set([](int, const char*, void*) {}, nullptr);  // quiet: a line per tensor otherwise
  quantize_ = quantize;
  default_params_ = reinterpret_cast<void*>(defaults);
}

std::string LlamaCppQuantizer::quantize(const std::string& input, const std::string& output,
                                        uint32_t file_type, int threads, bool pure) const {
  if (!available()) return problem_;
  QuantizeParams params = reinterpret_cast<DefaultParamsFn>(default_params_)();
  params.nthread = threads;
  params.ftype = static_cast<int32_t>(file_type);
  params.pure = pure;
  const uint32_t status = quantize_(input.c_str(), output.c_str(), &params);
  return status == 0 ? "" : "llama_model_quantize failed for " + input;
}

}  // namespace sinter::testing
