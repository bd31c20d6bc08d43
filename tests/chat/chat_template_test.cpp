// The chat-template API: templates from GGUF metadata (default and named), the ChatML fallback,
// special tokens from the vocabulary, request validation, and the variables a template sees.
#include "chat/chat_template.h"

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "support/test_paths.h"

namespace sinter::chat {
namespace {

Json user_says(const std::string& text) { return Json::array({Json{{"role", "user"}, {"content", text}}}); }

std::string render_ok(const ChatTemplate& chat_template, const ChatRequest& request) {
  auto text = render(chat_template, request);
  EXPECT_TRUE(text.ok()) << text.error().message();
  return text.ok() ? *text : "";
}

Metadata vocabulary_metadata() {
  Metadata metadata;
  metadata.set("tokenizer.ggml.tokens", GgufValue::of_strings({"<unk>", "<s>", "</s>", "hello"}));
  metadata.set("tokenizer.ggml.bos_token_id", GgufValue::of_u32(1));
  metadata.set("tokenizer.ggml.eos_token_id", GgufValue::of_u32(2));
  return metadata;
}

TEST(ChatTemplate, ReadsTheDefaultTemplateFromMetadata) {
  Metadata metadata = vocabulary_metadata();
  metadata.set("tokenizer.chat_template", GgufValue::of_string("{{ bos_token }}[{{ messages[0].content }}]"));
  auto chat_template = ChatTemplate::from_metadata(metadata);
  ASSERT_TRUE(chat_template.ok()) << chat_template.error().message();
  EXPECT_FALSE(chat_template->is_builtin_chatml);
  EXPECT_EQ(chat_template->name, "default");
  ChatRequest request;
  request.messages = user_says("hi");
  ASSERT_TRUE(set_special_tokens(metadata, &request).ok());
  EXPECT_EQ(request.bos_token, "<s>");
  EXPECT_EQ(request.eos_token, "</s>");
  EXPECT_EQ(render_ok(*chat_template, request), "<s>[hi]");
}

TEST(ChatTemplate, NamedTemplatesAreFoundAndListed) {
  Metadata metadata;
  metadata.set("tokenizer.chat_template", GgufValue::of_string("default"));
  metadata.set("tokenizer.chat_template.tool_use", GgufValue::of_string("tools"));
  metadata.set("tokenizer.chat_template.rag", GgufValue::of_string("rag"));
  EXPECT_EQ(chat_template_names(metadata), (std::vector<std::string>{"default", "tool_use", "rag"}));
  auto tool_use = ChatTemplate::from_metadata(metadata, "tool_use");
  ASSERT_TRUE(tool_use.ok());
  EXPECT_EQ(tool_use->name, "tool_use");
  EXPECT_EQ(render_ok(*tool_use, ChatRequest{}), "tools");
  auto missing = ChatTemplate::from_metadata(metadata, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message().find("it has: default, tool_use, rag"), std::string::npos)
      << missing.error().message();
}

TEST(ChatTemplate, AModelWithoutATemplateGetsChatMlAndSaysSo) {
  auto chat_template = ChatTemplate::from_metadata(vocabulary_metadata());
  ASSERT_TRUE(chat_template.ok());
  EXPECT_TRUE(chat_template->is_builtin_chatml);
  EXPECT_EQ(chat_template->name, "chatml");
  ChatRequest request;
  request.messages = Json::parse(R"([{"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "image"}, {"type": "text", "text": "there"}]}])");
  request.add_generation_prompt = true;
  EXPECT_EQ(render_ok(*chat_template, request),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, ReadsTemplatesFromAGgufFile) {
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
  writer.metadata().set("tokenizer.chat_template", GgufValue::of_string("{% for m in messages %}<{{ m.role }}>{% endfor %}"));
  const std::string path = sinter::testing::scratch_dir() + "/template.gguf";
  ASSERT_TRUE(writer.write(path).ok());
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message();
  auto chat_template = ChatTemplate::from_metadata(file->metadata());
  ASSERT_TRUE(chat_template.ok());
  ChatRequest request;
  request.messages = user_says("x");
  EXPECT_EQ(render_ok(*chat_template, request), "<user>");
}

TEST(ChatTemplate, SpecialTokensOutsideTheVocabularyAreAnError) {
  Metadata metadata = vocabulary_metadata();
  metadata.set("tokenizer.ggml.eos_token_id", GgufValue::of_u32(99));
  ChatRequest request;
  Status status = set_special_tokens(metadata, &request);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message().find("tokenizer.ggml.eos_token_id is 99 but the vocabulary has 4 tokens"),
            std::string::npos);
}

TEST(ChatTemplate, TheTemplateSeesWhatHuggingFacePasses) {
  auto chat_template = ChatTemplate::from_source(
      "{{ tools is none }} {{ documents is none }} {{ add_generation_prompt }} {{ bos_token is defined }} "
      "{{ enable_thinking }} {{ messages | length }}");
  ASSERT_TRUE(chat_template.ok());
  ChatRequest request;
  request.messages = user_says("a");
  request.extra_context = {{"enable_thinking", false}};
  EXPECT_EQ(render_ok(*chat_template, request), "True True False False False 1");
  request.tools = Json::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  request.bos_token = "<s>";
  request.add_generation_prompt = true;
  EXPECT_EQ(render_ok(*chat_template, request), "False True True True False 1");
}

TEST(ChatTemplate, ToolSchemasKeepTheirKeyOrder) {
  auto chat_template = ChatTemplate::from_source("{% for t in tools %}{{ t | tojson }}{% endfor %}");
  ASSERT_TRUE(chat_template.ok());
  ChatRequest request;
  request.tools = Json::parse(R"([{"type": "function", "function": {"name": "z", "description": "é",
      "parameters": {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "number"}}}}}])");
  EXPECT_EQ(render_ok(*chat_template, request),
            R"({"type": "function", "function": {"name": "z", "description": "é", "parameters": {"type": "object", )"
            R"("properties": {"b": {"type": "string"}, "a": {"type": "number"}}}}})");
}

TEST(ChatTemplate, MalformedRequestsAreRejectedWithTheField) {
  auto chat_template = ChatTemplate::from_source("{{ messages }}");
  ASSERT_TRUE(chat_template.ok());
  ChatRequest request;
  request.messages = Json::parse(R"([{"role": "user", "content": "ok"}, {"content": "no role"}])");
  auto text = render(*chat_template, request);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message(), "messages[1].role must be a string");
  request.messages = Json::object();
  EXPECT_FALSE(render(*chat_template, request).ok());
  request.messages = user_says("ok");
  request.tools = Json::object();
  EXPECT_FALSE(render(*chat_template, request).ok());
  request.tools = nullptr;
  request.messages = Json::array({Json{{"role", "user"}, {"content", std::string("\xFF\xFE")}}});
  text = render(*chat_template, request);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message().find("messages[0].content: string is not valid UTF-8"), std::string::npos);
}

TEST(ChatTemplate, ErrorsNameTheTemplateAndTheLine) {
  auto broken = ChatTemplate::from_source("{% if %}", "tool_use");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code(), ErrorCode::kFormat);
  EXPECT_EQ(broken.error().message().rfind("chat template 'tool_use': line 1, column 7: TemplateSyntaxError", 0), 0u)
      << broken.error().message();
  auto raising = ChatTemplate::from_source("{% if messages[0].role == 'system' %}\n{{ raise_exception('no system') }}{% endif %}");
  ASSERT_TRUE(raising.ok());
  ChatRequest request;
  request.messages = Json::parse(R"([{"role": "system", "content": "s"}])");
  auto text = render(*raising, request);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message(), "chat template 'default': line 2, column 4: no system");
}

}  // namespace
}  // namespace sinter::chat
