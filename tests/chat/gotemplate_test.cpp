// Ollama's Go templates: sinter's renderer against Go's text/template.
//
// data/gotemplate/templates/*.gotmpl holds the templates Ollama ships (Llama 3/3.1/3.2, Qwen 2.5/3,
// Gemma 2/3, Mistral, Phi-3/4, Command R, ChatML) and one template per feature; conversations.json
// the data; expected.json what Go renders for every template × conversation, recorded by
// scripts/record-go-template-references.sh (Go 1.19 running Ollama's template logic). The texts
// and the error messages must be the same, byte for byte.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

#include "chat/gotemplate/ollama_template.h"
#include "chat/gotemplate/parser.h"
#include "chat/gotemplate/strconv.h"
#include "chat_test_support.h"

namespace sinter::chat {
namespace {

using Json = nlohmann::ordered_json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

OllamaMessage message(std::string role, std::string content) {
  OllamaMessage m;
  m.role = std::move(role);
  m.content = std::move(content);
  return m;
}

std::string corpus_path(const std::string& name) { return testing::data_path("gotemplate/" + name); }

// The instant the reference renders currentDate with (noon UTC: the same date in most zones).
std::chrono::system_clock::time_point fixed_now() {
  return std::chrono::system_clock::time_point(std::chrono::seconds(1718452800));  // 2024-06-15T12:00:00Z
}

OllamaTemplateData conversation_data(const Json& c) {
  OllamaTemplateData data;
  auto messages = ollama_messages_from_json(c.value("messages", Json::array()));
  EXPECT_TRUE(messages.ok()) << messages.error().message();
  if (messages.ok()) data.messages = std::move(messages.value());
  data.tools = c.value("tools", Json());
  data.prompt = c.value("prompt", "");
  data.suffix = c.value("suffix", "");
  data.think = c.value("think", false);
  data.think_level = c.value("think_level", "");
  data.is_think_set = c.value("is_think_set", false);
  data.now = fixed_now();
  return data;
}

TEST(GoTemplate, CorpusMatchesGoTextTemplate) {
  Json conversations = Json::parse(read_file(corpus_path("conversations.json")));
  Json expected = Json::parse(read_file(corpus_path("expected.json")));
  ASSERT_GT(expected.size(), 500u);
  std::map<std::string, OllamaTemplateData> data;
  for (const auto& [name, c] : conversations.items()) data[name] = conversation_data(c);

  size_t failures = 0;
  for (const Json& want : expected) {
    const std::string tmpl = want["template"], conversation = want["conversation"];
    std::string source = read_file(corpus_path("templates/" + tmpl + ".gotmpl"));
    auto got = render_ollama_template(source, data.at(conversation));
    std::string where = tmpl + " × " + conversation;
    if (want["ok"].get<bool>()) {
      if (!got.ok()) {
        ADD_FAILURE() << where << ": Go renders, sinter fails: " << got.error().message();
      } else if (*got != want["text"].get<std::string>()) {
        ADD_FAILURE() << where << ":\n--- Go\n"
                      << want["text"].get<std::string>() << "\n--- sinter\n"
                      << *got;
      } else {
        continue;
      }
    } else if (got.ok()) {
      ADD_FAILURE() << where << ": Go fails (" << want["error"].get<std::string>() << "), sinter renders:\n"
                    << *got;
    } else if (got.error().message() != want["error"].get<std::string>()) {
      ADD_FAILURE() << where << ": different errors\n  Go:     " << want["error"].get<std::string>()
                    << "\n  sinter: " << got.error().message();
    } else {
      continue;
    }
    if (++failures >= 25) FAIL() << "stopping after 25 differences";
  }
}

TEST(GoTemplate, ParseErrorsNameTheLine) {
  auto result = OllamaTemplate::parse("first line\nsecond {{ if .System }}\nthird {{ .Foo ) }}");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message(), "template: :3: unexpected \")\" in command");
  auto unclosed = OllamaTemplate::parse("{{ range .Messages }}{{ .Content }}");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_EQ(unclosed.error().message(), "template: :1: unexpected EOF");
}

TEST(GoTemplate, ExecutionErrorsNameLineAndColumn) {
  OllamaTemplateData data;
  data.messages = {message("user", "hi")};
  auto result = render_ollama_template("{{ range .Messages }}\n  {{ .Content.Length }}{{ end }}", data);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(
      result.error().message(),
      "template: :2:13: executing \"\" at <.Content.Length>: can't evaluate field Length in type string");
}

TEST(GoTemplate, LargeOneLineTemplateRendersWithinTheDefaultBudget) {
  // ~400 KB on one line: many variables, lookups and texts. The lexer, the parser and the
  // variable lookup are linear, so this renders (slowly growing lookups would hit the step budget).
  std::string source;
  for (int i = 0; source.size() < 400'000; ++i) source += "{{ $v := .Prompt }}{{ $v }}{{ $.System }}-";
  OllamaTemplateData data;
  data.prompt = "p";
  data.suffix = "s";  // the fill-in-the-middle path: .Prompt is set
  auto result = render_ollama_template(source, data);
  ASSERT_TRUE(result.ok()) << result.error().message();
  size_t repeats = source.size() / std::string("{{ $v := .Prompt }}{{ $v }}{{ $.System }}-").size();
  EXPECT_EQ(result->size(), repeats * std::string("p<no value>-").size());
}

TEST(GoTemplate, LargeNestedTemplateFailsWithAClearError) {
  std::string source;
  while (source.size() < 400'000) source += "(";
  auto parsed = OllamaTemplate::parse("{{ " + source + " }}");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message().find("nesting too deep"), std::string::npos) << parsed.error().message();
}

TEST(GoTemplate, ExplodingLoopsStopAtTheStepBudget) {
  OllamaTemplateData data;
  for (int i = 0; i < 10; ++i) data.messages.push_back(message(i % 2 ? "assistant" : "user", "m"));
  std::string source;
  for (int i = 0; i < 8; ++i) source += "{{ range $.Messages }}";
  source += "x";
  for (int i = 0; i < 8; ++i) source += "{{ end }}";
  RenderLimits limits;
  limits.max_output_bytes = 1u << 30;
  limits.max_steps = 1'000'000;
  auto result = render_ollama_template(source, data, limits);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message(),
            "template: rendering budget exceeded: more than 1000000 evaluation steps");
}

TEST(GoTemplate, OutputBudgetExceededIsAnError) {
  OllamaTemplateData data;
  data.messages = {message("system", std::string(1000, 's')), message("user", "u")};
  RenderLimits limits;
  limits.max_output_bytes = 10'000;
  std::string source =
      "{{ range $.Messages }}{{ range $.Messages }}{{ range $.Messages }}{{ range $.Messages }}"
      "{{ $.System }}{{ end }}{{ end }}{{ end }}{{ end }}";
  auto result = render_ollama_template(source, data, limits);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message(), "template: rendering budget exceeded: output over 10000 bytes");
  limits.max_output_bytes = 16'000;
  EXPECT_TRUE(render_ollama_template(source, data, limits).ok());
}

TEST(GoTemplate, DoublingStringsStopAtTheValueBudget) {
  std::string source = "{{ $s := \"0123456789\" }}";
  for (int i = 0; i < 40; ++i) source += "{{ $s = print $s $s }}";
  source += "{{ len $s }}{{ .Messages }}";
  RenderLimits limits;
  limits.max_value_bytes = 1u << 20;
  auto result = render_ollama_template(source, OllamaTemplateData{}, limits);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message().find("rendering budget exceeded: functions made over"),
            std::string::npos)
      << result.error().message();
}

TEST(GoTemplate, TemplateRecursionIsBounded) {
  auto result = render_ollama_template(
      "{{ define \"loop\" }}{{ template \"loop\" . }}{{ end }}{{ template \"loop\" .Messages }}",
      OllamaTemplateData{});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message().find("exceeded maximum template depth (100)"), std::string::npos)
      << result.error().message();
}

TEST(GoTemplate, ParsedTemplatesRenderManyTimes) {
  auto tmpl = OllamaTemplate::parse("{{ range .Messages }}<{{ .Role }}>{{ .Content }}{{ end }}");
  ASSERT_TRUE(tmpl.ok());
  EXPECT_TRUE(tmpl->uses_messages());
  OllamaTemplateData a, b;
  a.messages = {message("user", "one")};
  b.messages = {message("user", "two"), message("assistant", "three")};
  EXPECT_EQ(tmpl->render(a).value(), "<user>one");
  EXPECT_EQ(tmpl->render(b).value(), "<user>two<assistant>three");
  EXPECT_EQ(tmpl->render(a).value(), "<user>one");
}

TEST(GoTemplate, MessagesFromRequestJson) {
  Json request = Json::parse(R"([{"role": "User", "content": "hi", "images": ["AQID"],
    "tool_calls": [{"function": {"name": "f", "arguments": {"b": 1, "a": "x"}}}]}])");
  auto messages = ollama_messages_from_json(request);
  ASSERT_TRUE(messages.ok());
  ASSERT_EQ(messages->size(), 1u);
  EXPECT_EQ((*messages)[0].role, "user");
  EXPECT_EQ((*messages)[0].images.at(0), std::string("\x01\x02\x03"));
  EXPECT_FALSE(ollama_messages_from_json(Json::parse(R"([{"images": ["not base64!"]}])")).ok());
  EXPECT_FALSE(
      ollama_messages_from_json(Json::parse(R"([{"tool_calls": [{"function": {"arguments": "x"}}]}])")).ok());
}

TEST(GoTemplate, TellsGoTemplatesFromJinja) {
  EXPECT_TRUE(looks_like_go_template("{{ .Prompt }}"));
  EXPECT_TRUE(looks_like_go_template("{{- range .Messages }}<|{{ .Role }}|>{{ end }}"));
  EXPECT_TRUE(looks_like_go_template("[INST] {{ if .System }}{{ .System }}{{ end }}"));
  EXPECT_TRUE(looks_like_go_template("{{/* comment */}}{{ $x := 1 }}"));
  EXPECT_FALSE(looks_like_go_template("{% for message in messages %}{{ message.content }}{% endfor %}"));
  EXPECT_FALSE(looks_like_go_template("{{ bos_token }}{{ messages[0]['content'] }}"));
  EXPECT_FALSE(looks_like_go_template("{# note #}{{ .x }}"));
  EXPECT_FALSE(looks_like_go_template("plain text"));
}

TEST(GoTemplate, UnquoteFollowsGo) {
  std::string out;
  EXPECT_TRUE(gotemplate::go_unquote("\"a\\tb\\u00e9\\x41\\101\"", &out));
  EXPECT_EQ(out,
            "a\tb\xC3\xA9"
            "AA");
  EXPECT_TRUE(gotemplate::go_unquote("`raw\\n\r`", &out));
  EXPECT_EQ(out, "raw\\n");
  EXPECT_FALSE(gotemplate::go_unquote("\"bad\\q\"", &out));
  EXPECT_FALSE(gotemplate::go_unquote("\"a\\'\"", &out));
}

}  // namespace
}  // namespace sinter::chat
