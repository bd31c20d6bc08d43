// `--backend` on the tool: the backends' op tables as `inspect --supported` prints them, each
// weight's path in the diagnosis, and the same model on either backend.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::shell_quote;

const auto& sinter = testing::run_sinter;

std::string stories() { return shell_quote(testing::stories_model()); }

nlohmann::json json_of(const testing::CommandResult& result) {
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return nlohmann::json::parse(result.out);
}

// --supported is each backend's own table: every op that computes, every type, the same path.
TEST(CliBackend, SupportedIsEveryBackendsOpTable) {
  const auto supported = json_of(sinter("inspect --supported --json"));
  ASSERT_EQ(supported["backends"].size(), backend_names().size());
  for (const auto& name : backend_names()) {
    SCOPED_TRACE(name);
    auto backend = create_backend(name, BackendOptions{1});
    ASSERT_TRUE(backend);
    const auto& table = supported["backends"][name];
    for (Op op : all_ops()) {
      if (op == Op::kLeaf || op == Op::kView) continue;
      ASSERT_TRUE(table.contains(op_name(op))) << op_name(op);
      for (const auto& t : all_dtypes()) {
        EXPECT_EQ(table[op_name(op)][std::string(t.name)].get<std::string>(),
                  execution_path_name((*backend)->path(op, t.type)))
            << op_name(op) << " " << t.name;
      }
    }
  }
  EXPECT_EQ(supported["backends"]["cpu"]["mul_mat"]["q4_0"], "repacked");
  EXPECT_EQ(supported["backends"]["reference"]["mul_mat"]["q4_0"], "direct");
  EXPECT_EQ(supported["backends"]["cpu"]["rms_norm"]["f32"], "direct");
  EXPECT_EQ(supported["backends"]["cpu"]["rms_norm"]["q4_0"], "unsupported");
}

TEST(CliBackend, TheDiagnosisGivesEachWeightItsOpAndPath) {
  for (const char* name : {"cpu", "reference"}) {
    SCOPED_TRACE(name);
    const auto d = json_of(sinter("inspect " + stories() + " --json --backend " + name));
    EXPECT_EQ(d["backend"], name);
    ASSERT_EQ(d["weights"].size(), 48u);  // stories260K: 5 blocks of 9, embedding, norm, output
    std::map<std::string, int> ops;
    for (const auto& w : d["weights"]) {
      EXPECT_EQ(w["backend"], name) << w["name"];
      EXPECT_NE(w["path"], "unsupported") << w["name"];
      ++ops[w["op"].get<std::string>()];
      const std::map<std::string, std::string> expected_ops = {{"token_embd.weight", "get_rows"},
                                                               {"blk.0.attn_q.weight", "mul_mat"},
                                                               {"blk.0.attn_norm.weight", "mul"}};
      const auto expected = expected_ops.find(w["name"].get<std::string>());
      if (expected != expected_ops.end()) {
        EXPECT_EQ(w["op"], expected->second);
      }
    }
    EXPECT_EQ(ops["mul_mat"], 36);
  }
}

TEST(CliBackend, AnUnknownBackendIsAClearError) {
  for (const std::string& command : {"run -m " + stories() + " -p hi", "probs " + stories() + " 1,2",
                                     "inspect " + stories(), "bench -m " + stories() + " -p 8 -n 0"}) {
    const auto result = sinter(command + " --backend tpu");
    EXPECT_NE(result.exit_status, 0) << command;
    EXPECT_NE(result.err.find("--backend"), std::string::npos) << command << ": " << result.err;
    EXPECT_NE(result.err.find("reference"), std::string::npos) << command << ": " << result.err;
  }
}

TEST(CliBackend, ProbsAgreeAcrossBackends) {
  const std::string ids = "1,403,407,261,145,4,297,5,28,312,262,266";
  const auto cpu = json_of(sinter("probs " + stories() + " " + ids + " 5 --backend cpu"));
  const auto reference = json_of(sinter("probs " + stories() + " " + ids + " 5 --backend reference"));
  ASSERT_EQ(cpu.size(), reference.size());
  for (size_t p = 0; p < cpu.size(); ++p) {
    ASSERT_EQ(cpu[p][0][0], reference[p][0][0]) << "top token at " << p;
    // docs/DESIGN.md's bound for F32 weights (the reference sums in double, the CPU in float).
    EXPECT_NEAR(cpu[p][0][1].get<double>(), reference[p][0][1].get<double>(), 1e-4) << p;
  }
}

}  // namespace
}  // namespace sinter
