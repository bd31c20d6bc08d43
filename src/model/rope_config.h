// Rotary-embedding hyper-parameters shared by the architectures that use RoPE: the keys under
// `{arch}.rope.*`, read into RopeParams with their defaults reported.
#pragma once

#include <string>

#include "graph/graph.h"
#include "model/hparams.h"

namespace sinter {

struct RopeConfig {
  uint32_t n_rot = 0;
  float freq_base = 10000.0f;
  std::string scaling_type = "none";  // none, linear, yarn
  float scaling_factor = 0.0f;        // 0: no scaling
  uint32_t original_context = 0;      // 0: the training context
  float attn_factor = 1.0f;
  float yarn_beta_fast = 32.0f;
  float yarn_beta_slow = 1.0f;

  // Declares the keys; `n_rot_default` is usually the head size.
  void declare(HParams& p, uint32_t n_rot_default);
  // The parameters the kernels use.
  RopeParams params(bool neox, uint32_t n_ctx_train) const;
};

}  // namespace sinter
