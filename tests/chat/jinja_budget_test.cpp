// A client may send any template (Ollama's "template" field): a long one-line template parses in
// time linear in its size, and rendering stops at the budget of RenderLimits (steps, time,
// nesting, output and value sizes) with a kInvalidArgument error, never a hang, an exhausted
// stack or exhausted memory.
//
// The 400 KB templates below took seconds to minutes each before the lexer computed columns
// incrementally and dicts, scopes and unique() were indexed; they take milliseconds now. The tests
// check what the templates render, not the time.
#include <gtest/gtest.h>

#include <string>

#include "chat/chat_template.h"
#include "chat/jinja/template.h"

namespace sinter::chat::jinja {
namespace {

constexpr size_t kSize = 400'000;

// `piece` repeated until the template is about kSize bytes, between `head` and `tail`.
std::string repeated(const std::string& head, const std::string& piece, const std::string& tail) {
  std::string source = head;
  while (source.size() + piece.size() < kSize) source += piece;
  return source + tail;
}

size_t count_of(const std::string& head, const std::string& piece, const std::string& tail) {
  return (repeated(head, piece, tail).size() - head.size() - tail.size()) / piece.size();
}

Result<std::string> render_source(const std::string& source, const RenderOptions& options = {},
                                  const Variables& variables = {}) {
  SINTER_ASSIGN(Template parsed, Template::parse(source));
  return parsed.render(variables, options);
}

std::string render(const std::string& source, const Variables& variables = {}) {
  auto text = render_source(source, {}, variables);
  EXPECT_TRUE(text.ok()) << text.error().message();
  return text.ok() ? *text : "";
}

// The render fails with kInvalidArgument and a message containing `expected`.
void expect_budget_error(const std::string& source, const RenderOptions& options,
                         const std::string& expected) {
  auto text = render_source(source, options);
  ASSERT_FALSE(text.ok()) << "rendered " << text->size() << " bytes: " << source.substr(0, 80);
  EXPECT_EQ(text.error().code(), ErrorCode::kInvalidArgument) << text.error().message();
  EXPECT_NE(text.error().message().find("template limit exceeded: " + expected), std::string::npos)
      << text.error().message();
}

TEST(TemplateBudget, LongOneLineTemplatesParseAndRender) {
  // Text only, and a long string literal.
  EXPECT_EQ(render(repeated("", "abcdefgh ", "")).size(), count_of("", "abcdefgh ", "") * 9);
  EXPECT_EQ(render("{{ '" + std::string(kSize, 'a') + "' | length }}"), std::to_string(kSize));
  // Many expressions; many expressions after non-ASCII text.
  Variables x = {{"x", Value("hi")}};
  std::string his;
  for (size_t i = 0, n = count_of("", "{{ x }}", ""); i < n; ++i) his += "hi";
  EXPECT_EQ(render(repeated("", "{{ x }}", ""), x), his);
  EXPECT_EQ(render(repeated("", "é{{ 'é' }}", "")).size(), count_of("", "é{{ 'é' }}", "") * 4);
  // A long if/elif chain, and many consecutive if blocks.
  std::string chain = repeated("{% if x == 0 %}a", "{% elif x == 1 %}b", "{% else %}c{% endif %}");
  EXPECT_EQ(render(chain, {{"x", Value(1)}}), "b");
  EXPECT_EQ(render(repeated("", "{% if 1 %}y{% endif %}", "")).size(),
            count_of("", "{% if 1 %}y{% endif %}", ""));
  // One long expression: string concatenation, a list, a dict with integer keys.
  EXPECT_EQ(render(repeated("{{ ('a'", " ~ 'a'", ") | length }}")),
            std::to_string(count_of("{{ ('a'", " ~ 'a'", ") | length }}") + 1));
  EXPECT_EQ(render(repeated("{{ [1", ", 1", "] | length }}")),
            std::to_string(count_of("{{ [1", ", 1", "] | length }}") + 1));
  std::string dict = "{{ {0: 0";
  size_t keys = 1;
  for (; dict.size() < kSize; ++keys) dict += ", " + std::to_string(keys) + ": 0";
  EXPECT_EQ(render(dict + "} | length }}"), std::to_string(keys));
  // Many names set in one scope, and many macros defined.
  std::string sets;
  size_t names = 0;
  for (; sets.size() < kSize; ++names)
    sets += "{% set v" + std::to_string(names) + " = " + std::to_string(names) + " %}";
  EXPECT_EQ(render(sets + "{{ v0 + v" + std::to_string(names - 1) + " }}"), std::to_string(names - 1));
  std::string macros;
  size_t count = 0;
  for (; macros.size() < kSize; ++count)
    macros += "{% macro m" + std::to_string(count) + "() %}" + std::to_string(count) + "{% endmacro %}";
  EXPECT_EQ(render(macros + "{{ m" + std::to_string(count - 1) + "() }}"), std::to_string(count - 1));
}

TEST(TemplateBudget, LongOneLineTemplatesFailClearly) {
  // Nesting too deep for the C++ stack is a syntax error, wherever the template ends.
  for (const std::string& source :
       {"{{ " + std::string(kSize / 2, '(') + "1" + std::string(kSize / 2, ')') + " }}",
        "{{ " + std::string(kSize / 2, '[') + std::string(kSize / 2, ']') + " }}",
        repeated("{{ x", " | trim", " }}"), repeated("{{ 1", " + 1", " }}"),
        repeated("", "{% if x %}", "")}) {
    auto parsed = Template::parse(source);
    ASSERT_FALSE(parsed.ok()) << source.substr(0, 40);
    EXPECT_EQ(parsed.error().code(), ErrorCode::kFormat);
    EXPECT_NE(parsed.error().message().find("nested too deeply"), std::string::npos)
        << parsed.error().message();
  }
  // An error at the end of a long line names its column, in code points.
  auto parsed = Template::parse(repeated("", "é{{ x }}", "{{ x ! }}"));
  ASSERT_FALSE(parsed.ok());
  size_t column = count_of("", "é{{ x }}", "{{ x ! }}") * 8 + 6;
  EXPECT_EQ(parsed.error().message().rfind("line 1, column " + std::to_string(column) + ": ", 0), 0u)
      << parsed.error().message();
}

TEST(TemplateBudget, IndexedOperationsStayLinear) {
  // unique() and integer dict keys compared every item with every other (minutes for these).
  EXPECT_EQ(render("{{ ((range(100000) | list) * 10) | unique | list | length }}"), "100000");
  EXPECT_EQ(render("{{ [1, 1.0, true, 2, (1, 2), (1, 2), 'a', 'a'] | unique | list }}"),
            "[1, 2, (1, 2), 'a']");
  EXPECT_EQ(
      render(
          "{% set d = {1: 'a', 2.0: 'b', (1, 2): 'c'} %}{{ d[1.0] }}{{ d[true] }}{{ d[2] }}{{ d[(1, 2)] }}"),
      "aabc");
}

TEST(TemplateBudget, StepsBoundRecursionThatFansOut) {
  // Two calls per level: 2^40 calls with nesting of only 40 levels, and no loop.
  RenderOptions options;
  options.limits.max_steps = 100'000;
  expect_budget_error(
      "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}", options,
      "more than 100000 evaluation steps");
  // Loops over big values cost their items, even inside one expression.
  expect_budget_error(
      "{% set l = range(100000) | list %}{% for i in range(100) %}{{ 99999 in l }}{% endfor %}", options,
      "more than 100000 evaluation steps");
}

TEST(TemplateBudget, TimeIsBounded) {
  RenderOptions options;
  options.limits.max_time = std::chrono::milliseconds(1);
  expect_budget_error("{% for i in range(100000) %}{% for j in range(40) %}{{ i }}{% endfor %}{% endfor %}",
                      options, "rendering took longer than 1 ms");
}

TEST(TemplateBudget, NestingOfCallsAndExpressionsTogetherIsBounded) {
  // Each of 195 macro levels nests 60 expressions: within the parser's limit and the call depth
  // limit, but together they overflowed an 8 MiB stack.
  std::string nested;
  for (int i = 0; i < 60; ++i) nested += "-(";
  nested += "f(n - 1) | int";
  for (int i = 0; i < 60; ++i) nested += ")";
  expect_budget_error(
      "{% macro f(n) %}{% if n > 0 %}{{ " + nested + " }}{% else %}0{% endif %}{% endmacro %}{{ f(195) }}",
      {}, "evaluation nested deeper than 1000 levels");
}

TEST(TemplateBudget, TextBuiltFromSharedValuesIsBounded) {
  RenderOptions options;
  options.limits.max_output_bytes = 1 << 20;
  // One 100 KB string held 1000 times: its repr, str and JSON would be 100 MB.
  const std::string big = "{% set a = 'x' * 100000 %}";
  expect_budget_error(big + "{{ [a] * 1000 }}", options, "");
  expect_budget_error(big + "{{ ([a] * 1000) | string | length }}", options, "");
  expect_budget_error(big + "{{ {'k': [a] * 1000} | pprint | length }}", options, "");
  expect_budget_error(big + "{{ ([a] * 1000) | tojson | length }}", options, "");
  // Iterating a long string makes a value per character.
  expect_budget_error(big + "{% for c in a %}{% break %}{% endfor %}", options, "iterating a string");
  // `~` and `+` in a loop.
  expect_budget_error(
      "{% set ns = namespace(s='') %}{% for i in range(100000) %}{% set ns.s = ns.s ~ ('y' * 100) %}"
      "{% endfor %}",
      options, "");
  // map() and case-insensitive sort copy every item.
  options.limits.max_built_bytes = 8 << 20;
  expect_budget_error(big + "{{ ([a] * 1000) | map('upper') | list | length }}", options,
                      "the render built more than");
  expect_budget_error(big + "{{ ([a] * 1000) | sort | length }}", options, "the render built more than");
}

TEST(TemplateBudget, ChatTemplatesReportTheBudgetAsInvalidArgument) {
  auto chat_template = ChatTemplate::from_source(
      "{% for i in range(100000) %}{% for m in messages %}{{ m.content }}"
      "{% endfor %}{% endfor %}");
  ASSERT_TRUE(chat_template.ok()) << chat_template.error().message();
  ChatRequest request;
  request.messages = Json::parse(R"([{"role": "user", "content": "hi"}])");
  RenderOptions options;
  options.limits.max_steps = 10'000;
  auto text = render(*chat_template, request, options);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(text.error().message().find("template limit exceeded: more than 10000 evaluation steps"),
            std::string::npos)
      << text.error().message();
  // The defaults leave a real conversation far from the limits.
  request.messages = Json::array();
  for (int i = 0; i < 2000; ++i)
    request.messages.push_back({{"role", i % 2 ? "assistant" : "user"}, {"content", "hello"}});
  auto chatml = ChatTemplate::chatml();
  auto rendered = render(chatml, request);
  ASSERT_TRUE(rendered.ok()) << rendered.error().message();
}

}  // namespace
}  // namespace sinter::chat::jinja
