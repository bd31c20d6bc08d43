// Structured output through both APIs of a real `sinter serve` process: Ollama's `format` (a JSON
// schema or "json"), OpenAI's `response_format` (json_schema, json_object) and the `grammar`
// field, streamed and not. Sampling at temperature 0.8 over several seeds: every answer must be
// what was asked for, whatever the (tiny, story-telling) model would rather write.
#include <gtest/gtest.h>

#include "server_process.h"

namespace sinter::testing {
namespace {

class StructuredOutput : public ModelsServerTest {};

// {"count": integer 1..20, "mood": "happy" | "sad", "tags": 1..3 short strings}, count and
// mood required.
const Json kSchema = Json::parse(R"({
  "type": "object",
  "properties": {
    "count": {"type": "integer", "minimum": 1, "maximum": 20},
    "mood": {"enum": ["happy", "sad"]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "minItems": 1, "maxItems": 3}
  },
  "required": ["count", "mood"]
})");

// Checks `text` against kSchema by hand.
void expect_valid(const std::string& text) {
  const Json value = Json::parse(text, nullptr, false);
  ASSERT_FALSE(value.is_discarded()) << "not JSON: " << text;
  ASSERT_TRUE(value.is_object()) << text;
  ASSERT_TRUE(value.contains("count") && value["count"].is_number_integer()) << text;
  EXPECT_GE(value["count"].get<int>(), 1) << text;
  EXPECT_LE(value["count"].get<int>(), 20) << text;
  ASSERT_TRUE(value.contains("mood") && value["mood"].is_string()) << text;
  EXPECT_TRUE(value["mood"] == "happy" || value["mood"] == "sad") << text;
  for (const auto& [key, _] : value.items())
    EXPECT_TRUE(key == "count" || key == "mood" || key == "tags") << text;
  if (value.contains("tags")) {
    ASSERT_TRUE(value["tags"].is_array()) << text;
    EXPECT_GE(value["tags"].size(), 1u);
    EXPECT_LE(value["tags"].size(), 3u);
    for (const Json& tag : value["tags"])
      EXPECT_TRUE(tag.is_string() && tag.get<std::string>().size() <= 8) << text;
  }
}

TEST_F(StructuredOutput, OllamaFormatSchemaAndJson) {
  for (int seed : {1, 2, 3}) {
    const Json options{{"temperature", 0.8}, {"seed", seed}, {"num_predict", 200}};
    const HttpAnswer answer = http_post(*server_, "/api/generate",
                                        Json{{"model", "stories260K"},
                                             {"prompt", "Once upon a time"},
                                             {"format", kSchema},
                                             {"stream", false},
                                             {"options", options}});
    ASSERT_EQ(answer.status, 200) << answer.body;
    expect_valid(answer.json()["response"].get<std::string>());
    EXPECT_EQ(answer.json()["done_reason"], "stop");  // the grammar ended, so did the answer

    // Streamed chat: the pieces add up to a valid object.
    const StreamAnswer streamed =
        http_stream(*server_, "/api/chat",
                    Json{{"model", "stories260K"},
                         {"messages", Json::array({{{"role", "user"}, {"content", "A cat."}}})},
                         {"format", kSchema},
                         {"options", options}},
                    /*sse=*/false);
    ASSERT_EQ(streamed.status, 200) << streamed.error_body;
    std::string text;
    for (const Json& chunk : streamed.objects) text += chunk["message"]["content"].get<std::string>();
    expect_valid(text);

    const HttpAnswer any = http_post(*server_, "/api/generate",
                                     Json{{"model", "stories260K"},
                                          {"prompt", "Once upon a time"},
                                          {"format", "json"},
                                          {"stream", false},
                                          {"options", options}});
    ASSERT_EQ(any.status, 200) << any.body;
    const std::string object = any.json()["response"].get<std::string>();
    if (any.json()["done_reason"] == "stop") {
      const Json parsed = Json::parse(object, nullptr, false);
      EXPECT_TRUE(parsed.is_object()) << object;
    } else {  // cut at num_predict: still the start of an object
      EXPECT_EQ(object.find_first_not_of(" \n\t"), object.find('{')) << object;
    }
  }
}

TEST_F(StructuredOutput, OpenAiResponseFormatAndGrammar) {
  const Json messages = Json::array({{{"role", "user"}, {"content", "Tell me about a dog."}}});
  for (int seed : {4, 5}) {
    const Json format{{"type", "json_schema"},
                      {"json_schema", {{"name", "story"}, {"strict", true}, {"schema", kSchema}}}};
    const HttpAnswer answer = http_post(*server_, "/v1/chat/completions",
                                        Json{{"model", "stories260K"},
                                             {"messages", messages},
                                             {"response_format", format},
                                             {"temperature", 0.8},
                                             {"seed", seed},
                                             {"max_tokens", 200}});
    ASSERT_EQ(answer.status, 200) << answer.body;
    expect_valid(answer.json()["choices"][0]["message"]["content"].get<std::string>());
    EXPECT_EQ(answer.json()["choices"][0]["finish_reason"], "stop");

    const StreamAnswer streamed = http_stream(*server_, "/v1/chat/completions",
                                              Json{{"model", "stories260K"},
                                                   {"messages", messages},
                                                   {"response_format", format},
                                                   {"temperature", 0.8},
                                                   {"seed", seed},
                                                   {"max_tokens", 200},
                                                   {"stream", true}},
                                              /*sse=*/true);
    ASSERT_EQ(streamed.status, 200) << streamed.error_body;
    std::string text;
    for (const Json& chunk : streamed.objects) {
      if (!chunk["choices"].empty() && chunk["choices"][0]["delta"].contains("content"))
        text += chunk["choices"][0]["delta"]["content"].get<std::string>();
    }
    expect_valid(text);

    // llama-server's grammar field on the completions route.
    const HttpAnswer yes_no = http_post(*server_, "/v1/completions",
                                        Json{{"model", "stories260K"},
                                             {"prompt", "Is the sky blue?"},
                                             {"grammar", "root ::= (\"yes\" | \"no\") \".\""},
                                             {"temperature", 0.8},
                                             {"seed", seed},
                                             {"max_tokens", 20}});
    ASSERT_EQ(yes_no.status, 200) << yes_no.body;
    const std::string said = yes_no.json()["choices"][0]["text"].get<std::string>();
    EXPECT_TRUE(said == "yes." || said == "no.") << said;
  }
}

TEST_F(StructuredOutput, BadFormatsAreClearErrors) {
  const HttpAnswer yaml = http_post(*server_, "/api/generate",
                                    Json{{"model", "stories260K"}, {"prompt", "x"}, {"format", "yaml"}});
  EXPECT_EQ(yaml.status, 400);
  EXPECT_NE(yaml.body.find("format must be"), std::string::npos) << yaml.body;
  Json unsupported_body =
      Json::parse(R"({"model": "stories260K", "messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "json_schema", "json_schema": {"schema": {"not": {"type": "string"}}}}})");
  const HttpAnswer unsupported = http_post(*server_, "/v1/chat/completions", unsupported_body);
  EXPECT_EQ(unsupported.status, 400);
  EXPECT_NE(unsupported.body.find("'not'"), std::string::npos) << unsupported.body;
  const HttpAnswer bad_grammar =
      http_post(*server_, "/v1/completions",
                Json{{"model", "stories260K"}, {"prompt", "x"}, {"grammar", "root ::= ("}});
  EXPECT_EQ(bad_grammar.status, 400);
  EXPECT_NE(bad_grammar.body.find("line 1, column"), std::string::npos) << bad_grammar.body;
  // The server still serves.
  const HttpAnswer after = http_post(
      *server_, "/api/generate",
      Json{{"model", "stories260K"}, {"prompt", "x"}, {"stream", false}, {"options", {{"num_predict", 2}}}});
  EXPECT_EQ(after.status, 200);
}

}  // namespace
}  // namespace sinter::testing
