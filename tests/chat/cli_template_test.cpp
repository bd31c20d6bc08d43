// `sinter template`: prints the rendered prompt, warns when it falls back to ChatML, and fails
// with the template's line and column.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gguf/gguf_writer.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter::chat {
namespace {

using sinter::testing::run_command;
using sinter::testing::shell_quote;

class TemplateCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(sinter::testing::sinter_binary()))
      SINTER_SKIP_WITHOUT_REFERENCE("the sinter tool is not built");
    dir_ = sinter::testing::scratch_dir();
    write(dir_ + "/messages.json",
          R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}])");
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  std::string sinter(const std::string& arguments) const {
    return shell_quote(sinter::testing::sinter_binary()) + " template " + arguments;
  }
  std::string dir_;
};

TEST_F(TemplateCommand, RendersAModelsTemplate) {
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
  writer.metadata().set("tokenizer.ggml.tokens", GgufValue::of_strings({"<s>", "</s>"}));
  writer.metadata().set("tokenizer.ggml.bos_token_id", GgufValue::of_u32(0));
  writer.metadata().set(
      "tokenizer.chat_template",
      GgufValue::of_string("{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]"
                           "{% endfor %}{% if add_generation_prompt %}[assistant:{% endif %}"));
  ASSERT_TRUE(writer.write(dir_ + "/model.gguf").ok());
  auto result = run_command(sinter(shell_quote(dir_ + "/model.gguf") + " --messages " +
                                   shell_quote(dir_ + "/messages.json") + " --add-generation-prompt"));
  EXPECT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(result.out, "<s>[user:Hi][assistant:Yo][assistant:");
}

TEST_F(TemplateCommand, FallsBackToChatMlAndSaysSo) {
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
  ASSERT_TRUE(writer.write(dir_ + "/plain.gguf").ok());
  auto result = run_command(
      sinter(shell_quote(dir_ + "/plain.gguf") + " --messages " + shell_quote(dir_ + "/messages.json")));
  EXPECT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(result.out, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n");
  EXPECT_NE(result.err.find("has no chat template"), std::string::npos) << result.err;
}

TEST_F(TemplateCommand, RendersATemplateFileWithToolsAndVariables) {
  write(dir_ + "/t.jinja",
        "{{ tools | map(attribute='name') | join(',') }}|{{ flag }}|{{ messages | length }}\n");
  write(dir_ + "/tools.json", R"([{"name": "a"}, {"name": "b"}])");
  auto result = run_command(sinter("--template-file " + shell_quote(dir_ + "/t.jinja") + " --messages " +
                                   shell_quote(dir_ + "/messages.json") + " --tools " +
                                   shell_quote(dir_ + "/tools.json") + " --var flag=false"));
  EXPECT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(result.out, "a,b|False|2");  // Jinja drops the template's one trailing newline
}

TEST_F(TemplateCommand, PassesDocumentsToRetrievalTemplates) {
  // Command R's `rag` template walks `documents`; without them it sees None and cannot iterate.
  write(dir_ + "/rag.jinja",
        "{% for d in documents %}[{{ loop.index0 }}:{{ d.title }}]{% endfor %}{{ messages | length }}");
  write(
      dir_ + "/conversation.json",
      R"({"messages": [{"role": "user", "content": "Hi"}], "documents": [{"title": "A"}, {"title": "B"}]})");
  auto result = run_command(sinter("--template-file " + shell_quote(dir_ + "/rag.jinja") + " --messages " +
                                   shell_quote(dir_ + "/conversation.json")));
  EXPECT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(result.out, "[0:A][1:B]1");
  write(dir_ + "/documents.json", R"([{"title": "C"}])");
  result = run_command(sinter("--template-file " + shell_quote(dir_ + "/rag.jinja") + " --messages " +
                              shell_quote(dir_ + "/messages.json") + " --documents " +
                              shell_quote(dir_ + "/documents.json")));
  EXPECT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(result.out, "[0:C]2");
}

TEST_F(TemplateCommand, ReportsTemplateErrorsWithLineAndColumn) {
  write(dir_ + "/bad.jinja", "ok\n{{ raise_exception('roles must alternate') }}");
  auto result = run_command(sinter("--template-file " + shell_quote(dir_ + "/bad.jinja") + " --messages " +
                                   shell_quote(dir_ + "/messages.json")));
  EXPECT_EQ(result.exit_status, 1);
  EXPECT_NE(result.err.find("line 2, column 4: roles must alternate"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace sinter::chat
