// Template errors carry their line and column; runaway templates stop at a limit instead of
// hanging, exhausting memory or overflowing the stack.
#include <gtest/gtest.h>

#include <string>

#include "chat/jinja/template.h"

namespace sinter::chat::jinja {
namespace {

Error parse_error(const std::string& source) {
  auto parsed = Template::parse(source);
  EXPECT_FALSE(parsed.ok()) << "parsed: " << source;
  return parsed.ok() ? Error(ErrorCode::kInternal, "no error") : parsed.error();
}

Error render_error(const std::string& source, const RenderOptions& options = {},
                   const Variables& variables = {}) {
  auto parsed = Template::parse(source);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message());
  if (!parsed.ok()) return parsed.error();
  auto text = parsed->render(variables, options);
  EXPECT_FALSE(text.ok()) << "rendered: " << (text.ok() ? *text : "");
  return text.ok() ? Error(ErrorCode::kInternal, "no error") : text.error();
}

std::string render(const std::string& source, const Variables& variables = {},
                   const RenderOptions& options = {}) {
  auto parsed = Template::parse(source);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message());
  if (!parsed.ok()) return "";
  auto text = parsed->render(variables, options);
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.error().message());
  return text.ok() ? *text : "";
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

TEST(TemplateErrors, SyntaxErrorsNameLineAndColumn) {
  Error error = parse_error("line one\n{% if x %}\n  {{ 1 + }}\n{% endif %}");
  EXPECT_EQ(error.code(), ErrorCode::kFormat);
  EXPECT_TRUE(starts_with(error.message(), "line 3, column 10: TemplateSyntaxError: unexpected"))
      << error.message();

  error = parse_error("{{ 'ok' }}\n\n    {{ name | no_such_filter }}");
  EXPECT_TRUE(starts_with(error.message(), "line 3, column 15:")) << error.message();
  EXPECT_NE(error.message().find("No filter named 'no_such_filter'"), std::string::npos) << error.message();

  error = parse_error("{% for x in xs %}\n{{ x }}");
  EXPECT_TRUE(starts_with(error.message(), "line 2, column 8:")) << error.message();
  EXPECT_NE(error.message().find("'endfor' or 'else'"), std::string::npos) << error.message();

  error = parse_error("ab\ncd {{ 'unterminated }}");
  EXPECT_TRUE(starts_with(error.message(), "line 2, column 7:")) << error.message();

  error = parse_error("{% if true %}\n{% endfor %}");
  EXPECT_TRUE(
      starts_with(error.message(), "line 2, column 4: TemplateSyntaxError: Encountered unknown tag 'endfor'"))
      << error.message();
}

TEST(TemplateErrors, ColumnsCountCharactersNotBytes) {
  Error error = parse_error("日本語 {{ 1 + }}");
  EXPECT_TRUE(starts_with(error.message(), "line 1, column 12:")) << error.message();
}

TEST(TemplateErrors, CarriageReturnsCountAsOneLineBreak) {
  Error error = parse_error("a\r\nb\rc\n{{ ) }}");
  EXPECT_TRUE(starts_with(error.message(), "line 4, column 4:")) << error.message();
}

TEST(TemplateErrors, RuntimeErrorsNameTheFailingExpression) {
  Error error =
      render_error("{% for m in messages %}\n  {{- raise_exception('Roles must alternate') }}\n{% endfor %}",
                   {}, {{"messages", Value::list({Value(1)})}});
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(error.message(), "line 2, column 7: Roles must alternate");

  error = render_error("\n\n{{ 'a' + 1 }}");
  EXPECT_EQ(error.message(), "line 3, column 8: TypeError: can only concatenate str (not \"int\") to str");

  error = render_error("{{ missing.attribute }}");
  EXPECT_EQ(error.message(), "line 1, column 11: UndefinedError: 'missing' is undefined");
}

TEST(TemplateErrors, ErrorsInsideMacrosPointIntoTheMacro) {
  Error error = render_error(
      "{% macro fail(x) %}\n"
      "  {{ x + 'text' }}\n"
      "{% endmacro %}\n"
      "{{ fail(1) }}");
  EXPECT_TRUE(starts_with(error.message(), "line 2, column 8: TypeError")) << error.message();
}

TEST(TemplateErrors, InvalidUtf8IsRejected) {
  Error error = parse_error(std::string("ok \xC3\x28 bad"));
  EXPECT_EQ(error.code(), ErrorCode::kFormat);
  EXPECT_NE(error.message().find("not valid UTF-8 (byte offset 3)"), std::string::npos) << error.message();
}

TEST(TemplateErrors, UnsupportedFeaturesSaySo) {
  Error error = parse_error("{% include 'other.jinja' %}");
  EXPECT_EQ(error.code(), ErrorCode::kUnsupported);
  EXPECT_NE(error.message().find("not supported by sinter: the 'include' tag"), std::string::npos);
  error = parse_error("{{ items | groupby('x') }}");
  EXPECT_EQ(error.code(), ErrorCode::kUnsupported);
  EXPECT_NE(error.message().find("the 'groupby' filter"), std::string::npos);
}

TEST(TemplateLimits, RecursionStopsAtTheCallDepthLimit) {
  RenderOptions options;
  options.limits.max_call_depth = 50;
  Error error = render_error("{% macro down(n) %}{{ down(n + 1) }}{% endmacro %}{{ down(0) }}", options);
  EXPECT_NE(error.message().find("template limit exceeded: macro calls nested deeper than 50 levels"),
            std::string::npos)
      << error.message();
  // The default limit is reached without exhausting the stack.
  error = render_error("{% macro down(n) %}{{ down(n + 1) }}{% endmacro %}{{ down(0) }}");
  EXPECT_NE(error.message().find("template limit exceeded"), std::string::npos) << error.message();
}

TEST(TemplateLimits, LoopIterationsAreBounded) {
  RenderOptions options;
  options.limits.max_loop_iterations = 100000;
  Error error = render_error(
      "{% for a in range(100000) %}{% for b in range(100000) %}{% for c in range(100000) %}"
      "{% endfor %}{% endfor %}{% endfor %}",
      options);
  EXPECT_NE(error.message().find("more than 100000 loop iterations"), std::string::npos) << error.message();
}

TEST(TemplateLimits, OutputAndValueSizesAreBounded) {
  RenderOptions options;
  options.limits.max_output_bytes = 1 << 20;
  Error error = render_error("{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}", options);
  EXPECT_NE(error.message().find("template limit exceeded"), std::string::npos) << error.message();
  error = render_error("{{ 'x' * 1000000000000 }}");
  EXPECT_NE(error.message().find("template limit exceeded"), std::string::npos) << error.message();
  error = render_error("{{ [1, 2] * 1000000000000 }}");
  EXPECT_NE(error.message().find("template limit exceeded"), std::string::npos) << error.message();
}

TEST(TemplateLimits, MemoryHeldAcrossCallsAndNamespacesIsBounded) {
  RenderOptions options;
  options.limits.max_built_bytes = 64 << 20;
  // Each macro level buffers its own 10 MB before recursing: no single value is too big.
  Error error = render_error(
      "{% macro m(n) %}{{ 'x' * 10000000 }}{% if n %}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(100) }}",
      options);
  EXPECT_NE(error.message().find("the render built more than"), std::string::npos) << error.message();
  // Many large strings kept in a namespace.
  error = render_error(
      "{% set ns = namespace(keep=[]) %}{% for i in range(100) %}{% set ns.keep = ns.keep + ['y' * 5000000] "
      "%}"
      "{% endfor %}",
      options);
  EXPECT_NE(error.message().find("the render built more than"), std::string::npos) << error.message();
}

TEST(TemplateLimits, DeeplyNestedSourceIsASyntaxError) {
  for (const std::string& source : {"{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}",
                                    "{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}",
                                    "{{ a" + std::string(20000, '.') + " }}",
                                    [] {
                                      std::string s = "{{ a";
                                      for (int i = 0; i < 5000; ++i) s += ".b";
                                      return s + " }}";
                                    }(),
                                    [] {
                                      std::string s = "{{ 1";
                                      for (int i = 0; i < 5000; ++i) s += " + 1";
                                      return s + " }}";
                                    }(),
                                    [] {
                                      std::string s;
                                      for (int i = 0; i < 3000; ++i) s += "{% if true %}";
                                      return s;
                                    }(),
                                    "{{ " + std::string(5000, '-') + "1 }}",
                                    "{{ " +
                                        [] {
                                          std::string s;
                                          for (int i = 0; i < 3000; ++i) s += "not ";
                                          return s;
                                        }() +
                                        "1 }}"}) {
    auto parsed = Template::parse(source);
    ASSERT_FALSE(parsed.ok()) << source.substr(0, 40);
    EXPECT_EQ(parsed.error().code(), ErrorCode::kFormat) << parsed.error().message();
  }
}

TEST(TemplateLimits, ModeratelyNestedSourceIsFine) {
  EXPECT_EQ(render("{{ " + std::string(40, '(') + "1" + std::string(40, ')') + " }}"), "1");
  std::string chain = "{{ 0";
  for (int i = 0; i < 60; ++i) chain += " + 1";
  EXPECT_EQ(render(chain + " }}"), "60");
}

TEST(TemplateLimits, ValuesCannotNestWithoutBound) {
  Error error = render_error(
      "{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% set ns.x = [ns.x] %}{% endfor %}");
  EXPECT_NE(error.message().find("nested too deeply"), std::string::npos) << error.message();
}

TEST(TemplateValues, ANamespaceHoldingItselfPrintsLikePython) {
  EXPECT_EQ(render("{% set ns = namespace(a=1) %}{% set ns.me = ns %}{{ ns }}"),
            "<Namespace {'a': 1, 'me': <Namespace {...}>}>");
}

TEST(TemplateValues, MutationIsForbiddenUnlessAllowed) {
  Error error = render_error("{% set l = [] %}{{ l.append(1) }}");
  EXPECT_NE(error.message().find("SecurityError: access to attribute 'append' of 'list' object is unsafe."),
            std::string::npos);
  RenderOptions options;
  options.allow_mutation = true;
  EXPECT_EQ(render("{% set l = [1] %}{% set _ = l.append(2) %}{% set _ = l.extend([3, 4]) %}{% set _ = "
                   "l.insert(0, 0) %}"
                   "{{ l.pop() }}{{ l }}{% set d = {} %}{% set _ = d.update({'a': 1}, b=2) %}{{ "
                   "d.setdefault('c', 3) }}"
                   "{{ d }}{{ d.pop('a') }}{{ d }}",
                   {}, options),
            "4[0, 1, 2, 3]3{'a': 1, 'b': 2, 'c': 3}1{'b': 2, 'c': 3}");
  error = render_error("{% set l = [] %}{% set _ = l.append(l) %}", options);
  EXPECT_NE(error.message().find("reference cycle"), std::string::npos) << error.message();
}

TEST(TemplateValues, StrftimeNowUsesTheGivenTime) {
  RenderOptions options;
  options.now = std::chrono::system_clock::time_point(std::chrono::seconds(86400 * 365));
  std::string text = render("{{ strftime_now('%Y') }}", {}, options);
  EXPECT_TRUE(text == "1971" || text == "1970") << text;  // local time zone
}

TEST(TemplateValues, VariablesShadowBuiltins) {
  EXPECT_EQ(render("{{ range }}", {{"range", Value("mine")}}), "mine");
}

}  // namespace
}  // namespace sinter::chat::jinja
