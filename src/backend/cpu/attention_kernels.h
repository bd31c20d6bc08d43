// The inner loop of attention for one group of query heads that share a KV head (grouped-query
// attention), for one token or several tokens of a sequence: the group's keys and values are
// widened once per cell and used by every head of every token of the call.
//
// Each head's result is the same sequence of operations whatever the group size, the tokens it
// shares a call with and wherever the cells are: an online softmax over blocks of kCellBlock
// visible cells in position order (attention_loop.h). Per-ISA versions (generic, AVX2, AVX-512)
// differ only in how q·k and the vector updates are summed in lanes, and in exp (std::exp in the
// generic loop, a polynomial of ~1 ulp in the SIMD ones).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.h"
#include "tensor/dtype.h"

namespace sinter::cpu {

constexpr int32_t kMaxQuerySlots = 64;  // (token, head) pairs one call handles
constexpr int32_t kCellBlock = 32;      // cells per online-softmax step

struct AttentionGroupArgs {
  const float* queries = nullptr;  // [heads][head_dim], F32, of the first token
  int32_t heads = 1;               // query heads in the group (tokens · heads ≤ kMaxQuerySlots)
  int64_t head_dim = 0;            // of queries and keys
  int64_t head_dim_v = 0;          // of values
  DType cache_type = DType::F16;   // F16, BF16 or F32
  const uint8_t* keys = nullptr;   // the cache: row `cell` starts at keys + cell * key_stride
  size_t key_stride = 0;
  const uint8_t* values = nullptr;
  size_t value_stride = 0;
  const int32_t* cells = nullptr;  // visible cells in position order
  int32_t cell_count = 0;
  // Tokens of one sequence that see prefixes of the same cells (a prompt's, under a causal mask)
  // may share a call, so that a block of cells is widened once for all of them: token i's queries
  // are at queries + i·query_stride, its result at out + i·out_stride, and it sees the first
  // cell_counts[i] cells (nullptr: cell_count).
  int32_t tokens = 1;
  int64_t query_stride = 0, out_stride = 0;  // floats
  const int32_t* cell_counts = nullptr;
  float scale = 1.0f;
  float softcap = 0.0f;  // 0: off
  // Optional [heads] logits of the call's query heads that join each softmax's denominator with
  // no value (attention sinks); the same for every token of the call.
  const float* sinks = nullptr;
  // ALiBi (all three or none): the call's heads' slopes [heads], its tokens' positions [tokens]
  // and the position of each of `cells`; each score gets −slope · |p_token − p_cell| added
  // after the scaling and soft-capping.
  const float* alibi_slopes = nullptr;
  const int32_t* query_positions = nullptr;
  const int32_t* cell_positions = nullptr;
  float* out = nullptr;      // [heads][head_dim_v], of the first token
  float* scratch = nullptr;  // attention_scratch_floats(tokens · heads, ...) floats
};

using AttendGroupFn = void (*)(const AttentionGroupArgs& args);

size_t attention_scratch_floats(int64_t slots, int64_t head_dim, int64_t head_dim_v);

// The version for selected_isa_level(), and each level's (null where not built).
AttendGroupFn attend_group_kernel();
AttendGroupFn attend_group_for(IsaLevel level);
void attend_group_generic(const AttentionGroupArgs& args);
AttendGroupFn attend_group_avx2();
AttendGroupFn attend_group_avx512();

}  // namespace sinter::cpu
