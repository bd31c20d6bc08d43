// Cross-backend op tests (in the manner of llama.cpp's test-backend-ops): every case of the table
// (op_cases.h) runs on each backend and on the reference backend, the golden side, with the same
// inputs, and the results must agree within the case's tolerance. Each backend's op table must
// also say what runs: a key type it lists runs, one it does not list is refused by compute().
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "backend/op_cases.h"
#include "backend/op_test_support.h"
#include "tensor/convert.h"

namespace sinter::testing {
namespace {

constexpr const char* kGolden = "reference";

// A Q8_0 product of 512·512·8 multiply-adds computed beside each case on the backends under
// test. The CPU backend runs a pass with fewer than 2e6 of them on one thread (cpu_backend.cpp,
// kSingleThreadFlops), which every case alone is: without it their threaded paths (work split
// over rows, columns, tokens, cells) would go untested.
void add_threading_ballast(CaseInputs& in) {
  static const std::vector<uint8_t> weight = random_rows(DType::Q8_0, 512, 512, 1);
  Tensor* w = in.weight(DType::Q8_0, 512, 512, weight);
  Tensor* x = in.floats("ballast_x", {512, 8, 1, 1}, std::vector<float>(512 * 8, 0.5f));
  in.graph().mark_output(in.graph().mul_mat(w, x));
}

// The compared node's values widened to F32 (it may be a cache of any type).
std::vector<float> read_f32(const Tensor& t) {
  std::vector<uint8_t> bytes(t.bytes());
  tensor_get(t, bytes.data(), 0, bytes.size());
  std::vector<float> values(static_cast<size_t>(t.elements()));
  EXPECT_TRUE(dequantize_rows(t.type, bytes.data(), t.ne[0], t.rows(), values.data()));
  return values;
}

struct CaseRun {
  Status status;
  std::vector<float> values;  // when the run succeeded
};

// One run of a case on a backend (2 threads, besides the golden side's one), inputs from `seed`.
CaseRun run_case(const OpCase& c, DType type, const Dims& dims, const std::string& backend, uint32_t seed) {
  const bool golden = backend == kGolden;
  GraphRunner runner(golden ? 1 : 2, backend);
  CaseInputs in(runner.backend(), runner.graph(), seed);
  Tensor* out = c.build(in, type, dims);
  if (!golden) add_threading_ballast(in);
  CaseRun run;
  if (!in.setup_status()) {
    run.status = in.setup_status();
    return run;
  }
  runner.prepare(out);
  in.write_inputs();
  run.status = runner.backend().compute(runner.graph());
  if (run.status) run.values = read_f32(*out);
  return run;
}

uint32_t run_seed(size_t case_index, DType type, size_t shape_index) {
  return static_cast<uint32_t>((case_index * 64 + static_cast<size_t>(type)) * 16 + shape_index + 1);
}

std::string describe(DType type, const Dims& dims) {
  std::ostringstream s;
  s << dtype_name(type) << " dims";
  for (int64_t d : dims) s << ' ' << d;
  return s.str();
}

// Σ(out − ref)² / Σ ref² over the finite values (llama.cpp's normalized mean squared error);
// non-finite values must match exactly (infinity when they do not, or when ref is all zeros and
// out is not).
double nmse(const std::vector<float>& out, const std::vector<float>& ref) {
  double error = 0.0, norm = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(ref[i]) || !std::isfinite(out[i])) {
      const bool same = (std::isnan(ref[i]) && std::isnan(out[i])) || ref[i] == out[i];
      if (!same) return INFINITY;
      continue;
    }
    const double d = double{out[i]} - double{ref[i]};
    error += d * d;
    norm += double{ref[i]} * double{ref[i]};
  }
  if (norm == 0.0) return error == 0.0 ? 0.0 : INFINITY;
  return error / norm;
}

std::vector<std::string> backends_under_test() {
  std::vector<std::string> names;
  for (const std::string& name : backend_names()) {
    if (name != kGolden) names.push_back(name);
  }
  return names;
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  auto created = create_backend(name, BackendOptions{1});
  EXPECT_TRUE(created) << name;
  return created ? std::move(created).value() : nullptr;
}

// Adding an op to the Op enum (all_ops()) without cases in the table fails here.
TEST(CrossBackendOps, EveryComputingOpHasCases) {
  for (Op op : all_ops()) {
    if (op == Op::kLeaf || op == Op::kView) continue;
    const bool covered =
        std::any_of(op_cases().begin(), op_cases().end(), [op](const OpCase& c) { return c.op == op; });
    EXPECT_TRUE(covered) << op_name(op) << " has no case in tests/backend/op_cases*.cpp";
  }
}

// Names are test names; every key type of a case has a shape it fills.
TEST(CrossBackendOps, CasesAreWellFormed) {
  std::set<std::string> names;
  for (const OpCase& c : op_cases()) {
    EXPECT_TRUE(names.insert(c.name).second) << "two cases named " << c.name;
    EXPECT_FALSE(c.types.empty() || c.shapes.empty() || !c.build) << c.name;
    for (DType type : c.types) {
      const bool runs = std::any_of(c.shapes.begin(), c.shapes.end(),
                                    [type](const Dims& d) { return case_applies(type, d); });
      EXPECT_TRUE(runs) << c.name << " has no shape of whole " << dtype_name(type) << " blocks";
    }
  }
}

TEST(CrossBackendOps, ThereIsAGoldenBackendAndABackendUnderTest) {
  const auto names = backend_names();
  EXPECT_NE(std::find(names.begin(), names.end(), kGolden), names.end());
  EXPECT_FALSE(backends_under_test().empty());
}

class CrossBackendOpCase : public ::testing::TestWithParam<size_t> {
 protected:
  const OpCase& op_case() const { return op_cases()[GetParam()]; }
};

// Every (key type, shape) a backend's table lists for the case's op gives the reference
// backend's values within the case's tolerance.
TEST_P(CrossBackendOpCase, AgreesWithReference) {
  const OpCase& c = op_case();
  const auto golden = make_backend(kGolden);
  ASSERT_TRUE(golden);
  int compared = 0;
  for (const std::string& name : backends_under_test()) {
    const auto backend = make_backend(name);
    ASSERT_TRUE(backend);
    for (DType type : c.types) {
      if (!backend->ops().supports(c.op, type)) continue;  // TableMatchesWhatRuns checks the refusal
      if (!golden->ops().supports(c.op, type)) {
        // Nothing to compare with: the reference backend must list every key type a backend runs.
        ADD_FAILURE() << name << " runs " << op_name(c.op) << " on " << dtype_name(type)
                      << "; the reference backend does not";
        continue;
      }
      double worst = 0.0;
      for (size_t s = 0; s < c.shapes.size(); ++s) {
        const Dims& dims = c.shapes[s];
        if (!case_applies(type, dims)) continue;
        SCOPED_TRACE(name + " " + c.name + " " + describe(type, dims));
        const uint32_t seed = run_seed(GetParam(), type, s);
        const CaseRun expected = run_case(c, type, dims, kGolden, seed);
        ASSERT_TRUE(expected.status) << expected.status.error().message();
        const CaseRun actual = run_case(c, type, dims, name, seed);
        ASSERT_TRUE(actual.status) << actual.status.error().message();
        ASSERT_EQ(actual.values.size(), expected.values.size());
        const double error = nmse(actual.values, expected.values);
        EXPECT_LE(error, c.max_nmse);
        worst = std::max(worst, error);
        ++compared;
      }
      std::ostringstream worst_text;
      worst_text << worst;
      RecordProperty(name + "_" + std::string(dtype_name(type)) + "_worst_nmse", worst_text.str());
    }
  }
  EXPECT_GT(compared, 0) << "no backend runs " << c.name;
}

// What each backend's table (the reference's too) lists for the case's op runs without error, on
// the case's first shape that applies; what it does not list, compute() refuses with an error.
TEST_P(CrossBackendOpCase, TableMatchesWhatRuns) {
  const OpCase& c = op_case();
  for (const std::string& name : backend_names()) {
    const auto backend = make_backend(name);
    ASSERT_TRUE(backend);
    for (DType type : c.types) {
      const auto shape = std::find_if(c.shapes.begin(), c.shapes.end(),
                                      [type](const Dims& d) { return case_applies(type, d); });
      if (shape == c.shapes.end()) continue;  // CasesAreWellFormed reports it
      SCOPED_TRACE(name + " " + c.name + " " + describe(type, *shape));
      const CaseRun run = run_case(c, type, *shape, name,
                                   run_seed(GetParam(), type, static_cast<size_t>(shape - c.shapes.begin())));
      if (backend->ops().supports(c.op, type)) {
        EXPECT_TRUE(run.status) << "listed as " << execution_path_name(backend->path(c.op, type))
                                << " but failed: " << run.status.error().message();
      } else {
        EXPECT_FALSE(run.status) << "not listed, but ran";
      }
    }
  }
}

std::string case_test_name(const ::testing::TestParamInfo<size_t>& param) {
  return op_cases()[param.param].name;
}

INSTANTIATE_TEST_SUITE_P(Table, CrossBackendOpCase, ::testing::Range<size_t>(0, op_cases().size()),
                         case_test_name);

}  // namespace
}  // namespace sinter::testing
