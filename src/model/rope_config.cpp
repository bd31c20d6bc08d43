#include "model/rope_config.h"

namespace sinter {

void RopeConfig::declare(HParams& p, uint32_t n_rot_default) {
  p.optional("{arch}.rope.dimension_count", n_rot, n_rot_default);
  p.optional("{arch}.rope.freq_base", freq_base, 10000.0f);
  p.optional("{arch}.rope.scaling.type", scaling_type, std::string("none"));
  p.optional("{arch}.rope.scaling.factor", scaling_factor, 0.0f);
  p.optional("{arch}.rope.scaling.original_context_length", original_context, 0u);
  p.optional("{arch}.rope.scaling.attn_factor", attn_factor, 1.0f);
  p.optional("{arch}.rope.scaling.yarn_beta_fast", yarn_beta_fast, 32.0f);
  p.optional("{arch}.rope.scaling.yarn_beta_slow", yarn_beta_slow, 1.0f);
  // longrope: the scaling is in the file's factor tensors (Phi-3), not in these keys.
  if (scaling_type != "none" && scaling_type != "linear" && scaling_type != "yarn" &&
      scaling_type != "longrope") {
    p.fail("rope scaling type " + HParams::quote(scaling_type) +
           " is not supported (none, linear, yarn, longrope)");
  }
  if (n_rot == 0 || n_rot % 2 != 0)
    p.fail("rope dimension count must be even and positive, not " + std::to_string(n_rot));
  if (freq_base <= 0.0f) p.fail("rope frequency base must be positive");
}

RopeParams RopeConfig::params(bool neox, uint32_t n_ctx_train) const {
  RopeParams r;
  r.n_rot = static_cast<int32_t>(n_rot);
  r.neox = neox;
  r.freq_base = freq_base;
  const bool scaled = scaling_type == "linear" || scaling_type == "yarn";
  r.freq_scale = (!scaled || scaling_factor == 0.0f) ? 1.0f : 1.0f / scaling_factor;
  r.n_ctx_orig = static_cast<int32_t>(original_context != 0 ? original_context : n_ctx_train);
  r.ext_factor = scaling_type == "yarn" ? 1.0f : 0.0f;
  r.attn_factor = attn_factor;
  r.beta_fast = yarn_beta_fast;
  r.beta_slow = yarn_beta_slow;
  return r;
}

}  // namespace sinter
