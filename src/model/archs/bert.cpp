// BERT (llama.cpp's LLM_ARCH_BERT: BGE, MiniLM, E5 and other sentence-embedding encoders, and
// BGE-style rerankers): absolute position embeddings, biases on every projection and norm, a
// plain GELU feed-forward network, separate or fused Q/K/V, no rotary embedding. The blocks
// are the BERT family's (model/bert_family.h).
#include "model/bert_family.h"

namespace sinter {
namespace {

constexpr BertVariant kBertVariant{.architecture = "bert"};

class BertModel final : public BertFamilyModel {
 public:
  static constexpr const char* kArchitecture = "bert";
  BertModel() : BertFamilyModel(kBertVariant) {}
};

const ArchitectureRegistration kBert{Architecture{
    BertModel::kArchitecture,
    BertModel::create<BertModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_bert_synth_keys(BertModel::kArchitecture, dims, out);
    },
    {
        {"tiny", {64, 2, 4, 4, 256, 512, 512}},
        {"small", {256, 4, 8, 8, 1024, 1024, 512}},
        {"bge-small", {384, 12, 12, 12, 1536, 30522, 512}},
    },
    /*encoder=*/true,
}};

}  // namespace
}  // namespace sinter
