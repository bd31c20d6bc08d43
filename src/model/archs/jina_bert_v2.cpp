// Jina BERT v2 (llama.cpp's LLM_ARCH_JINA_BERT_V2: jina-embeddings-v2 and jina-reranker-v1):
// the BERT family's post-norm blocks with ALiBi instead of position embeddings (each head's
// scores get −slope · |i − j| added, slopes from attention.max_alibi_bias, 8), optional
// LayerNorms of the whole Q and K projections and a second attention norm (the code model's),
// and a GeGLU feed-forward network with biases (model/bert_family.h). With ALiBi nothing in the
// cache depends on positions, so inputs may be longer than the training context in principle;
// sinter keeps llama.cpp's limit of the file's context length.
#include "model/bert_family.h"

namespace sinter {
namespace {

constexpr BertVariant kJinaVariant{.architecture = "jina-bert-v2", .jina = true};

class JinaBertV2Model final : public BertFamilyModel {
 public:
  static constexpr const char* kArchitecture = "jina-bert-v2";
  JinaBertV2Model() : BertFamilyModel(kJinaVariant) {}
};

const ArchitectureRegistration kJinaBertV2{Architecture{
    JinaBertV2Model::kArchitecture,
    JinaBertV2Model::create<JinaBertV2Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_bert_synth_keys(JinaBertV2Model::kArchitecture, dims, out, 10000.0f, /*alibi=*/true);
    },
    {
        {"tiny", {64, 2, 4, 4, 256, 512, 1024}},
        {"small", {256, 4, 8, 8, 1024, 1024, 1024}},
        {"jina-small", {512, 4, 8, 8, 2048, 30528, 8192}},
        {"jina-base", {768, 12, 12, 12, 3072, 30528, 8192}},
    },
    /*encoder=*/true,
}};

}  // namespace
}  // namespace sinter
