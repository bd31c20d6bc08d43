// Tools, tool_choice and reasoning fields of both APIs, and tool calls in a conversation's
// history, read without a server.
#include "server/tool_request.h"

#include <gtest/gtest.h>

#include "server/messages.h"

namespace sinter::server {
namespace {

using Json = nlohmann::ordered_json;

const Json kWeatherTool = Json::parse(R"({"type": "function", "function": {"name": "get_weather",
  "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})");

std::string error_of(const Result<ChatToolOptions>& result) {
  return result ? std::string("(no error)") : result.error().message();
}

TEST(ToolRequest, NoToolsByDefault) {
  auto options = read_openai_tool_options(Json::object());
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->tools.is_null());
  EXPECT_FALSE(options->calls_tools());
  EXPECT_EQ(options->choice, ToolChoice::kAuto);
  EXPECT_FALSE(options->think.has_value());
  EXPECT_TRUE(options->separate_reasoning);
  EXPECT_TRUE(options->template_kwargs.empty());
  // An empty array is no tools.
  EXPECT_FALSE(read_openai_tool_options(Json{{"tools", Json::array()}})->has_tools());
}

TEST(ToolRequest, ToolsInTheTemplatesShape) {
  Json no_parameters = {{"type", "function"}, {"function", {{"name", "now"}}}};
  auto options = read_openai_tool_options(Json{{"tools", {kWeatherTool, no_parameters}}});
  ASSERT_TRUE(options.ok()) << options.error().message();
  ASSERT_EQ(options->tools.size(), 2u);
  EXPECT_EQ(options->tools[0], kWeatherTool);
  EXPECT_EQ(options->tools[1]["function"]["parameters"],
            (Json{{"type", "object"}, {"properties", Json::object()}}));
  EXPECT_TRUE(options->calls_tools());
  EXPECT_TRUE(options->parallel_calls);
  // Ollama's clients send the same shape; "type" may be left out.
  Json untyped = {{"function", {{"name", "now"}}}};
  auto ollama = read_ollama_tool_options(Json{{"tools", {untyped}}});
  ASSERT_TRUE(ollama.ok());
  EXPECT_EQ(ollama->tools[0]["type"], "function");
}

TEST(ToolRequest, MalformedToolsNameTheField) {
  EXPECT_EQ(error_of(read_openai_tool_options(Json{{"tools", "x"}})),
            "tools must be an array, got string \"x\"");
  EXPECT_EQ(error_of(read_openai_tool_options(Json{{"tools", {{{"type", "function"}}}}})),
            "tools[0].function is required (an object)");
  EXPECT_EQ(error_of(read_openai_tool_options(
                Json{{"tools", {{{"type", "retrieval"}, {"function", Json::object()}}}}})),
            "tools[0].type must be \"function\", got \"retrieval\"");
  EXPECT_EQ(error_of(read_openai_tool_options(Json{{"tools", {{{"function", {{"name", ""}}}}}}})),
            "tools[0].function.name is required");
  EXPECT_NE(error_of(read_openai_tool_options(
                         Json{{"tools", {{{"function", {{"name", "f"}, {"parameters", "x"}}}}}}}))
                .find("tools[0].function.parameters"),
            std::string::npos);
  EXPECT_EQ(error_of(read_openai_tool_options(Json{{"tools", {kWeatherTool, kWeatherTool}}})),
            "tools[1]: the function name 'get_weather' is given twice");
  EXPECT_EQ(error_of(read_openai_tool_options(Json{{"functions", {kWeatherTool}}})),
            "functions are not supported (use tools)");
}

TEST(ToolRequest, ToolChoice) {
  const Json tools = Json::array({kWeatherTool});
  auto choice = [&](const Json& value) {
    return read_openai_tool_options(Json{{"tools", tools}, {"tool_choice", value}});
  };
  EXPECT_EQ(choice("auto")->choice, ToolChoice::kAuto);
  EXPECT_EQ(choice("required")->choice, ToolChoice::kRequired);
  auto none = choice("none");
  EXPECT_EQ(none->choice, ToolChoice::kNone);
  EXPECT_TRUE(none->has_tools());
  EXPECT_FALSE(none->calls_tools());
  auto named = choice(Json{{"type", "function"}, {"function", {{"name", "get_weather"}}}});
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->choice, ToolChoice::kNamed);
  EXPECT_EQ(named->named_tool, "get_weather");
  EXPECT_NE(error_of(choice("always")).find("tool_choice must be \"none\", \"auto\", \"required\""),
            std::string::npos);
  EXPECT_EQ(error_of(choice(Json{{"type", "function"}, {"function", {{"name", "get_time"}}}})),
            "tool_choice names the function 'get_time', which is not in tools");
  EXPECT_EQ(error_of(choice(Json{{"type", "function"}})), "tool_choice.function.name is required");
  EXPECT_EQ(error_of(read_openai_tool_options(Json{{"tool_choice", "required"}})),
            "tool_choice is \"required\" but the request gives no tools");
  EXPECT_FALSE(
      read_openai_tool_options(Json{{"tools", tools}, {"parallel_tool_calls", false}})->parallel_calls);
  // Ollama takes them too (an extension).
  EXPECT_EQ(read_ollama_tool_options(Json{{"tools", tools}, {"tool_choice", "required"}})->choice,
            ToolChoice::kRequired);
}

TEST(ToolRequest, OpenAiReasoningFields) {
  EXPECT_FALSE(read_openai_tool_options(Json{{"reasoning_format", "none"}})->separate_reasoning);
  EXPECT_TRUE(read_openai_tool_options(Json{{"reasoning_format", "deepseek"}})->separate_reasoning);
  EXPECT_NE(error_of(read_openai_tool_options(Json{{"reasoning_format", "xml"}})).find("reasoning_format"),
            std::string::npos);
  auto kwargs =
      read_openai_tool_options(Json{{"chat_template_kwargs", {{"enable_thinking", false}, {"x", 1}}}});
  ASSERT_TRUE(kwargs.ok());
  EXPECT_EQ(kwargs->think, std::optional<bool>(false));
  EXPECT_EQ(kwargs->template_kwargs, (Json{{"enable_thinking", false}, {"x", 1}}));
  auto top = read_openai_tool_options(Json{{"enable_thinking", true}});
  EXPECT_EQ(top->think, std::optional<bool>(true));
  EXPECT_EQ(top->template_kwargs, (Json{{"enable_thinking", true}}));
  EXPECT_NE(error_of(read_openai_tool_options(Json{{"chat_template_kwargs", {{"enable_thinking", "no"}}}}))
                .find("chat_template_kwargs.enable_thinking must be a boolean"),
            std::string::npos);
}

TEST(ToolRequest, OllamaThink) {
  EXPECT_FALSE(read_ollama_tool_options(Json::object())->think.has_value());
  auto off = read_ollama_tool_options(Json{{"think", false}});
  EXPECT_EQ(off->think, std::optional<bool>(false));
  EXPECT_EQ(off->template_kwargs, (Json{{"enable_thinking", false}}));
  auto level = read_ollama_tool_options(Json{{"think", "high"}});
  EXPECT_EQ(level->think, std::optional<bool>(true));
  EXPECT_EQ(level->think_level, "high");
  EXPECT_EQ(level->template_kwargs["reasoning_effort"], "high");
  EXPECT_EQ(error_of(read_ollama_tool_options(Json{{"think", "max"}})),
            "think must be true, false, \"high\", \"medium\" or \"low\", got string \"max\"");
}

TEST(ToolRequest, GrammarAndToolsAreExclusive) {
  auto tools = read_openai_tool_options(Json{{"tools", {kWeatherTool}}});
  ASSERT_TRUE(tools.ok());
  EXPECT_TRUE(check_grammar_with_tools(*tools, std::nullopt, "format").ok());
  auto both = check_grammar_with_tools(*tools, std::string("root ::= \"a\""), "response_format");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message().find("tools cannot be combined with grammar or response_format"),
            std::string::npos);
  // tool_choice "none": the request's grammar holds.
  auto none = read_openai_tool_options(Json{{"tools", {kWeatherTool}}, {"tool_choice", "none"}});
  EXPECT_TRUE(check_grammar_with_tools(*none, std::string("root ::= \"a\""), "format").ok());
}

TEST(ToolMessages, OpenAiArgumentsBecomeObjects) {
  const Json messages = Json::parse(R"([
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "21 C"}])");
  auto read = read_messages(messages, "messages");
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ((*read)[1]["content"], "");
  EXPECT_EQ((*read)[1]["tool_calls"][0]["function"]["arguments"], (Json{{"city", "Paris"}}));
  EXPECT_EQ((*read)[2]["tool_call_id"], "call_1");
  EXPECT_EQ((*read)[2]["content"], "21 C");
}

TEST(ToolMessages, OllamaCallsAndToolNames) {
  const Json messages = Json::parse(R"([
    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_weather",
      "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "tool_name": "get_weather", "content": "21 C"},
    {"role": "assistant", "content": "Warm.", "thinking": "21 C is warm"}])");
  auto read = read_messages(messages, "messages");
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ((*read)[0]["tool_calls"][0]["type"], "function");
  EXPECT_EQ((*read)[0]["tool_calls"][0]["function"]["arguments"], (Json{{"city", "Paris"}}));
  EXPECT_EQ((*read)[1]["name"], "get_weather");
  EXPECT_EQ((*read)[2]["reasoning_content"], "21 C is warm");
}

// OpenAI's arguments are JSON inside a string: parsed with the same depth bound as a body, so a
// call nested 20,000 deep cannot reach the recursive conversion into template values.
TEST(ToolMessages, ArgumentsInAStringAreDepthBounded) {
  Json messages = Json::array();
  messages.push_back(
      {{"role", "assistant"},
       {"tool_calls",
        {{{"type", "function"},
          {"function",
           {{"name", "f"},
            {"arguments", "{\"a\": " + std::string(20'000, '[') + std::string(20'000, ']') + "}"}}}}}}});
  auto read = read_messages(messages, "messages");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message().find("messages[0].tool_calls[0].function.arguments must be JSON text"),
            std::string::npos)
      << read.error().message();
  EXPECT_NE(read.error().message().find("nests deeper than 128 levels"), std::string::npos);
}

TEST(ToolMessages, MalformedCallsNameTheField) {
  auto bad_arguments = read_messages(Json::parse(R"([{"role": "assistant", "tool_calls": [{"type": "function",
      "function": {"name": "f", "arguments": "{not json"}}]}])"),
                                     "messages");
  ASSERT_FALSE(bad_arguments.ok());
  EXPECT_NE(
      bad_arguments.error().message().find("messages[0].tool_calls[0].function.arguments must be JSON text"),
      std::string::npos);
  auto no_function =
      read_messages(Json::parse(R"([{"role": "assistant", "tool_calls": [{"id": "x"}]}])"), "messages");
  ASSERT_FALSE(no_function.ok());
  EXPECT_NE(no_function.error().message().find("messages[0].tool_calls[0] must be an object"),
            std::string::npos);
  auto not_array = read_messages(Json::parse(R"([{"role": "assistant", "tool_calls": 3}])"), "messages");
  ASSERT_FALSE(not_array.ok());
  EXPECT_NE(not_array.error().message().find("tool_calls must be an array"), std::string::npos);
}

}  // namespace
}  // namespace sinter::server
