// Request parsing without a server: durations, typed fields, sampling options of both APIs.
#include <gtest/gtest.h>

#include "sample/json_schema_grammar.h"
#include "server/durations.h"
#include "server/generation_request.h"
#include "server/json_fields.h"
#include "server/structured_output.h"

namespace sinter::server {
namespace {

using namespace std::chrono_literals;

TEST(Durations, GoDurationsAndSeconds) {
  EXPECT_EQ(*parse_duration("5m"), 5min);
  EXPECT_EQ(*parse_duration("1h30m"), 90min);
  EXPECT_EQ(*parse_duration("300ms"), 300ms);
  EXPECT_EQ(*parse_duration("1.5h"), 90min);
  EXPECT_EQ(*parse_duration("2us"), 2us);
  EXPECT_EQ(*parse_duration("10ns"), 10ns);
  EXPECT_EQ(*parse_duration("300"), 300s);
  EXPECT_EQ(*parse_duration("0"), 0ns);
  EXPECT_LT(*parse_duration("-1"), 0ns);
  EXPECT_LT(*parse_duration("-5m"), 0ns);
  for (const char* bad : {"", "m", "5 m", "5x", "1h30", "--1", "1..5s", "five"}) {
    EXPECT_FALSE(parse_duration(bad)) << bad;
  }
  EXPECT_NE(parse_duration("5 minutes").error().message().find("'5 minutes' is not a duration"),
            std::string::npos);
}

TEST(Durations, KeepAliveFields) {
  EXPECT_EQ(*parse_keep_alive(Json(60), "keep_alive"), 60s);
  EXPECT_EQ(*parse_keep_alive(Json(0.5), "keep_alive"), 500ms);
  EXPECT_LT(*parse_keep_alive(Json(-1), "keep_alive"), 0ns);
  EXPECT_EQ(*parse_keep_alive(Json("10m"), "keep_alive"), 10min);
  EXPECT_EQ(parse_keep_alive(Json(1e300), "keep_alive").value(), KeepAlive::max());
  const auto wrong = parse_keep_alive(Json::array(), "keep_alive");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message().find("keep_alive must be a duration"), std::string::npos);
}

TEST(Durations, Rfc3339) {
  const auto time = std::chrono::system_clock::time_point(std::chrono::seconds(1714564800) + 123456789ns);
  EXPECT_EQ(format_rfc3339(time), "2024-05-01T12:00:00.123456789Z");
}

TEST(JsonFields, TypesAndPaths) {
  const Json object =
      Json::parse(R"({"a": 1, "b": 1.5, "c": "x", "d": true, "e": null, "f": [1], "g": ["p", "q"],
                                     "h": 3.0, "i": 18446744073709551615})");
  JsonFields fields(object, "options.");
  EXPECT_EQ(*fields.integer("a").value(), 1);
  EXPECT_EQ(*fields.integer("h").value(), 3);
  EXPECT_FALSE(fields.integer("e").value().has_value());
  EXPECT_FALSE(fields.integer("missing").value().has_value());
  EXPECT_EQ(fields.integer("b").error().message(), "options.b must be an integer, got number 1.5");
  EXPECT_EQ(fields.integer("c").error().message(), "options.c must be an integer, got string \"x\"");
  EXPECT_EQ(fields.integer("i").error().message(), "options.i is out of range: 18446744073709551615");
  EXPECT_EQ(fields.integer("a", 2, 5).error().message(), "options.a must be between 2 and 5, got 1");
  EXPECT_EQ(*fields.number("b").value(), 1.5);
  EXPECT_EQ(fields.number("d").error().message(), "options.d must be a number, got true");
  EXPECT_EQ(*fields.boolean("d").value(), true);
  EXPECT_EQ(*fields.string("c").value(), "x");
  EXPECT_EQ(fields.string("f").error().message(), "options.f must be a string, got array");
  EXPECT_EQ(*fields.strings("c").value(), std::vector<std::string>{"x"});
  EXPECT_EQ(*fields.strings("g").value(), (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(fields.strings("f").error().message(), "options.f[0] must be a string, got number 1");
  EXPECT_EQ(fields.number_in("b", 0, 1, "in [0, 1]").error().message(),
            "options.b must be in [0, 1], got 1.5");
}

TEST(JsonFields, BodiesAndDumps) {
  EXPECT_TRUE(parse_json_object("{}"));
  EXPECT_TRUE(parse_json_object("", true));
  EXPECT_EQ(parse_json_object("").error().message(), "the request body is empty (expected a JSON object)");
  EXPECT_EQ(parse_json_object("3").error().message(), "the request body must be a JSON object, got number 3");
  EXPECT_NE(parse_json_object("{").error().message().find("the request body is not valid JSON: "),
            std::string::npos);
  // A number beyond double's range is an error, not an exception (found by fuzz_request).
  EXPECT_NE(
      parse_json_object(R"({"seed": 1e99999})").error().message().find("the request body is not valid JSON"),
      std::string::npos);
  // Nesting is bounded in the parser (core/json_parse.h): an unused field 150,000 arrays deep used
  // to crash the server in a later recursive walk (a copy, a dump, a template conversion).
  const std::string deep = std::string(150'000, '[') + std::string(150'000, ']');
  const auto nested = parse_json_object(
      R"({"model": "m", "messages": [{"role": "user", "content": "hi", "x": )" + deep + "}]}");
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().message(), "the request body nests deeper than 128 levels");
  // Generated text may hold bytes that are not UTF-8: they are replaced, never thrown on.
  EXPECT_EQ(dump_json(Json("a\xff"
                           "b")),
            "\"a\xEF\xBF\xBD"
            "b\"");
}

TEST(GenerationRequest, OllamaOptions) {
  const Json options = Json::parse(R"({"temperature": 0.5, "top_k": 10, "top_p": 0.5, "min_p": 0.1, "seed": 7,
      "num_predict": 20, "num_ctx": 256, "repeat_penalty": 1.2, "repeat_last_n": 32, "presence_penalty": 0.5,
      "frequency_penalty": 0.25, "stop": ["\n", "User:"], "typical_p": 0.9, "mirostat": 0, "num_thread": 4})");
  const RequestedGeneration r = *read_ollama_options(&options);
  EXPECT_EQ(*r.temperature, 0.5f);
  EXPECT_EQ(*r.top_k, 10);
  EXPECT_EQ(*r.top_p, 0.5f);
  EXPECT_EQ(*r.min_p, 0.1f);
  EXPECT_EQ(*r.seed, 7u);
  EXPECT_EQ(*r.max_tokens, 20);
  EXPECT_EQ(*r.context_per_sequence, 256);
  EXPECT_EQ(*r.repeat_penalty, 1.2f);
  EXPECT_EQ(*r.repeat_last_n, 32);
  EXPECT_EQ(*r.presence_penalty, 0.5f);
  EXPECT_EQ(*r.frequency_penalty, 0.25f);
  EXPECT_EQ(*r.typical_p, 0.9f);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n", "User:"}));

  // Ollama's conventions: seed -1 is random, num_predict -1 and -2 have no limit.
  const Json unlimited = Json::parse(R"({"seed": -1, "num_predict": -1})");
  const RequestedGeneration u = *read_ollama_options(&unlimited);
  EXPECT_FALSE(u.seed.has_value());
  EXPECT_FALSE(u.max_tokens.has_value());
  EXPECT_FALSE(read_ollama_options(nullptr).value().temperature.has_value());

  const Json bad = Json::parse(R"({"num_predict": -3})");
  EXPECT_EQ(read_ollama_options(&bad).error().message(),
            "options.num_predict must be between -2 and 2147483647, got -3");
}

TEST(GenerationRequest, OpenAiParameters) {
  const Json body = Json::parse(R"({"model": "m", "temperature": 0, "top_p": 0, "max_tokens": 5, "seed": 3,
      "stop": "END", "logit_bias": {"12": -100, "7": 2.5}, "n": 1, "logprobs": false, "user": "me"})");
  const RequestedGeneration r = *read_openai_parameters(body, true);
  EXPECT_EQ(*r.temperature, 0.0f);
  EXPECT_GT(*r.top_p, 0.0f);  // 0 keeps only the most probable token
  EXPECT_EQ(*r.max_tokens, 5);
  EXPECT_EQ(*r.seed, 3u);
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
  ASSERT_EQ(r.logit_bias.size(), 2u);
  const Json completion = Json::parse(R"({"model": "m", "prompt": "x", "echo": true})");
  EXPECT_EQ(read_openai_parameters(completion, false).error().message(), "echo is not supported");
  EXPECT_EQ(read_openai_parameters(Json::parse(R"({"model": "m", "n": 3})"), true)->n, 3);
  EXPECT_NE(read_openai_parameters(Json::parse(R"({"model": "m", "n": 0})"), true)
                .error()
                .message()
                .find("n must be between 1 and 64"),
            std::string::npos);
  // logprobs: a boolean with top_logprobs on chat, the number of alternatives on completions.
  const RequestedGeneration chat_logprobs =
      *read_openai_parameters(Json::parse(R"({"logprobs": true, "top_logprobs": 4})"), true);
  EXPECT_TRUE(chat_logprobs.logprobs);
  EXPECT_EQ(chat_logprobs.top_logprobs, 4);
  EXPECT_EQ(read_openai_parameters(Json::parse(R"({"top_logprobs": 2})"), true).error().message(),
            "top_logprobs needs logprobs: true");
  const RequestedGeneration legacy = *read_openai_parameters(Json::parse(R"({"logprobs": 0})"), false);
  EXPECT_TRUE(legacy.logprobs);
  EXPECT_EQ(legacy.top_logprobs, 0);
  EXPECT_FALSE(read_openai_parameters(Json::parse(R"({"logprobs": 6})"), false));
  RequestedGeneration ollama;
  ASSERT_TRUE(read_ollama_logprobs(Json::parse(R"({"logprobs": true, "top_logprobs": 20})"), ollama));
  EXPECT_TRUE(ollama.logprobs);
  EXPECT_EQ(ollama.top_logprobs, 20);
  EXPECT_FALSE(read_ollama_logprobs(Json::parse(R"({"logprobs": true, "top_logprobs": 21})"), ollama));
  // response_format: an object without a type is text (found by fuzz_request).
  EXPECT_FALSE(read_openai_parameters(Json::parse(R"({"response_format": {}})"), true)->grammar);
  EXPECT_FALSE(
      read_openai_parameters(Json::parse(R"({"response_format": {"type": "text"}})"), true)->grammar);
}

// Structured output becomes a grammar before any model is loaded: the converter's grammars, or
// the request's own; wrong shapes are errors naming the field.
TEST(GenerationRequest, StructuredOutputBecomesAGrammar) {
  const auto openai = [](const char* body, bool chat = true) {
    return read_openai_parameters(Json::parse(body), chat);
  };
  EXPECT_EQ(openai(R"({"response_format": {"type": "json_object"}})")->grammar, json_object_grammar());
  EXPECT_EQ(openai(R"({"response_format": {"type": "json_object"}})", false)->grammar, json_object_grammar());
  const char* schema = R"({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})";
  const std::string expected = *json_schema_text_to_grammar(schema);
  EXPECT_EQ(
      openai(
          (std::string(
               R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "strict": true, "schema": )") +
           schema + "}}}")
              .c_str())
          ->grammar,
      expected);
  EXPECT_EQ(
      openai(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "any"}}})")->grammar,
      json_value_grammar());
  EXPECT_EQ(openai(R"({"grammar": "root ::= \"yes\""})")->grammar, std::string("root ::= \"yes\""));
  EXPECT_EQ(openai(R"({"response_format": {"type": "xml"}})").error().message(),
            "response_format.type 'xml' is not supported (text, json_object, json_schema)");
  EXPECT_EQ(openai(R"({"response_format": {"type": "json_object"}, "grammar": "root ::= \"a\""})")
                .error()
                .message(),
            "give either grammar or response_format, not both");
  EXPECT_NE(openai(R"({"response_format": {"type": "json_schema", "json_schema": {"schema": {"not": {}}}}})")
                .error()
                .message()
                .find("response_format.json_schema.schema: schema keyword 'not'"),
            std::string::npos);

  EXPECT_FALSE(*ollama_format_grammar(nullptr));
  const Json empty = "";
  EXPECT_FALSE(*ollama_format_grammar(&empty));
  const Json json = "json";
  EXPECT_EQ(*ollama_format_grammar(&json), json_object_grammar());
  const Json object_schema = Json::parse(schema);
  EXPECT_EQ(*ollama_format_grammar(&object_schema), expected);
  const Json yaml = "yaml";
  EXPECT_EQ(ollama_format_grammar(&yaml).error().message(),
            "format must be \"json\" or a JSON schema object, got \"yaml\"");
  const Json number = 3;
  EXPECT_FALSE(ollama_format_grammar(&number));
}

}  // namespace
}  // namespace sinter::server

namespace sinter::server {
namespace {

// No option is ignored silently: placement options are accepted (the server's flags decide
// them), sampling options sinter lacks are refused unless off, unknown ones are refused by name.
TEST(OllamaOptions, EveryOptionIsHonouredAcceptedOrRefused) {
  const Json placement =
      Json::parse(R"({"num_gpu": 99, "num_thread": 8, "use_mmap": true, "num_batch": 256})");
  EXPECT_TRUE(read_ollama_options(&placement));
  const Json off = Json::parse(R"({"mirostat": 0, "tfs_z": 1, "mirostat_tau": 5})");
  EXPECT_TRUE(read_ollama_options(&off));
  const Json mirostat = Json::parse(R"({"mirostat": 2})");
  const auto refused = read_ollama_options(&mirostat);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("options.mirostat is not supported"), std::string::npos);
  const Json unknown = Json::parse(R"({"temperature": 0.5, "temprature": 0.5})");
  const auto typo = read_ollama_options(&unknown);
  ASSERT_FALSE(typo);
  EXPECT_EQ(typo.error().message(), "options.temprature is not an option sinter knows");
}

}  // namespace
}  // namespace sinter::server

#include "server/streaming.h"

namespace sinter::server {
namespace {

TEST(OpenAiErrors, ParamAndCodeWhereTheyApply) {
  const auto fields = [](ErrorCode code, const char* message) {
    return openai_error_fields(Error(code, message));
  };
  EXPECT_EQ(fields(ErrorCode::kInvalidArgument, "temperature must be in [0, 2], got 3").param, "temperature");
  EXPECT_EQ(fields(ErrorCode::kInvalidArgument, "temperature must be in [0, 2], got 3").code,
            "invalid_value");
  EXPECT_EQ(fields(ErrorCode::kInvalidArgument, "logit_bias[\"5\"] must be a number").param, "logit_bias");
  EXPECT_EQ(fields(ErrorCode::kInvalidArgument, "functions are not supported (use tools)").code,
            "unsupported_parameter");
  EXPECT_EQ(fields(ErrorCode::kNotFound, "model 'gpt-4' not found").param, "model");
  EXPECT_EQ(fields(ErrorCode::kNotFound, "model 'gpt-4' not found").code, "model_not_found");
  EXPECT_EQ(fields(ErrorCode::kContextFull, "the prompt has 9000 tokens but the context holds 2048").code,
            "context_length_exceeded");
  EXPECT_TRUE(fields(ErrorCode::kInvalidArgument, "the request body is not valid JSON").param.is_null());
  EXPECT_TRUE(fields(ErrorCode::kInternal, "something broke").code.is_null());
}

}  // namespace
}  // namespace sinter::server
