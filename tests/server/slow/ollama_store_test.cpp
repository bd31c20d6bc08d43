// `sinter serve --ollama-models DIR`: the models of an Ollama store served by their Ollama
// names, with their Modelfiles' template, system prompt and parameters; and broken files of a
// --models folder left out of the listings, with the reason when asked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "server/ollama_store_builder.h"
#include "server/sha256.h"
#include "server_process.h"
#include "support/test_paths.h"

namespace sinter::testing {
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr const char* kTemplate = "[SYS]{{ .System }}[/SYS]Q: {{ .Prompt }} A:";
constexpr const char* kPrompt = "Once upon a time";

// The prompt the store model's template makes of kPrompt with `system`.
std::string rendered(const std::string& system) { return "[SYS]" + system + "[/SYS]Q: " + kPrompt + " A:"; }

class OllamaStoreServe : public ::testing::Test {
 protected:
  void SetUp() override {
    // A --models folder (stories260K, a random model) with a broken file beside them.
    models_ = make_models_dir();
    std::ofstream(models_ + "/broken.gguf") << "GGUF but not really";
    store_dir_ = std::filesystem::path(models_).parent_path().string() + "/ollama";
    OllamaStoreBuilder store(store_dir_);
    const OrderedJson weights = store.file_layer("model", stories_model());
    manifest_ = store.manifest(
        "registry.ollama.ai/library/stories/latest",
        OrderedJson::array(
            {weights, store.layer("template", kTemplate), store.layer("system", "Tell stories."),
             store.layer("params", R"({"stop": ["."], "temperature": 0, "num_predict": 40})")}));
    store.manifest("registry.ollama.ai/someone/tale/v1", OrderedJson::array({weights}));
  }
  std::unique_ptr<ServerProcess> start(std::vector<std::string> args) {
    args.insert(args.end(), {"--parallel", "1", "-t", "1"});
    return ServerProcess::start(args);
  }
  // /api/generate without streaming; the answer's body.
  static Json generate(const ServerProcess& server, const Json& request) {
    Json body = request;
    body["stream"] = false;
    const HttpAnswer answer = http_post(server, "/api/generate", body);
    EXPECT_EQ(answer.status, 200) << answer.body;
    return answer.json();
  }
  std::string models_;
  std::string store_dir_;
  std::string manifest_;
};

TEST_F(OllamaStoreServe, ListsStoreModelsByNameAndTagAndLeavesBrokenFilesOut) {
  auto server = start({"--models", models_, "--ollama-models", store_dir_});
  ASSERT_NE(server, nullptr);
  const Json tags = http_get(*server, "/api/tags").json();
  std::map<std::string, Json> by_name;
  for (const Json& model : tags["models"]) by_name[model["name"]] = model;
  for (const char* name : {"stories:latest", "someone/tale:v1", "stories260K:latest", "random-tiny:latest"})
    EXPECT_EQ(by_name.count(name), 1u) << name << " not in " << tags.dump();
  EXPECT_EQ(by_name.count("broken:latest"), 0u) << tags.dump();
  // The digest of a store model is its manifest's, as `ollama list` shows it.
  EXPECT_EQ(by_name["stories:latest"]["digest"], server::sha256_hex(manifest_));
  EXPECT_EQ(by_name["stories:latest"]["details"]["family"], "llama");
  const Json openai = http_get(*server, "/v1/models").json();
  std::vector<std::string> ids;
  for (const Json& model : openai["data"]) ids.push_back(model["id"]);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "someone/tale:v1"), ids.end());
  EXPECT_EQ(std::find(ids.begin(), ids.end(), "broken:latest"), ids.end());

  // Asked for, the broken file explains itself with a 400 (the file's fault, not the server's).
  for (const char* path : {"/api/show", "/api/generate"}) {
    const HttpAnswer answer = http_post(*server, path, Json{{"model", "broken"}, {"prompt", "Hi"}});
    EXPECT_EQ(answer.status, 400) << path << ": " << answer.body;
    const std::string error = answer.json()["error"];
    EXPECT_NE(error.find("model 'broken' cannot be served: "), std::string::npos) << error;
    EXPECT_NE(error.find("broken.gguf"), std::string::npos) << error;
    EXPECT_NE(error.find("GGUF version"), std::string::npos) << error;
  }
  EXPECT_EQ(http_post(*server, "/api/show", Json{{"model", "stories"}}).status, 200);
}

TEST_F(OllamaStoreServe, TemplateSystemPromptAndParametersApply) {
  auto server = start({"--ollama-models", store_dir_});
  ASSERT_NE(server, nullptr);
  // The reference: the rendered prompt sent raw, the Modelfile's stop string overridden.
  const Json raw_options{{"temperature", 0}, {"num_predict", 40}, {"stop", {"<never>"}}};
  const Json raw = generate(
      *server,
      {{"model", "stories"}, {"prompt", rendered("Tell stories.")}, {"raw", true}, {"options", raw_options}});
  const std::string full = raw["response"];
  const size_t stop = full.find('.');
  ASSERT_NE(stop, std::string::npos) << "the reference text has no '.': " << full;
  ASSERT_GT(stop, 0u);
  // By name with and without tag, in full: the template, system prompt and the stop string apply.
  for (const char* name : {"stories", "stories:latest", "registry.ollama.ai/library/stories:latest"}) {
    const Json answer = generate(*server, {{"model", name}, {"prompt", kPrompt}});
    EXPECT_EQ(answer["response"], full.substr(0, stop)) << name;
    EXPECT_EQ(answer["done_reason"], "stop") << name;
    EXPECT_EQ(answer["model"], name);
  }
  // Chat renders the same prompt (the Modelfile's system prompt in front of the user's message).
  const HttpAnswer chat = http_post(
      *server, "/api/chat",
      Json{
          {"model", "stories"}, {"messages", {{{"role", "user"}, {"content", kPrompt}}}}, {"stream", false}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.json()["message"]["content"], full.substr(0, stop));
  // The request's system text replaces the Modelfile's; its options override the parameters.
  const Json own_raw = generate(*server, {{"model", "stories"},
                                          {"prompt", rendered("Be brief.")},
                                          {"raw", true},
                                          {"options", {{"temperature", 0}, {"num_predict", 6}}}});
  const Json own = generate(*server, {{"model", "stories"},
                                      {"prompt", kPrompt},
                                      {"system", "Be brief."},
                                      {"options", {{"num_predict", 6}}}});
  EXPECT_EQ(own["response"], own_raw["response"]);
  EXPECT_EQ(own["eval_count"], own_raw["eval_count"]);
  EXPECT_EQ(own["prompt_eval_count"], own_raw["prompt_eval_count"]);
  // A model without a Modelfile: the same weights, the prompt as it is.
  const Json tale = generate(
      *server,
      {{"model", "someone/tale:v1"}, {"prompt", rendered("Tell stories.")}, {"options", raw_options}});
  EXPECT_EQ(tale["response"], full);
}

TEST_F(OllamaStoreServe, DefaultStoreIsOllamaModels) {
  setenv("OLLAMA_MODELS", store_dir_.c_str(), 1);
  auto server = start({"--ollama-models"});
  unsetenv("OLLAMA_MODELS");
  ASSERT_NE(server, nullptr);
  const Json tags = http_get(*server, "/api/tags").json();
  ASSERT_EQ(tags["models"].size(), 2u) << tags.dump();
  EXPECT_EQ(tags["models"][0]["name"], "someone/tale:v1");
  EXPECT_EQ(tags["models"][1]["name"], "stories:latest");
}

}  // namespace
}  // namespace sinter::testing
