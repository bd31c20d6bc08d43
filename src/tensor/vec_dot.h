// Scalar reference dot products of one weight row with one activation row: the specification of
// every matrix-product kernel of the CPU backend (each SIMD kernel is tested to give the same
// bits).
//
// Activations are first rounded to the weight type's activation format (`vec_dot_activation_type`:
// Q8_0 for Q4_0, Q8_K for the K-quants, F16 for F16, ...), as llama.cpp's CPU backend does. Then,
// for block types, each block's products are summed exactly in integers, the way the formats
// define them, and the float accumulation is one chain per output in block order:
//
//   acc = 0
//   for each block b:  acc = fma(float(isum_b), d_w[b] · d_x[b], acc)
//                      (types with a minimum add a second fma, see below)
//
// so that any kernel that keeps one accumulator per output and visits the blocks in order gives
// bit-identical results, whatever the batch, tile or thread it falls in. Per type:
//
//   Q4_0·Q8_0    isum = Σ (q − 8)·x                       (32-value blocks)
//   Q5_0·Q8_0    isum = Σ (q − 16)·x
//   Q8_0·Q8_0    isum = Σ q·x
//   IQ4_NL·Q8_0  isum = Σ kvalues[q]·x
//   Q4_1·Q8_1    isum = Σ q·x;  then acc = fma(m_w, s_x, acc)
//   Q5_1·Q8_1    as Q4_1 with 5-bit q
//   Q2_K·Q8_K    isum = Σ_g sc_g Σ q·x;  msum = Σ_g m_g·bsum_g (16-value groups)
//                acc = fma(float(isum), d·d_x, acc);  acc = fma(float(−msum), dmin·d_x, acc)
//   Q3_K·Q8_K    isum = Σ_g (sc_g − 32) Σ (q − 4·[high bit clear])·x  (16-value groups)
//   Q4_K·Q8_K    isum = Σ_g sc_g Σ q·x;  msum = Σ_g m_g·(x sum of group g)  (32-value groups)
//                acc = fma(float(isum), d·d_x, acc);  acc = fma(float(−msum), dmin·d_x, acc)
//   Q5_K·Q8_K    as Q4_K with 5-bit q
//   Q6_K·Q8_K    isum = Σ_g sc_g Σ (q − 32)·x  (16-value groups)
//   IQ4_XS·Q8_K  isum = Σ_g (ls_g − 32) Σ kvalues[q]·x  (32-value groups)
//
// where d_w·d_x is the float product of the two widened scales (exact for two F16 scales).
// F32, F16 and BF16 rows: acc = fma(w[k], x[k], acc) for k in order (products of two F16 or two
// BF16 values are exact in float, so the fma only rounds the sum).
#pragma once

#include <cstdint>

#include "core/half.h"
#include "tensor/dtype.h"

namespace sinter {

// The format activations are rounded to before a product with weights of this type; F32 where
// the weight type has no reference dot product (the product then dequantizes the weight row and
// dots in F32 with the activations as they are).
DType vec_dot_activation_type(DType weight);

// `n` values (a multiple of the weight type's block size); `w` one row of the weight type, `x`
// one row of its activation type. Returns the dot product defined above.
using VecDotFn = float (*)(int64_t n, const void* w, const void* x);

// The reference dot product of a weight type, or nullptr where there is none.
VecDotFn reference_vec_dot(DType weight);

namespace reference {

float vec_dot_f32(int64_t n, const void* w, const void* x);
float vec_dot_f16(int64_t n, const void* w, const void* x);
float vec_dot_bf16(int64_t n, const void* w, const void* x);

float vec_dot_q4_0_q8_0(int64_t n, const void* w, const void* x);
float vec_dot_q4_1_q8_1(int64_t n, const void* w, const void* x);
float vec_dot_q5_0_q8_0(int64_t n, const void* w, const void* x);
float vec_dot_q5_1_q8_1(int64_t n, const void* w, const void* x);
float vec_dot_q8_0_q8_0(int64_t n, const void* w, const void* x);
float vec_dot_iq4_nl_q8_0(int64_t n, const void* w, const void* x);
float vec_dot_mxfp4_q8_0(int64_t n, const void* w, const void* x);

float vec_dot_q2_k_q8_k(int64_t n, const void* w, const void* x);
float vec_dot_q3_k_q8_k(int64_t n, const void* w, const void* x);
float vec_dot_q4_k_q8_k(int64_t n, const void* w, const void* x);
float vec_dot_q5_k_q8_k(int64_t n, const void* w, const void* x);
float vec_dot_q6_k_q8_k(int64_t n, const void* w, const void* x);
float vec_dot_iq4_xs_q8_k(int64_t n, const void* w, const void* x);

}  // namespace reference

// Levels of one block, as the dot products use them (exposed for the repacking of the CPU
// backend and for tests). All write `block_size` integers.
namespace reference::levels {
void q2_k(const void* block, int8_t* q /*256: 0..3*/, uint8_t* scales /*16*/, uint8_t* mins /*16*/);
void q3_k(const void* block, int8_t* q /*256: -4..3*/, int8_t* scales /*16: -32..31*/);
void q4_k(const void* block, int8_t* q /*256: 0..15*/, uint8_t* scales /*8*/, uint8_t* mins /*8*/);
void q5_k(const void* block, int8_t* q /*256: 0..31*/, uint8_t* scales /*8*/, uint8_t* mins /*8*/);
void q6_k(const void* block, int8_t* q /*256: -32..31*/, int8_t* scales /*16*/);
void iq4_xs(const void* block, int8_t* q /*256: table values*/, int8_t* scales /*8: -32..31*/);
}  // namespace reference::levels

}  // namespace sinter
