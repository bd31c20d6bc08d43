#include "model/short_conv.h"

namespace sinter {

ShortConvWeights bind_short_conv(WeightBinder& b, int il, int64_t n_embd, int64_t l_cache) {
  const auto name = [il](const char* pattern) { return format_name(pattern, il); };
  ShortConvWeights w;
  w.in_proj = b.require(name("blk.%d.shortconv.in_proj.weight"), {n_embd, 3 * n_embd});
  w.conv = b.require(name("blk.%d.shortconv.conv.weight"), {l_cache, n_embd});
  w.out_proj = b.require(name("blk.%d.shortconv.out_proj.weight"), {n_embd, n_embd});
  return w;
}

Status check_short_conv_types(const ShortConvWeights& w) {
  if (w.conv == nullptr || w.conv->type == DType::F32) return ok_status();
  return make_error(ErrorCode::kFormat, "tensor '", w.conv->name, "' is ", dtype_name(w.conv->type),
                    "; the short convolution's kernel must be f32");
}

RecurrentLayerShape short_conv_state(int64_t n_embd, int64_t l_cache) {
  return RecurrentLayerShape{{RecurrentStateShape{{l_cache - 1, n_embd, 1}}}};
}

Tensor* build_short_conv(ForwardContext& fx, Tensor* h, const ShortConvWeights& w, int recurrent_layer,
                         int il) {
  Graph& g = fx.graph;
  const int64_t n_embd = h->ne[0];
  Tensor* bcx = ForwardContext::name(fx.build_linear(w.in_proj, h, nullptr), "shortconv_in", il);
  Tensor* b = ForwardContext::name(fx.build_row_slice(bcx, 0, n_embd), "shortconv_b", il);
  Tensor* c = ForwardContext::name(fx.build_row_slice(bcx, n_embd, n_embd), "shortconv_c", il);
  Tensor* x = ForwardContext::name(fx.build_row_slice(bcx, 2 * n_embd, n_embd), "shortconv_x", il);
  Tensor* bx = ForwardContext::name(g.mul(b, x), "shortconv_bx", il);
  // The state [l_cache − 1, n_embd, 1, slots] as the op's [l_cache − 1, n_embd, slots].
  Tensor* state = fx.state().state(recurrent_layer, 0);
  state = g.reshape(state, {state->ne[0], state->ne[1], state->ne[3], 1});
  Tensor* conv =
      ForwardContext::name(g.ssm_conv(bx, w.conv, state, fx.state_slots_input()), "shortconv_conv", il);
  Tensor* y = ForwardContext::name(g.mul(c, conv), "shortconv_y", il);
  return ForwardContext::name(fx.build_linear(w.out_proj, y, nullptr), "shortconv_out", il);
}

}  // namespace sinter
