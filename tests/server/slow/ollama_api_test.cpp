// The Ollama-style API of a real `sinter serve` process, field by field.
#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "server_process.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter::testing {
namespace {

const std::regex kTimestamp(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z)");

class OllamaApi : public ModelsServerTest {};

// The fields of a final /api/generate or /api/chat object.
void expect_final_fields(const Json& final, const std::string& model, int num_predict) {
  EXPECT_EQ(final["model"], model);
  EXPECT_TRUE(std::regex_match(final["created_at"].get<std::string>(), kTimestamp)) << final["created_at"];
  EXPECT_EQ(final["done"], true);
  EXPECT_EQ(final["done_reason"], "length");
  EXPECT_EQ(final["eval_count"], num_predict);
  EXPECT_GT(final["prompt_eval_count"].get<int>(), 0);
  for (const char* key : {"total_duration", "load_duration", "prompt_eval_duration", "eval_duration"}) {
    ASSERT_TRUE(final[key].is_number_integer()) << key;
    EXPECT_GE(final[key].get<int64_t>(), 0) << key;
  }
  EXPECT_GT(final["total_duration"].get<int64_t>(), 0);
  EXPECT_GE(final["total_duration"].get<int64_t>(),
            final["prompt_eval_duration"].get<int64_t>() + final["eval_duration"].get<int64_t>());
}

TEST_F(OllamaApi, GenerateNonStreamingHasEveryField) {
  const HttpAnswer answer = http_post(*server_, "/api/generate",
                                      Json{{"model", "stories260K"},
                                           {"prompt", "Once upon a time"},
                                           {"stream", false},
                                           {"options", {{"temperature", 0}, {"num_predict", 20}}}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.header("Content-Type"), "application/json; charset=utf-8");
  const Json body = answer.json();
  expect_final_fields(body, "stories260K", 20);
  EXPECT_FALSE(body["response"].get<std::string>().empty());
  // context: the prompt tokens (BOS first), then the 20 generated ones.
  const Json tokenized =
      http_post(*server_, "/api/tokenize", Json{{"model", "stories260K"}, {"content", "Once upon a time"}})
          .json();
  ASSERT_TRUE(body["context"].is_array());
  ASSERT_EQ(body["context"].size(), tokenized["tokens"].size() + 20);
  for (size_t i = 0; i < tokenized["tokens"].size(); ++i)
    EXPECT_EQ(body["context"][i], tokenized["tokens"][i]);
  EXPECT_EQ(body["prompt_eval_count"], tokenized["tokens"].size());
  // The generated tokens decode to the response.
  Json generated = Json::array();
  for (size_t i = tokenized["tokens"].size(); i < body["context"].size(); ++i)
    generated.push_back(body["context"][i]);
  const Json decoded =
      http_post(*server_, "/api/detokenize", Json{{"model", "stories260K"}, {"tokens", generated}}).json();
  // (SentencePiece decoding drops the space the first piece starts with; a stream keeps it.)
  const auto strip = [](std::string text) { return text.erase(0, text.find_first_not_of(' ')); };
  EXPECT_EQ(strip(decoded["content"]), strip(body["response"]));
}

TEST_F(OllamaApi, GenerateStreamsNdjsonThatAddsUpToTheWholeAnswer) {
  const Json request{{"model", "stories260K"},
                     {"prompt", "Lily and Tom went to the park"},
                     {"options", {{"temperature", 0.7}, {"seed", 42}, {"num_predict", 32}}}};
  const StreamAnswer stream = http_stream(*server_, "/api/generate", request, false);
  ASSERT_EQ(stream.status, 200) << stream.error_body;
  EXPECT_EQ(stream.content_type, "application/x-ndjson");
  ASSERT_GE(stream.objects.size(), 2u);
  std::string text;
  for (size_t i = 0; i + 1 < stream.objects.size(); ++i) {
    const Json& chunk = stream.objects[i];
    EXPECT_EQ(chunk["model"], "stories260K");
    EXPECT_EQ(chunk["done"], false);
    EXPECT_TRUE(std::regex_match(chunk["created_at"].get<std::string>(), kTimestamp));
    EXPECT_FALSE(chunk.contains("done_reason"));
    text += chunk["response"].get<std::string>();
  }
  const Json& final = stream.objects.back();
  expect_final_fields(final, "stories260K", 32);
  EXPECT_EQ(final["response"], "");
  EXPECT_EQ(final["context"].size(), final["prompt_eval_count"].get<size_t>() + 32);

  // The same request without streaming gives the same text (fixed seed).
  Json whole_request = request;
  whole_request["stream"] = false;
  const Json whole = http_post(*server_, "/api/generate", whole_request).json();
  EXPECT_EQ(whole["response"], text);
  EXPECT_EQ(whole["context"], final["context"]);
}

TEST_F(OllamaApi, GreedyGenerateEqualsSinterRun) {
  for (const std::string model : {"stories260K", "random-tiny"}) {
    for (const std::string prompt : {"Once upon a time", "The little dog was sad because"}) {
      const std::string path = models_ + "/" + model + ".gguf";
      const CommandResult run = run_command(shell_quote(sinter_binary()) + " run -m " + shell_quote(path) +
                                            " -p " + shell_quote(prompt) + " --temp 0 -n 48 -t 1");
      ASSERT_EQ(run.exit_status, 0) << run.err;
      for (const bool raw : {false, true}) {
        const Json body = http_post(*server_, "/api/generate",
                                    Json{{"model", model},
                                         {"prompt", prompt},
                                         {"raw", raw},
                                         {"stream", false},
                                         {"options", {{"temperature", 0}, {"num_predict", 48}}}})
                              .json();
        EXPECT_EQ(body["response"].get<std::string>() + "\n", as_json_text(run.out))
            << model << " / " << prompt << " raw " << raw;
      }
      // Streamed, too.
      const StreamAnswer stream = http_stream(
          *server_, "/api/generate",
          Json{{"model", model}, {"prompt", prompt}, {"options", {{"temperature", 0}, {"num_predict", 48}}}},
          false);
      std::string text;
      for (const Json& chunk : stream.objects) text += chunk["response"].get<std::string>();
      EXPECT_EQ(text + "\n", as_json_text(run.out)) << model << " / " << prompt << " streamed";
    }
  }
}

TEST_F(OllamaApi, ChatRendersTheTemplateAndStreams) {
  // stories260K has no chat template: ChatML is used, so the prompt is exactly this text.
  const std::string chatml =
      "<|im_start|>system\nYou tell stories.<|im_end|>\n<|im_start|>user\nTell me about a cat.<|im_end|>\n"
      "<|im_start|>assistant\n";
  const Json tokens =
      http_post(*server_, "/api/tokenize", Json{{"model", "stories260K"}, {"content", chatml}}).json();
  const Json messages = Json::array({{{"role", "system"}, {"content", "You tell stories."}},
                                     {{"role", "user"}, {"content", "Tell me about a cat."}}});
  const Json options{{"temperature", 0}, {"num_predict", 16}};
  const Json whole =
      http_post(
          *server_, "/api/chat",
          Json{{"model", "stories260K"}, {"messages", messages}, {"stream", false}, {"options", options}})
          .json();
  expect_final_fields(whole, "stories260K", 16);
  EXPECT_EQ(whole["prompt_eval_count"], tokens["tokens"].size());
  EXPECT_EQ(whole["message"]["role"], "assistant");
  EXPECT_FALSE(whole.contains("context"));
  EXPECT_FALSE(whole.contains("response"));
  // The same prompt through /api/generate raw gives the same text.
  const Json raw = http_post(*server_, "/api/generate",
                             Json{{"model", "stories260K"},
                                  {"prompt", chatml},
                                  {"raw", true},
                                  {"stream", false},
                                  {"options", options}})
                       .json();
  EXPECT_EQ(whole["message"]["content"], raw["response"]);

  const StreamAnswer stream =
      http_stream(*server_, "/api/chat",
                  Json{{"model", "stories260K"}, {"messages", messages}, {"options", options}}, false);
  ASSERT_EQ(stream.status, 200);
  std::string text;
  for (size_t i = 0; i + 1 < stream.objects.size(); ++i) {
    EXPECT_EQ(stream.objects[i]["done"], false);
    EXPECT_EQ(stream.objects[i]["message"]["role"], "assistant");
    text += stream.objects[i]["message"]["content"].get<std::string>();
  }
  EXPECT_EQ(text, whole["message"]["content"]);
  expect_final_fields(stream.objects.back(), "stories260K", 16);
  EXPECT_EQ(stream.objects.back()["message"]["content"], "");
  // Content given as text parts reads the same as a string.
  const Json parts =
      Json::array({{{"role", "system"}, {"content", "You tell stories."}},
                   {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "Tell me about a cat."}}}}}});
  const Json from_parts =
      http_post(*server_, "/api/chat",
                Json{{"model", "stories260K"}, {"messages", parts}, {"stream", false}, {"options", options}})
          .json();
  EXPECT_EQ(from_parts["message"]["content"], whole["message"]["content"]);
}

TEST_F(OllamaApi, StopStringsSystemAndContextContinuation) {
  // Greedy text first, then a stop string taken from its middle.
  const Json plain = http_post(*server_, "/api/generate",
                               Json{{"model", "stories260K"},
                                    {"prompt", "Once upon a time"},
                                    {"stream", false},
                                    {"options", {{"temperature", 0}, {"num_predict", 40}}}})
                         .json();
  const std::string text = plain["response"];
  ASSERT_GT(text.size(), 20u);
  const std::string stop = text.substr(10, 4);
  const Json stopped =
      http_post(*server_, "/api/generate",
                Json{{"model", "stories260K"},
                     {"prompt", "Once upon a time"},
                     {"stream", false},
                     {"options", {{"temperature", 0}, {"num_predict", 40}, {"stop", {stop}}}}})
          .json();
  EXPECT_EQ(stopped["done_reason"], "stop");
  EXPECT_EQ(stopped["response"], text.substr(0, text.find(stop)));
  EXPECT_LT(stopped["eval_count"].get<int>(), 40);

  // system text goes in front of the prompt when the model has no template.
  const Json with_system = http_post(*server_, "/api/generate",
                                     Json{{"model", "stories260K"},
                                          {"prompt", "a time"},
                                          {"system", "Once upon"},
                                          {"stream", false},
                                          {"options", {{"temperature", 0}, {"num_predict", 8}}}})
                               .json();
  const Json same = http_post(*server_, "/api/generate",
                              Json{{"model", "stories260K"},
                                   {"prompt", "Once upon\n\na time"},
                                   {"raw", true},
                                   {"stream", false},
                                   {"options", {{"temperature", 0}, {"num_predict", 8}}}})
                        .json();
  EXPECT_EQ(with_system["response"], same["response"]);
  EXPECT_EQ(with_system["context"], same["context"]);

  // A context continues where the last answer ended: the tokens go in as they are.
  const Json first = http_post(*server_, "/api/generate",
                               Json{{"model", "stories260K"},
                                    {"prompt", "Once upon a time"},
                                    {"stream", false},
                                    {"options", {{"temperature", 0}, {"num_predict", 10}}}})
                         .json();
  const Json next = http_post(*server_, "/api/generate",
                              Json{{"model", "stories260K"},
                                   {"prompt", " The end."},
                                   {"context", first["context"]},
                                   {"stream", false},
                                   {"options", {{"temperature", 0}, {"num_predict", 5}}}})
                        .json();
  ASSERT_EQ(next["done"], true) << next;
  const Json tail =
      http_post(*server_, "/api/tokenize",
                Json{{"model", "stories260K"}, {"content", " The end."}, {"add_special", false}})
          .json();
  EXPECT_EQ(next["prompt_eval_count"], first["context"].size() + tail["tokens"].size());
  for (size_t i = 0; i < first["context"].size(); ++i) EXPECT_EQ(next["context"][i], first["context"][i]);
}

TEST_F(OllamaApi, TagsShowVersion) {
  const Json tags = http_get(*server_, "/api/tags").json();
  ASSERT_EQ(tags["models"].size(), 2u) << tags;
  const Json& random = tags["models"][0];
  const Json& stories = tags["models"][1];
  EXPECT_EQ(random["name"], "random-tiny:latest");
  EXPECT_EQ(stories["name"], "stories260K:latest");
  EXPECT_EQ(stories["model"], "stories260K:latest");
  EXPECT_TRUE(std::regex_match(stories["modified_at"].get<std::string>(), kTimestamp));
  EXPECT_EQ(stories["size"], std::filesystem::file_size(stories_model()));
  EXPECT_EQ(stories["digest"].get<std::string>().size(), 64u);
  EXPECT_NE(stories["digest"], random["digest"]);
  const Json& details = stories["details"];
  EXPECT_EQ(details["format"], "gguf");
  EXPECT_EQ(details["family"], "llama");
  EXPECT_EQ(details["families"], Json::array({"llama"}));
  EXPECT_EQ(details["quantization_level"], "F32");
  EXPECT_EQ(details["parent_model"], "");
  EXPECT_TRUE(std::regex_match(details["parameter_size"].get<std::string>(), std::regex(R"(\d+\.\dK)")))
      << details["parameter_size"];

  for (const std::string name : {"stories260K", "stories260K:latest", "stories260K.gguf"}) {
    const HttpAnswer show = http_post(*server_, "/api/show", Json{{"model", name}});
    ASSERT_EQ(show.status, 200) << name << show.body;
    const Json body = show.json();
    EXPECT_EQ(body["details"], details);
    EXPECT_EQ(body["template"], "");  // stories260K has no chat template
    EXPECT_EQ(body["capabilities"], Json::array({"completion"}));
    EXPECT_NE(body["modelfile"].get<std::string>().find("FROM "), std::string::npos);
    const Json& info = body["model_info"];
    EXPECT_EQ(info["general.architecture"], "llama");
    EXPECT_EQ(info["llama.context_length"], 2048);
    EXPECT_EQ(info["tokenizer.ggml.model"], "llama");
    // Arrays only with verbose, [] otherwise (as Ollama: clients iterate them).
    EXPECT_EQ(info["tokenizer.ggml.tokens"], Json::array());
    EXPECT_GT(info["general.parameter_count"].get<int64_t>(), 200000);
  }
  const Json verbose =
      http_post(*server_, "/api/show", Json{{"name", "stories260K"}, {"verbose", true}}).json();
  ASSERT_TRUE(verbose["model_info"]["tokenizer.ggml.tokens"].is_array());
  EXPECT_EQ(verbose["model_info"]["tokenizer.ggml.tokens"].size(), 512u);

  const Json version = http_get(*server_, "/api/version").json();
  EXPECT_TRUE(std::regex_match(version["version"].get<std::string>(), std::regex(R"(\d+\.\d+\.\d+)")));
  // The Ollama API version clients gate features on (0.6 and later), sinter's own beside it.
  EXPECT_GE(std::stoi(version["version"].get<std::string>().substr(2)), 6) << version;
  EXPECT_TRUE(version["sinter_version"].is_string());
  const HttpAnswer root = http_get(*server_, "/");
  EXPECT_EQ(root.status, 200);
  EXPECT_EQ(root.body, "sinter is running");
}

TEST_F(OllamaApi, PsAndKeepAlive) {
  EXPECT_EQ(http_get(*server_, "/api/ps").json()["models"].size(), 0u);
  // Loads on first use; keep_alive "10m" keeps it for ten minutes.
  const auto before = std::chrono::system_clock::now();
  const Json first = http_post(*server_, "/api/generate",
                               Json{{"model", "stories260K"},
                                    {"prompt", "Hi"},
                                    {"stream", false},
                                    {"keep_alive", "10m"},
                                    {"options", {{"num_predict", 2}}}})
                         .json();
  EXPECT_GT(first["load_duration"].get<int64_t>(), 0);
  const Json ps = http_get(*server_, "/api/ps").json();
  ASSERT_EQ(ps["models"].size(), 1u) << ps;
  const Json& loaded = ps["models"][0];
  EXPECT_EQ(loaded["name"], "stories260K:latest");
  EXPECT_EQ(loaded["model"], "stories260K:latest");
  EXPECT_EQ(loaded["details"]["family"], "llama");
  EXPECT_EQ(loaded["context_length"], 2048);
  EXPECT_EQ(loaded["size_vram"], 0);
  EXPECT_GT(loaded["size"].get<int64_t>(), static_cast<int64_t>(std::filesystem::file_size(stories_model())));
  const std::string expires = loaded["expires_at"];
  std::tm tm{};
  ASSERT_NE(strptime(expires.c_str(), "%Y-%m-%dT%H:%M:%S", &tm), nullptr);
  const auto expires_at = std::chrono::system_clock::from_time_t(timegm(&tm));
  EXPECT_GT(expires_at, before + std::chrono::minutes(9));
  EXPECT_LT(expires_at, before + std::chrono::minutes(11));

  // keep_alive 0 unloads right after the request.
  http_post(*server_, "/api/generate",
            Json{{"model", "random-tiny"},
                 {"prompt", "Hi"},
                 {"stream", false},
                 {"keep_alive", 0},
                 {"options", {{"num_predict", 2}}}});
  const Json after = http_get(*server_, "/api/ps").json();
  ASSERT_EQ(after["models"].size(), 1u);
  EXPECT_EQ(after["models"][0]["name"], "stories260K:latest");

  // An empty prompt loads (done_reason "load") or, with keep_alive 0, unloads.
  const Json load =
      http_post(*server_, "/api/generate", Json{{"model", "random-tiny"}, {"keep_alive", -1}}).json();
  EXPECT_EQ(load["done"], true);
  EXPECT_EQ(load["done_reason"], "load");
  EXPECT_EQ(load["response"], "");
  EXPECT_EQ(http_get(*server_, "/api/ps").json()["models"].size(), 2u);
  const Json unload =
      http_post(*server_, "/api/chat",
                Json{{"model", "stories260K"}, {"messages", Json::array()}, {"keep_alive", 0}})
          .json();
  EXPECT_EQ(unload["done_reason"], "unload");
  EXPECT_EQ(unload["message"]["content"], "");
  const Json last = http_get(*server_, "/api/ps").json();
  ASSERT_EQ(last["models"].size(), 1u);
  EXPECT_EQ(last["models"][0]["name"], "random-tiny:latest");

  // A short keep-alive unloads the model shortly after the request.
  http_post(*server_, "/api/generate",
            Json{{"model", "stories260K"},
                 {"prompt", "Hi"},
                 {"stream", false},
                 {"keep_alive", "1s"},
                 {"options", {{"num_predict", 2}}}});
  EXPECT_EQ(http_get(*server_, "/api/ps").json()["models"].size(), 2u);
  bool unloaded = false;
  for (int i = 0; i < 100 && !unloaded; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    unloaded = http_get(*server_, "/api/ps").json()["models"].size() == 1u;
  }
  EXPECT_TRUE(unloaded);
}

// A request's num_ctx applies to that request: the model is reloaded for it when idle, and
// returns to the server's default for the next request that asks for none (the OpenAI routes
// cannot ask); a refused request changes nothing for the others.
TEST_F(OllamaApi, NumCtxAppliesToItsRequestOnly) {
  const Json options{{"num_predict", 2}, {"num_ctx", 128}};
  http_post(*server_, "/api/generate",
            Json{{"model", "stories260K"}, {"prompt", "Hi"}, {"stream", false}, {"options", options}});
  EXPECT_EQ(http_get(*server_, "/api/ps").json()["models"][0]["context_length"], 128);
  // A prompt beyond 128 tokens is over that request's context.
  std::string longer;
  for (int i = 0; i < 60; ++i) longer += "the cat sat. ";
  const HttpAnswer over =
      http_post(*server_, "/api/generate",
                Json{{"model", "stories260K"}, {"prompt", longer}, {"stream", false}, {"options", options}});
  EXPECT_EQ(over.status, 400);
  EXPECT_NE(over.json()["error"].get<std::string>().find("context"), std::string::npos) << over.body;
  // The same prompt without num_ctx, and through the OpenAI route, gets the default context.
  const HttpAnswer plain = http_post(*server_, "/api/generate",
                                     Json{{"model", "stories260K"},
                                          {"prompt", longer},
                                          {"stream", false},
                                          {"options", {{"num_predict", 2}}}});
  EXPECT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(http_get(*server_, "/api/ps").json()["models"][0]["context_length"], 2048);
  http_post(*server_, "/api/generate",
            Json{{"model", "stories260K"}, {"prompt", "Hi"}, {"stream", false}, {"options", options}});
  const HttpAnswer openai = http_post(*server_, "/v1/completions",
                                      Json{{"model", "stories260K"}, {"prompt", longer}, {"max_tokens", 2}});
  EXPECT_EQ(openai.status, 200) << openai.body;
  // A larger num_ctx is capped at the training context.
  http_post(*server_, "/api/generate",
            Json{{"model", "stories260K"},
                 {"prompt", "Hi"},
                 {"stream", false},
                 {"options", {{"num_predict", 2}, {"num_ctx", 100000}}}});
  EXPECT_EQ(http_get(*server_, "/api/ps").json()["models"][0]["context_length"], 2048);
}

}  // namespace
}  // namespace sinter::testing

namespace sinter::testing {
namespace {

// A request's `template` in Go's text/template syntax renders as Ollama renders it: the answer
// equals a raw request whose prompt is that rendering.
TEST(OllamaTemplates, GoTemplateInARequest) {
  auto server = ServerProcess::start({"-m", stories_model(), "-t", "1"});
  ASSERT_NE(server, nullptr);
  const Json greedy{{"num_predict", 6}, {"temperature", 0}};
  const Json chat =
      http_post(*server, "/api/chat",
                Json{{"model", "stories260K"},
                     {"stream", false},
                     {"template", "{{- range .Messages }}[{{ .Role }}] {{ .Content }}\n{{ end }}"},
                     {"messages",
                      {{{"role", "user"}, {"content", "Once upon a time"}},
                       {{"role", "user"}, {"content", "there was"}}}},
                     {"options", greedy}})
          .json();
  // Consecutive messages of one role are merged with a blank line, as Ollama does.
  const Json raw = http_post(*server, "/api/generate",
                             Json{{"model", "stories260K"},
                                  {"stream", false},
                                  {"raw", true},
                                  {"prompt", "[user] Once upon a time\n\nthere was\n"},
                                  {"options", greedy}})
                       .json();
  EXPECT_EQ(chat["message"]["content"], raw["response"]) << chat << raw;
  EXPECT_EQ(chat["prompt_eval_count"], raw["prompt_eval_count"]);

  const Json legacy = http_post(*server, "/api/generate",
                                Json{{"model", "stories260K"},
                                     {"stream", false},
                                     {"system", "Lily"},
                                     {"prompt", "was"},
                                     {"template", "{{ if .System }}{{ .System }} {{ end }}{{ .Prompt }}"},
                                     {"options", greedy}})
                          .json();
  const Json legacy_raw = http_post(*server, "/api/generate",
                                    Json{{"model", "stories260K"},
                                         {"stream", false},
                                         {"raw", true},
                                         {"prompt", "Lily was"},
                                         {"options", greedy}})
                              .json();
  EXPECT_EQ(legacy["response"], legacy_raw["response"]) << legacy << legacy_raw;

  const HttpAnswer broken = http_post(
      *server, "/api/generate", Json{{"model", "stories260K"}, {"prompt", "x"}, {"template", "{{ .Prompt "}});
  EXPECT_EQ(broken.status, 400);
  EXPECT_NE(broken.body.find("unclosed action"), std::string::npos) << broken.body;
}

}  // namespace
}  // namespace sinter::testing

namespace sinter::testing {
namespace {

// `sinter serve --backend reference` serves the same greedy tokens as the CPU backend, several
// requests at once (one forward pass for both sequences).
TEST(ServeBackend, TheReferenceBackendServesTheCpusTokens) {
  const Json request{{"model", "stories260K"},
                     {"prompt", "Once upon a time"},
                     {"stream", false},
                     {"options", {{"num_predict", 24}, {"temperature", 0}}}};
  std::vector<Json> contexts;
  for (const char* backend : {"cpu", "reference"}) {
    auto server =
        ServerProcess::start({"-m", stories_model(), "-t", "1", "--parallel", "2", "--backend", backend});
    ASSERT_NE(server, nullptr);
    HttpAnswer first, second;
    std::thread other([&] { second = http_post(*server, "/api/generate", request); });
    first = http_post(*server, "/api/generate", request);
    other.join();
    ASSERT_EQ(first.status, 200) << first.body;
    ASSERT_EQ(second.status, 200) << second.body;
    EXPECT_EQ(first.json()["context"], second.json()["context"]);
    contexts.push_back(first.json()["context"]);
  }
  EXPECT_EQ(contexts[0], contexts[1]);
  EXPECT_EQ(contexts[0].size(), 5u + 24u);  // BOS and 4 prompt tokens, then 24 generated
}

}  // namespace
}  // namespace sinter::testing
