// Nomic BERT (llama.cpp's LLM_ARCH_NOMIC_BERT: nomic-embed-text v1/v1.5): the BERT family's
// post-norm blocks with NeoX RoPE on queries and keys instead of position embeddings, one fused
// attn_qkv projection, and a SwiGLU feed-forward network (gate, up, down). Nomic's own files
// have no biases; a file with them is bound with them (synthetic models carry them, so that
// every path is exercised). RoPE base 1000, as nomic-embed-text's.
#include "model/bert_family.h"

namespace sinter {
namespace {

constexpr BertVariant kNomicVariant{
    .architecture = "nomic-bert", .rope = true, .gated_ffn = true, .fused_qkv = true};

class NomicBertModel final : public BertFamilyModel {
 public:
  static constexpr const char* kArchitecture = "nomic-bert";
  NomicBertModel() : BertFamilyModel(kNomicVariant) {}
};

const ArchitectureRegistration kNomicBert{Architecture{
    NomicBertModel::kArchitecture,
    NomicBertModel::create<NomicBertModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_bert_synth_keys(NomicBertModel::kArchitecture, dims, out, /*rope_freq_base=*/1000.0f);
    },
    {
        {"tiny", {64, 2, 4, 4, 256, 512, 2048}},
        {"small", {256, 4, 8, 8, 1024, 1024, 2048}},
        {"nomic-embed", {768, 12, 12, 12, 3072, 30522, 2048}},
    },
    /*encoder=*/true,
}};

}  // namespace
}  // namespace sinter
