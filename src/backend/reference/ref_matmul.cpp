// Matrix products and row lookups on weights of any dequantizable type.
//
// The product follows the numerics contract of src/tensor/vec_dot.h (docs/NUMERICS.md): each
// activation column is rounded to the weight type's activation format by that format's
// reference quantizer, then every output is the reference dot product of a weight row with a
// rounded column. Types without a reference dot product dequantize each weight row to F32 and
// accumulate fma(w[k], x[k], acc) in order, with the columns rounded to the activation format and
// widened back where the format allows (as the CPU backend does, docs/KERNELS.md).
#include <cassert>
#include <cmath>
#include <vector>

#include "backend/reference/reference_ops.h"
#include "tensor/vec_dot.h"

namespace sinter::reference_backend {
namespace {

// Whether the reference dot product applies to rows of n_in values of this weight type.
bool has_reference_dot(DType weight, int64_t n_in) {
  const DType act = vec_dot_activation_type(weight);
  return reference_vec_dot(weight) != nullptr && n_in % dtype_traits(weight).block_size == 0 &&
         n_in % dtype_traits(act).block_size == 0 && dtype_traits(act).quantize != nullptr;
}

// The columns of X [n_in, m] (m = x.rows(), any strides), each widened to F32, in row order.
std::vector<float> columns_f32(const Tensor& x) {
  const int64_t n_in = x.ne[0];
  std::vector<float> columns(static_cast<size_t>(n_in * x.rows()));
  int64_t c = 0;
  for_each_row(x.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row_f32(x, i1, i2, i3, columns.data() + c * n_in);
    ++c;
  });
  return columns;
}

// Output column c (in X's row order) of dst: dst has X's shape with n_out rows per column.
float* output_column(const Tensor& dst, int64_t c) {
  const int64_t i1 = c % dst.ne[1];
  const int64_t i2 = (c / dst.ne[1]) % dst.ne[2];
  const int64_t i3 = c / (dst.ne[1] * dst.ne[2]);
  return reinterpret_cast<float*>(dst.row(i1, i2, i3));
}

// W's rows dotted with the columns rounded to the activation format, by the reference dot.
void mul_mat_reference_dot(const Tensor& dst, const Tensor& w, const std::vector<float>& columns) {
  const int64_t n_in = w.ne[0], n_out = w.ne[1];
  const int64_t m = static_cast<int64_t>(columns.size()) / n_in;
  const DType act = vec_dot_activation_type(w.type);
  const size_t column_bytes = row_bytes(act, n_in);
  std::vector<uint8_t> rounded(column_bytes * static_cast<size_t>(m));
  for (int64_t c = 0; c < m; ++c) {
    write_row(act, columns.data() + c * n_in, rounded.data() + static_cast<size_t>(c) * column_bytes, n_in);
  }
  const VecDotFn dot = reference_vec_dot(w.type);
  for (int64_t c = 0; c < m; ++c) {
    float* out = output_column(dst, c);
    const uint8_t* x = rounded.data() + static_cast<size_t>(c) * column_bytes;
    for (int64_t r = 0; r < n_out; ++r) out[r] = dot(n_in, w.row(r), x);
  }
}

// W's rows dequantized to F32 and dotted in F32 (an fma chain in order).
void mul_mat_dequantized(const Tensor& dst, const Tensor& w, std::vector<float> columns) {
  const int64_t n_in = w.ne[0], n_out = w.ne[1];
  const int64_t m = static_cast<int64_t>(columns.size()) / n_in;
  // Round the columns to the activation format and back, where it has a quantizer and n_in
  // fills its blocks; otherwise they stay F32.
  const DTypeTraits& act = dtype_traits(vec_dot_activation_type(w.type));
  if (act.type != DType::F32 && act.quantize != nullptr && act.dequantize != nullptr &&
      n_in % act.block_size == 0) {
    std::vector<uint8_t> blocks(row_bytes(act.type, n_in));
    for (int64_t c = 0; c < m; ++c) {
      act.quantize(columns.data() + c * n_in, blocks.data(), n_in);
      act.dequantize(blocks.data(), columns.data() + c * n_in, n_in);
    }
  }
  std::vector<float> weight_row(static_cast<size_t>(n_in));
  for (int64_t r = 0; r < n_out; ++r) {
    read_row_f32(w, r, 0, 0, weight_row.data());
    for (int64_t c = 0; c < m; ++c) {
      const float* x = columns.data() + c * n_in;
      float acc = 0.0f;
      for (int64_t k = 0; k < n_in; ++k) acc = std::fma(weight_row[static_cast<size_t>(k)], x[k], acc);
      output_column(dst, c)[r] = acc;
    }
  }
}

void product(const Tensor& dst, const Tensor& w, std::vector<float> columns) {
  if (has_reference_dot(w.type, w.ne[0])) {
    mul_mat_reference_dot(dst, w, columns);
  } else {
    mul_mat_dequantized(dst, w, std::move(columns));
  }
}

}  // namespace

// dst F32 [n_out, m1, m2, m3] = W [n_in, n_out] · X F32 [n_in, m1, m2, m3].
void mul_mat(const Tensor& node) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  assert(w.ne[0] == x.ne[0] && w.ne[2] == 1 && w.ne[3] == 1);
  product(node, w, columns_f32(x));
}

// dst F32 [n_out, k, T]: column (j, t) = expert ids[j, t] of W [n_in, n_out, n_expert] times
// X[:, j or 0, t], one column at a time as mul_mat computes it.
void mul_mat_id(const Tensor& node) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  const Tensor* ids = node.src[2];  // null: column (j, t) uses matrix j
  const int64_t n_in = w.ne[0], k = node.ne[1];
  std::vector<float> column(static_cast<size_t>(n_in));
  for (int64_t t = 0; t < node.ne[2]; ++t) {
    for (int64_t j = 0; j < k; ++j) {
      const int32_t e = ids != nullptr ? i32_at(*ids, j + k * t) : static_cast<int32_t>(j);
      assert(e >= 0 && e < w.ne[2]);
      Tensor expert = w;  // the expert's matrix [n_in, n_out]
      expert.ne[2] = 1;
      expert.data = w.row(0, e);
      Tensor out = make_persistent("column", DType::F32, {w.ne[1], 1, 1, 1}, node.row(j, t));
      read_row_f32(x, x.ne[1] == 1 ? 0 : j, t, 0, column.data());
      product(out, expert, column);
    }
  }
}

// dst F32 [n, k, B] = rows ids[0..k, b) of table [n, rows, B] (a weight of any dequantizable
// type, or an F32 intermediate).
void get_rows(const Tensor& node) {
  const Tensor& table = *node.src[0];
  const Tensor& ids = *node.src[1];
  for (int64_t b = 0; b < ids.ne[1]; ++b) {
    for (int64_t i = 0; i < ids.ne[0]; ++i) {
      const int32_t id = i32_at(ids, i + ids.ne[0] * b);
      assert(id >= 0 && id < table.ne[1]);  // ids are validated before the graph runs
      read_row_f32(table, id, b, 0, reinterpret_cast<float*>(node.row(i, b)));
    }
  }
}

}  // namespace sinter::reference_backend
