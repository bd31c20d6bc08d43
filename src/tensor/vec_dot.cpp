// The activation format of each weight type, the table of reference dot products, and the
// plain-number rows (F32, F16, BF16).
#include "tensor/vec_dot.h"

#include <cmath>
#include <cstring>

namespace sinter {

DType vec_dot_activation_type(DType weight) {
  switch (weight) {
    case DType::F16: return DType::F16;
    case DType::BF16: return DType::BF16;
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q8_0:
    case DType::IQ4_NL:
    case DType::MXFP4: return DType::Q8_0;
    case DType::Q4_1:
    case DType::Q5_1: return DType::Q8_1;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::IQ2_XXS:
    case DType::IQ2_XS:
    case DType::IQ2_S:
    case DType::IQ3_XXS:
    case DType::IQ3_S:
    case DType::IQ1_S:
    case DType::IQ1_M:
    case DType::IQ4_XS:
    case DType::TQ1_0:
    case DType::TQ2_0: return DType::Q8_K;
    default: return DType::F32;
  }
}

VecDotFn reference_vec_dot(DType weight) {
  switch (weight) {
    case DType::F32: return reference::vec_dot_f32;
    case DType::F16: return reference::vec_dot_f16;
    case DType::BF16: return reference::vec_dot_bf16;
    case DType::Q4_0: return reference::vec_dot_q4_0_q8_0;
    case DType::Q4_1: return reference::vec_dot_q4_1_q8_1;
    case DType::Q5_0: return reference::vec_dot_q5_0_q8_0;
    case DType::Q5_1: return reference::vec_dot_q5_1_q8_1;
    case DType::Q8_0: return reference::vec_dot_q8_0_q8_0;
    case DType::IQ4_NL: return reference::vec_dot_iq4_nl_q8_0;
    case DType::MXFP4: return reference::vec_dot_mxfp4_q8_0;
    case DType::Q2_K: return reference::vec_dot_q2_k_q8_k;
    case DType::Q3_K: return reference::vec_dot_q3_k_q8_k;
    case DType::Q4_K: return reference::vec_dot_q4_k_q8_k;
    case DType::Q5_K: return reference::vec_dot_q5_k_q8_k;
    case DType::Q6_K: return reference::vec_dot_q6_k_q8_k;
    case DType::IQ4_XS: return reference::vec_dot_iq4_xs_q8_k;
    default: return nullptr;
  }
}

namespace reference {
namespace {

template <class Widen>
float plain_dot(int64_t n, const void* w, const void* x, Widen widen) {
  const auto* wp = static_cast<const uint16_t*>(w);
  const auto* xp = static_cast<const uint16_t*>(x);
  float acc = 0.0f;
  for (int64_t k = 0; k < n; ++k) {
    uint16_t wk, xk;  // the rows may be unaligned
    std::memcpy(&wk, wp + k, sizeof wk);
    std::memcpy(&xk, xp + k, sizeof xk);
    acc = std::fma(widen(wk), widen(xk), acc);
  }
  return acc;
}

}  // namespace

float vec_dot_f32(int64_t n, const void* w, const void* x) {
  const auto* wp = static_cast<const uint8_t*>(w);
  const auto* xp = static_cast<const uint8_t*>(x);
  float acc = 0.0f;
  for (int64_t k = 0; k < n; ++k) {
    float wk, xk;
    std::memcpy(&wk, wp + 4 * k, sizeof wk);
    std::memcpy(&xk, xp + 4 * k, sizeof xk);
    acc = std::fma(wk, xk, acc);
  }
  return acc;
}

float vec_dot_f16(int64_t n, const void* w, const void* x) {
  return plain_dot(n, w, x, [](uint16_t h) { return f16_to_f32(h); });
}

float vec_dot_bf16(int64_t n, const void* w, const void* x) {
  return plain_dot(n, w, x, [](uint16_t h) { return bf16_to_f32(h); });
}

}  // namespace reference
}  // namespace sinter
