// Prompts from requests, on stories260K (no chat template: ChatML for chat, the text as it is
// for /api/generate) and on a template given with the request.
#include "server/prompt.h"

#include <gtest/gtest.h>

#include "support/test_paths.h"

namespace sinter::server {
namespace {

std::shared_ptr<ServedModel> stories() {
  static std::shared_ptr<ServedModel> model = [] {
    ModelFile file;
    file.name = "stories260K";
    file.path = testing::stories_model();
    ServingOptions options;
    options.parallel = 1;
    options.load.threads = 1;
    auto served = load_served_model(file, options, std::nullopt);
    EXPECT_TRUE(served) << served.error().message();
    return std::move(served).value();
  }();
  return model;
}

TEST(Prompt, ChatMlWhenTheModelHasNoTemplate) {
  const auto model = stories();
  EXPECT_FALSE(model->has_chat_template);
  EXPECT_EQ(model->context_per_sequence, 2048);
  const auto messages =
      read_messages(nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Hi"}])"), "messages");
  ASSERT_TRUE(messages);
  EXPECT_EQ(render_chat(*model, *messages, std::nullopt).value(),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  // /api/generate: the text as it is, the system text in front.
  EXPECT_EQ(render_generate_prompt(*model, "Hi", std::nullopt, std::nullopt).value(), "Hi");
  EXPECT_EQ(render_generate_prompt(*model, "Hi", std::string("Be kind."), std::nullopt).value(),
            "Be kind.\n\nHi");
  // A template given with the request is used instead.
  const std::string source =
      "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}";
  EXPECT_EQ(render_generate_prompt(*model, "Hi", std::string("S"), source).value(),
            "<s>[system] S\n[user] Hi\n");
}

TEST(Prompt, MessageShapes) {
  const auto parts = read_messages(
      nlohmann::ordered_json::parse(
          R"([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                                {"role": "assistant", "content": null}])"),
      "messages");
  ASSERT_TRUE(parts) << parts.error().message();
  EXPECT_EQ((*parts)[0]["content"], "a\nb");
  EXPECT_EQ((*parts)[1]["content"], "");
  const auto image = read_messages(
      nlohmann::ordered_json::parse(R"([{"role": "user", "content": "x", "images": ["aGk="]}])"), "messages");
  EXPECT_EQ(image.error().message(), "messages[0].images: images are not supported");
}

TEST(Prompt, BosIsNeverDoubled) {
  const auto model = stories();
  const auto plain = tokenize_prompt(*model, "Hello");
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->has_bos);
  EXPECT_EQ(plain->tokens.front(), model->tokenizer->bos());
  // A template that writes <s> itself: still one BOS.
  const auto templated = tokenize_prompt(*model, "<s>Hello");
  ASSERT_TRUE(templated);
  EXPECT_EQ(templated->tokens, plain->tokens);
  const auto bare = tokenize_prompt(*model, "Hello", false);
  EXPECT_FALSE(bare->has_bos);
  EXPECT_EQ(bare->tokens.size() + 1, plain->tokens.size());
}

TEST(Prompt, TokenIds) {
  const auto model = stories();
  const auto ids = prompt_from_ids(*model, nlohmann::ordered_json::array({1, 400, 2}), "prompt");
  ASSERT_TRUE(ids);
  EXPECT_TRUE(ids->has_bos);
  EXPECT_EQ(prompt_from_ids(*model, nlohmann::ordered_json::array({1, 512}), "prompt").error().message(),
            "prompt[1]: token 512 is outside the vocabulary [0, 512)");
  EXPECT_EQ(prompt_from_ids(*model, nlohmann::ordered_json::array({"a"}), "prompt").error().message(),
            "prompt[0] must be a token id, got string \"a\"");
}

}  // namespace
}  // namespace sinter::server
