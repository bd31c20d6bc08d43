// Quantization mixtures: what `sinter quantize IN OUT TYPE` accepts as TYPE. A mixture names a
// default tensor type and, for the K-quant mixtures (_S/_M/_L), per-tensor exceptions chosen by
// the rules of tensor_rules.h. Each has llama.cpp's file-type number (`llama_ftype`), which is
// written to `general.file_type`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tensor/dtype.h"

namespace sinter {

// One bit per mixture, so that a rule can name the set of mixtures it applies to.
enum class MixtureId : uint32_t {
  kF32,
  kF16,
  kBF16,
  kQ4_0,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kQ8_0,
  kQ2_K,
  kQ3_K_S,
  kQ3_K_M,
  kQ3_K_L,
  kQ4_K_S,
  kQ4_K_M,
  kQ5_K_S,
  kQ5_K_M,
  kQ6_K,
  kIQ4_NL,
  kIQ4_XS,
  kMXFP4_MOE,  // gpt-oss's: expert tensors MXFP4, every other quantized tensor Q8_0
};

struct Mixture {
  MixtureId id;
  std::string_view name;  // as llama-quantize spells it: "Q4_K_M"
  uint32_t file_type;     // llama.cpp's llama_ftype value (general.file_type)
  DType default_type;     // what a quantizable tensor gets unless a rule says otherwise
  std::string_view description;
};

std::span<const Mixture> all_mixtures();
const Mixture& mixture(MixtureId id);
// Case-insensitive; accepts llama-quantize's aliases Q3_K, Q4_K, Q5_K (for the _M mixtures).
std::optional<MixtureId> mixture_from_name(std::string_view name);
// "F32, F16, BF16, Q4_0, ..." for error messages and --help.
std::string mixture_names();

}  // namespace sinter
