// Blocks of value lanes for the kernels whose vectors run across one index of a state held in
// registers while a loop walks the other (simd/rwkv_impl.h, simd/delta_net_impl.h): a block of up
// to B vectors, the last one masked when the lanes are no multiple of the vector width (masked
// lanes load zeros and are never stored).
#pragma once

#include <cstdint>

namespace sinter::cpu::simd {
namespace {

// Loads and stores of vector q of a block at p (p + q · lanes), masked for the last vector of a
// tail block.
template <class V, int B, bool kTail>
struct BlockLanes {
  typename V::Mask tail;
  typename V::F load(const float* p, int q) const {
    if constexpr (kTail) {
      if (q == B - 1) return V::load(p + q * V::kLanes, tail);
    }
    return V::load(p + q * V::kLanes);
  }
  void store(float* p, int q, typename V::F x) const {
    if constexpr (kTail) {
      if (q == B - 1) return V::store(p + q * V::kLanes, tail, x);
    }
    V::store(p + q * V::kLanes, x);
  }
};

// Calls body.template operator()<B, kTail>(first lane, lanes) over blocks covering n lanes: blocks
// of kMaxBlock full vectors, then one block of the vectors left (the last masked if partial).
template <class V, int kMaxBlock, int B = kMaxBlock, class Body>
void rest_block(int64_t first, int64_t left, bool partial, typename V::Mask tail, Body& body) {
  if (left == B) {
    if (partial) {
      body.template operator()<B, true>(first, BlockLanes<V, B, true>{tail});
    } else {
      body.template operator()<B, false>(first, BlockLanes<V, B, false>{tail});
    }
  } else if constexpr (B > 1) {
    rest_block<V, kMaxBlock, B - 1>(first, left, partial, tail, body);
  }
}

template <class V, int kMaxBlock, class Body>
void for_each_block(int64_t n, Body&& body) {
  constexpr int64_t L = V::kLanes;
  const int64_t vectors = (n + L - 1) / L;
  const bool partial = n % L != 0;
  const typename V::Mask tail = V::tail_mask(n - (vectors - 1) * L);
  int64_t q = 0;
  for (; vectors - q > kMaxBlock || (vectors - q == kMaxBlock && !partial); q += kMaxBlock) {
    body.template operator()<kMaxBlock, false>(q * L, BlockLanes<V, kMaxBlock, false>{tail});
  }
  if (q < vectors) rest_block<V, kMaxBlock>(q * L, vectors - q, partial, tail, body);
}

}  // namespace
}  // namespace sinter::cpu::simd
