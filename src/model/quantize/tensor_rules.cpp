#include "model/quantize/tensor_rules.h"

#include <initializer_list>
#include <string_view>
#include <utility>

namespace sinter {
namespace {

// ---- Sets of mixtures -------------------------------------------------------------------------

using MixtureSet = uint32_t;

constexpr MixtureSet set_of(std::initializer_list<MixtureId> ids) {
  MixtureSet set = 0;
  for (MixtureId id : ids) set |= MixtureSet{1} << static_cast<uint32_t>(id);
  return set;
}
constexpr bool in_set(MixtureSet set, MixtureId id) { return (set >> static_cast<uint32_t>(id)) & 1u; }

using M = MixtureId;
// Every mixture whose default type is block-quantized (the rules apply to no other).
constexpr MixtureSet kQuantized =
    set_of({M::kQ4_0, M::kQ4_1, M::kQ5_0, M::kQ5_1, M::kQ8_0, M::kQ2_K, M::kQ3_K_S, M::kQ3_K_M, M::kQ3_K_L,
            M::kQ4_K_S, M::kQ4_K_M, M::kQ5_K_S, M::kQ5_K_M, M::kQ6_K, M::kIQ4_NL, M::kIQ4_XS});
constexpr MixtureSet kQuantizedButQ8_0 = kQuantized & ~set_of({M::kQ8_0});

// ---- Conditions -------------------------------------------------------------------------------

// A rule holds when all of its condition bits hold.
enum Condition : uint32_t {
  kAlways = 0,
  kFalcon = 1u << 0,  // architecture "falcon"
  kNotFalcon = 1u << 1,
  kEightExperts = 1u << 2,  // expert_count == 8 (Mixtral-like)
  kNotEightExperts = 1u << 3,
  kGqaAtLeast4 = 1u << 4,             // four or more query heads share a key/value head
  kMoreBitsLayer = 1u << 5,           // the first and last eighth, and every third layer between
  kFirstEighth = 1u << 6,             // index < count / 8
  kFirstSixteenth = 1u << 7,          // index < count / 16
  kFirstTwo = 1u << 8,                // index < 2
  kFirstFour = 1u << 9,               // index < 4
  kRowNotInDefaultBlocks = 1u << 10,  // row length not a multiple of the default type's block
  kSize70B = 1u << 11,                // llama.cpp's 70B size class (ModelFacts::is_70b)
};

// llama.cpp's use_more_bits: layers that matter most get more bits.
bool more_bits_layer(int32_t i, int32_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

struct RuleInput {
  RolePosition position;
  const ModelFacts& model;
  int64_t row_length;
  DType default_type;
};

bool holds(uint32_t conditions, const RuleInput& in) {
  const bool falcon = in.model.architecture == "falcon";
  const bool eight_experts = in.model.n_expert == 8;
  const int32_t i = in.position.index;
  const int32_t n = in.position.count;
  const bool row_fits = in.row_length % dtype_traits(in.default_type).block_size == 0;
  const std::pair<Condition, bool> tests[] = {
      {kFalcon, falcon},
      {kNotFalcon, !falcon},
      {kEightExperts, eight_experts},
      {kNotEightExperts, !eight_experts},
      {kGqaAtLeast4, in.model.n_gqa >= 4},
      {kMoreBitsLayer, more_bits_layer(i, n)},
      {kFirstEighth, i < n / 8},
      {kFirstSixteenth, i < n / 16},
      {kFirstTwo, i < 2},
      {kFirstFour, i < 4},
      {kRowNotInDefaultBlocks, !row_fits},
      {kSize70B, in.model.is_70b},
  };
  for (const auto& [bit, value] : tests) {
    if ((conditions & bit) != 0 && !value) return false;
  }
  return true;
}

// ---- The rules --------------------------------------------------------------------------------

struct TypeRule {
  WeightRole role;
  MixtureSet mixtures;
  uint32_t conditions;
  DType type;
};

using R = WeightRole;
// Per role, the first rule that holds decides; no rule → the mixture's default type. The order
// within a role is llama.cpp's. Rules for mixtures sinter does not make (IQ1–IQ3, Q2_K_S,
// TQ, MXFP4_MOE) and those that only apply with an importance matrix are left out.
constexpr TypeRule kRules[] = {
    // The output matrix (and a tied token embedding) keeps 6 bits: Q8_0 when its rows do not
    // fit the default type's blocks or for Falcon, Q6_K otherwise (Q8_0 files stay Q8_0).
    {R::kOutput, kQuantized, kRowNotInDefaultBlocks, DType::Q8_0},
    {R::kOutput, kQuantized, kFalcon, DType::Q8_0},
    {R::kOutput, kQuantizedButQ8_0, kAlways, DType::Q6_K},

    // attn_v: small (shared by the heads of a group) and sensitive, so it gets more bits.
    {R::kAttentionV, set_of({M::kQ2_K}), kGqaAtLeast4, DType::Q4_K},
    {R::kAttentionV, set_of({M::kQ2_K}), kAlways, DType::Q3_K},
    {R::kAttentionV, set_of({M::kQ3_K_M}), kFirstTwo, DType::Q5_K},
    {R::kAttentionV, set_of({M::kQ3_K_M}), kAlways, DType::Q4_K},
    {R::kAttentionV, set_of({M::kQ3_K_L}), kAlways, DType::Q5_K},
    {R::kAttentionV, set_of({M::kIQ4_NL, M::kIQ4_XS}), kGqaAtLeast4, DType::Q5_K},
    {R::kAttentionV, set_of({M::kQ4_K_M, M::kQ5_K_M}), kMoreBitsLayer, DType::Q6_K},
    {R::kAttentionV, set_of({M::kQ4_K_S}), kFirstFour, DType::Q5_K},

    // attn_k: only Mixtral-like models (8 experts) raise it.
    {R::kAttentionK, kQuantized, kEightExperts, DType::Q8_0},

    // ffn_down: the largest matrix of the early and late layers.
    {R::kFfnDown, set_of({M::kQ2_K}), kAlways, DType::Q3_K},
    {R::kFfnDown, set_of({M::kQ3_K_M}), kFirstSixteenth, DType::Q5_K},
    {R::kFfnDown, set_of({M::kQ3_K_M}), kNotFalcon, DType::Q4_K},
    {R::kFfnDown, set_of({M::kQ3_K_M}), kMoreBitsLayer, DType::Q4_K},
    {R::kFfnDown, set_of({M::kQ3_K_L}), kFalcon, DType::Q4_K},
    {R::kFfnDown, set_of({M::kQ3_K_L}), kAlways, DType::Q5_K},
    {R::kFfnDown, set_of({M::kQ4_K_M}), kFalcon | kFirstSixteenth, DType::Q6_K},
    {R::kFfnDown, set_of({M::kQ4_K_M}), kFalcon | kMoreBitsLayer, DType::Q5_K},
    {R::kFfnDown, set_of({M::kQ4_K_M}), kNotFalcon | kMoreBitsLayer, DType::Q6_K},
    {R::kFfnDown, set_of({M::kIQ4_NL, M::kIQ4_XS}), kFirstEighth, DType::Q5_K},
    {R::kFfnDown, set_of({M::kQ5_K_M}), kMoreBitsLayer, DType::Q6_K},
    {R::kFfnDown, set_of({M::kQ4_K_S}), kNotFalcon | kFirstEighth, DType::Q5_K},

    // attn_output: raised in the low-bit mixtures, and in most mixtures of 8-expert models.
    {R::kAttentionOutput,
     set_of({M::kQ2_K, M::kQ3_K_S, M::kQ3_K_M, M::kIQ4_NL, M::kQ4_K_S, M::kQ4_K_M, M::kIQ4_XS}),
     kNotFalcon | kEightExperts, DType::Q5_K},
    {R::kAttentionOutput, set_of({M::kQ2_K}), kNotFalcon | kNotEightExperts, DType::Q3_K},
    {R::kAttentionOutput, set_of({M::kQ3_K_M}), kNotFalcon | kNotEightExperts, DType::Q4_K},
    {R::kAttentionOutput, set_of({M::kQ3_K_L}), kNotFalcon | kNotEightExperts, DType::Q5_K},
    {R::kAttentionOutput, set_of({M::kQ3_K_L}), kFalcon, DType::Q4_K},
};

// Applied to attn_v after the rules, in this order, whatever rule chose: a 70B model's attn_v
// is 8× smaller than attn_q, so 3–4 bits become 5 cheaply; 8-expert models keep attn_v at 8.
struct TypeAdjustment {
  WeightRole role;
  uint32_t conditions;
  uint64_t from;  // bit per GGUF type id (all < 64); 0: any type
  DType to;
};
constexpr uint64_t types_of(std::initializer_list<DType> types) {
  uint64_t set = 0;
  for (DType type : types) set |= uint64_t{1} << static_cast<uint32_t>(type);
  return set;
}
constexpr TypeAdjustment kAdjustments[] = {
    {R::kAttentionV, kSize70B, types_of({DType::Q3_K, DType::Q4_K}), DType::Q5_K},
    {R::kAttentionV, kEightExperts, 0, DType::Q8_0},
};

// ---- Tensors that are never quantized ---------------------------------------------------------

// Names containing any of these keep their type (llama.cpp's list: small or sensitive tensors).
constexpr std::string_view kKeptSubstrings[] = {
    "_norm.weight",
    "ffn_gate_inp.weight",
    "ffn_gate_tid2eid.weight",
    "altup",
    "laurel",
    "per_layer_model_proj",
    "ssm_conv1d",
    "shortconv.conv.weight",
    "indexer.k_proj.weight",
    "indexer.q_proj.weight",
    "time_mix_first.weight",
    "time_mix_w0.weight",
    "time_mix_w1.weight",
    "time_mix_w2.weight",
    "time_mix_v0.weight",
    "time_mix_v1.weight",
    "time_mix_v2.weight",
    "time_mix_a0.weight",
    "time_mix_a1.weight",
    "time_mix_a2.weight",
    "time_mix_g1.weight",
    "time_mix_g2.weight",
    "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight",
    "attn_rel_b.weight",
    ".position_embd",
    "sam.pos_embd",
    "sam.neck.",
    "sam.net_",
    ".rel_pos",
    ".patch_embd",
    ".patch_merger",
    "a.rvq.codebook",
    "mm.a.code_embd",
};
// And these whole names (BERT's position and token-type embeddings).
constexpr std::string_view kKeptNames[] = {"position_embd.weight", "token_types.weight"};

// Role by name, checked in this order (attn_qkv before attn_v, and so on).
struct RolePattern {
  std::string_view pattern;
  bool whole_name;
  WeightRole role;
};
constexpr RolePattern kRolePatterns[] = {
    {"output.weight", true, R::kOutput},
    {"token_embd.weight", true, R::kTokenEmbedding},
    {"per_layer_token_embd.weight", true, R::kTokenEmbedding},
    {"attn_qkv.weight", false, R::kAttentionV},
    {"attn_kv_b.weight", false, R::kAttentionV},
    {"attn_v.weight", false, R::kAttentionV},
    {"attn_k.weight", false, R::kAttentionK},
    {"attn_q.weight", false, R::kAttentionQ},
    {"attn_output.weight", false, R::kAttentionOutput},
    {"ffn_up", false, R::kFfnUp},
    {"ffn_gate", false, R::kFfnGate},
    {"ffn_down", false, R::kFfnDown},
};

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

std::string_view weight_role_name(WeightRole role) {
  switch (role) {
    case R::kTokenEmbedding: return "token_embd";
    case R::kOutput: return "output";
    case R::kAttentionV: return "attn_v";
    case R::kAttentionK: return "attn_k";
    case R::kAttentionQ: return "attn_q";
    case R::kAttentionOutput: return "attn_output";
    case R::kFfnUp: return "ffn_up";
    case R::kFfnGate: return "ffn_gate";
    case R::kFfnDown: return "ffn_down";
    case R::kOther: return "other";
  }
  return "other";
}

WeightRole weight_role(std::string_view name) {
  for (const RolePattern& p : kRolePatterns) {
    if (p.whole_name ? name == p.pattern : contains(name, p.pattern)) return p.role;
  }
  return R::kOther;
}

bool tensor_is_quantizable(std::string_view name, std::span<const int64_t> shape) {
  // ggml counts dimensions up to the last one that is not 1: [256, 1] is a vector.
  size_t dims = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) dims = d + 1;
  }
  if (dims < 2) return false;
  if (!name.ends_with("weight")) return false;
  for (std::string_view part : kKeptSubstrings) {
    if (contains(name, part)) return false;
  }
  for (std::string_view kept : kKeptNames) {
    if (name == kept) return false;
  }
  return true;
}

DType mixture_tensor_type(MixtureId mixture_id, WeightRole role, RolePosition position,
                          const ModelFacts& model, int64_t row_length) {
  const Mixture& m = mixture(mixture_id);
  if (!dtype_traits(m.default_type).is_quantized) return m.default_type;
  const RuleInput input{position, model, row_length, m.default_type};
  DType type = m.default_type;
  for (const TypeRule& rule : kRules) {
    if (rule.role == role && in_set(rule.mixtures, mixture_id) && holds(rule.conditions, input)) {
      type = rule.type;
      break;
    }
  }
  for (const TypeAdjustment& adjustment : kAdjustments) {
    if (adjustment.role != role || !holds(adjustment.conditions, input)) continue;
    if (adjustment.from == 0 || ((adjustment.from >> static_cast<uint32_t>(type)) & 1u) != 0) {
      type = adjustment.to;
    }
  }
  return type;
}

DType fallback_type(DType wanted, int64_t row_length) {
  const auto fits = [row_length](DType type) { return row_length % dtype_traits(type).block_size == 0; };
  if (fits(wanted)) return wanted;
  DType smaller = DType::F16;
  switch (wanted) {
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::TQ1_0:
    case DType::TQ2_0: smaller = DType::Q4_0; break;
    case DType::Q4_K: smaller = DType::Q5_0; break;
    case DType::Q5_K: smaller = DType::Q5_1; break;
    case DType::Q6_K: smaller = DType::Q8_0; break;
    case DType::IQ1_S:
    case DType::IQ1_M:
    case DType::IQ2_XXS:
    case DType::IQ2_XS:
    case DType::IQ2_S:
    case DType::IQ3_XXS:
    case DType::IQ3_S:
    case DType::IQ4_XS: smaller = DType::IQ4_NL; break;
    default: break;  // a 32-value block type has no smaller block: F16
  }
  return fits(smaller) ? smaller : DType::F16;
}

}  // namespace sinter
