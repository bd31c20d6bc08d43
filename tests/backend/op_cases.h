// The case table of the cross-backend op tests (cross_backend_ops_test.cpp): for every op, the
// small graphs that exercise it, the key types (op_key_type) and shapes they run with, and how
// close a backend's result must be to the reference backend's. A new op, variant or type gets
// its tests from one entry of op_cases().
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace sinter::testing {

// The dimensions of one run of a case; each case says what they mean. dims[0] is always the row
// length of the tensor of the key type, so a run applies to a block type only where it fills
// whole blocks (case_applies).
using Dims = std::vector<int64_t>;
bool case_applies(DType type, const Dims& dims);

// `rows` rows of `n` values of `type` (n a multiple of its block size) made from random values
// in [-scale, scale]: by the type's reference quantizer where it has one, else by writing the
// stored format directly (integers, F64, or the lattice types' random grid indices and signs
// under a small positive scale). Every value decodes to a finite number.
std::vector<uint8_t> random_rows(DType type, int64_t n, int64_t rows, uint32_t seed, float scale = 1.0f);

// What a case's builder makes its graph from, on one backend: inputs of the graph, and persistent
// tensors (weights made the backend's by Backend::load_weight, caches in cache buffers the
// backend allocated). Values are random but seeded in call order, so two backends building the
// same case get the same bytes.
class CaseInputs {
 public:
  CaseInputs(Backend& backend, Graph& graph, uint32_t seed) : backend_(backend), graph_(graph), seed_(seed) {}
  Graph& graph() { return graph_; }

  // An input of `type` (F32 or another type) holding random values in [-scale, scale].
  Tensor* random(const std::string& name, DType type, std::array<int64_t, kMaxDims> ne, float scale = 1.0f);
  // An F32 input holding `values`.
  Tensor* floats(const std::string& name, std::array<int64_t, kMaxDims> ne, const std::vector<float>& values);
  // An I32 input [values.size()] holding `values`.
  Tensor* ints(const std::string& name, const std::vector<int32_t>& values);
  // A weight [n_in, n_out] of `type` holding random values, loaded by the backend (its own copy
  // of the bytes: load_weight may repack them and repoint the tensor).
  Tensor* weight(DType type, int64_t n_in, int64_t n_out, float scale = 1.0f);
  // A weight of these bytes (draws nothing from the seed sequence).
  Tensor* weight(DType type, int64_t n_in, int64_t n_out, std::vector<uint8_t> file_bytes);
  // Expert weights [n_in, n_out, n_expert] of `type`, loaded for mul_mat_id.
  Tensor* experts(DType type, int64_t n_in, int64_t n_out, int64_t n_expert, float scale = 1.0f);
  // A persistent tensor of `type` in a cache buffer of the backend, holding random values.
  Tensor* cache(DType type, std::array<int64_t, kMaxDims> ne, float scale = 1.0f);

  // After the graph is planned and bound: writes the inputs' values.
  void write_inputs();
  // The first failure of load_weight or of a cache allocation, if any.
  const Status& setup_status() const { return setup_status_; }

 private:
  uint32_t next_seed() { return seed_ * 7919u + ++draws_; }

  Backend& backend_;
  Graph& graph_;
  uint32_t seed_;
  uint32_t draws_ = 0;
  Status setup_status_;
  std::vector<std::pair<Tensor*, std::vector<uint8_t>>> pending_;  // inputs and their bytes
  std::deque<Tensor> persistent_;                                  // stable addresses
  std::deque<std::vector<uint8_t>> file_bytes_;                    // the weights' "mapped file"
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

// Tolerances (OpCase::max_nmse). A wrong value among a few thousand moves the NMSE by 1e-8 or more.
constexpr double kExactOps = 1e-14;        // the same operations on both sides: lookups, conversions, +, ×
constexpr double kFloatRounding = 1e-12;   // sums in another order or precision, vectorized exp, sin/cos
constexpr double kFloatFunctions = 1e-10;  // float tanh (GELU); F32 dots against the reference's fma chain

using CaseBuilder = std::function<Tensor*(CaseInputs& in, DType type, const Dims& dims)>;

struct OpCase {
  std::string name;          // "<op>" or "<op>_<variant>": letters, digits and underscores
  Op op;                     // the op under test: runs of a type are those of (op, type) in a table
  std::vector<DType> types;  // key types to run; those a backend's table refuses must fail to run
  std::vector<Dims> shapes;  // each run; dims as the builder reads them
  double max_nmse;           // Σ(out − ref)² / Σ ref² allowed against the reference backend
  CaseBuilder build;         // returns the node whose values are compared (any readable type)
};

// The table (built once).
const std::vector<OpCase>& op_cases();

// Its parts, and the type lists they share.
std::vector<OpCase> lookup_and_arithmetic_cases();  // op_cases.cpp
std::vector<OpCase> cache_and_position_cases();     // op_cases_cache.cpp
std::vector<OpCase> mixture_of_experts_cases();     // op_cases_moe.cpp
std::vector<OpCase> recurrent_cases();              // op_cases_recurrent.cpp
std::vector<OpCase> rwkv_cases();                   // op_cases_rwkv.cpp
std::vector<OpCase> delta_net_cases();              // op_cases_delta_net.cpp
std::vector<DType> every_type();                    // all_dtypes(), for ops keyed on any type
std::vector<DType> float_inputs();                  // F32 and F16 (which no table lists for F32-only ops)

}  // namespace sinter::testing
