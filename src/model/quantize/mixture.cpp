#include "model/quantize/mixture.h"

#include <array>
#include <cctype>

#include "sinter/result.h"

namespace sinter {
namespace {

// file_type values are llama.cpp's enum llama_ftype (include/llama.h): LLAMA_FTYPE_MOSTLY_Q4_K_M
// is 15, and so on. Bits per weight are the default type's; the mixtures add a few percent.
constexpr std::array<Mixture, 20> kMixtures = {{
    {MixtureId::kF32, "F32", 0, DType::F32, "32 bits per weight, no quantization"},
    {MixtureId::kF16, "F16", 1, DType::F16, "16 bits per weight"},
    {MixtureId::kBF16, "BF16", 32, DType::BF16, "16 bits per weight, bfloat16"},
    {MixtureId::kQ4_0, "Q4_0", 2, DType::Q4_0, "4.5 bits per weight"},
    {MixtureId::kQ4_1, "Q4_1", 3, DType::Q4_1, "5.0 bits per weight"},
    {MixtureId::kQ5_0, "Q5_0", 8, DType::Q5_0, "5.5 bits per weight"},
    {MixtureId::kQ5_1, "Q5_1", 9, DType::Q5_1, "6.0 bits per weight"},
    {MixtureId::kQ8_0, "Q8_0", 7, DType::Q8_0, "8.5 bits per weight"},
    {MixtureId::kQ2_K, "Q2_K", 10, DType::Q2_K, "Q2_K, attn_v/ffn_down/attn_output Q3_K or Q4_K"},
    {MixtureId::kQ3_K_S, "Q3_K_S", 11, DType::Q3_K, "Q3_K throughout"},
    {MixtureId::kQ3_K_M, "Q3_K_M", 12, DType::Q3_K, "Q3_K, attn_v/ffn_down/attn_output Q4_K or Q5_K"},
    {MixtureId::kQ3_K_L, "Q3_K_L", 13, DType::Q3_K, "Q3_K, attn_v/ffn_down/attn_output Q5_K"},
    {MixtureId::kQ4_K_S, "Q4_K_S", 14, DType::Q4_K, "Q4_K, first attn_v and ffn_down Q5_K"},
    {MixtureId::kQ4_K_M, "Q4_K_M", 15, DType::Q4_K, "Q4_K, half of attn_v and ffn_down Q6_K"},
    {MixtureId::kQ5_K_S, "Q5_K_S", 16, DType::Q5_K, "Q5_K throughout"},
    {MixtureId::kQ5_K_M, "Q5_K_M", 17, DType::Q5_K, "Q5_K, half of attn_v and ffn_down Q6_K"},
    {MixtureId::kQ6_K, "Q6_K", 18, DType::Q6_K, "6.5625 bits per weight"},
    {MixtureId::kIQ4_NL, "IQ4_NL", 25, DType::IQ4_NL, "4.5 bits per weight, non-linear levels"},
    {MixtureId::kIQ4_XS, "IQ4_XS", 30, DType::IQ4_XS, "4.25 bits per weight, non-linear levels"},
    {MixtureId::kMXFP4_MOE, "MXFP4_MOE", 38, DType::MXFP4,
     "MXFP4 experts (4.25 bits per weight), Q8_0 elsewhere"},
}};

// mixture(id) indexes the table by id.
constexpr bool ids_match_positions() {
  for (size_t i = 0; i < kMixtures.size(); ++i) {
    if (static_cast<size_t>(kMixtures[i].id) != i) return false;
  }
  return true;
}
static_assert(ids_match_positions());

struct Alias {
  std::string_view name;
  MixtureId id;
};
// llama-quantize's own aliases.
constexpr Alias kAliases[] = {
    {"Q3_K", MixtureId::kQ3_K_M},
    {"Q4_K", MixtureId::kQ4_K_M},
    {"Q5_K", MixtureId::kQ5_K_M},
};

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::span<const Mixture> all_mixtures() { return kMixtures; }

const Mixture& mixture(MixtureId id) { return kMixtures[static_cast<size_t>(id)]; }

std::optional<MixtureId> mixture_from_name(std::string_view name) {
  for (const Mixture& m : kMixtures) {
    if (same_name(m.name, name)) return m.id;
  }
  for (const Alias& alias : kAliases) {
    if (same_name(alias.name, name)) return alias.id;
  }
  return std::nullopt;
}

std::string mixture_names() {
  std::string names;
  for (const Mixture& m : kMixtures) {
    if (!names.empty()) names += ", ";
    names += m.name;
  }
  for (const Alias& alias : kAliases) {
    names += concat(", ", alias.name, " (= ", mixture(alias.id).name, ")");
  }
  return names;
}

}  // namespace sinter
