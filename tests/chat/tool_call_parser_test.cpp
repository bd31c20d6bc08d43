// The tool-call corpus (tests/chat/data/tool_calls/<family>.json): replies in each family's
// documented format, parsed whole and streamed in pieces of every size, must give the expected
// content, reasoning and calls; every streamed split must add up to the whole parse.
#include "chat/tools/tool_call_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "chat/tools/streaming_parser.h"
#include "chat_test_support.h"

namespace sinter::chat::tools {
namespace {

using chat::Json;
using chat::testing::data_path;
using chat::testing::read_json;

struct Corpus {
  ToolFormat format;
  Json cases;
};

Corpus load_corpus(const std::string& family_name) {
  Json file = read_json(data_path("tool_calls/" + family_name + ".json"));
  auto family = tool_family_from_name(file["family"].get<std::string>());
  EXPECT_TRUE(family.has_value()) << family_name;
  Corpus corpus{tool_format_for(family.value_or(ToolFamily::kGeneric)), file["cases"]};
  if (file.contains("reasoning")) {
    corpus.format.reasoning_open = file["reasoning"][0].get<std::string>();
    corpus.format.reasoning_close = file["reasoning"][1].get<std::string>();
  }
  if (file.contains("python_tag")) corpus.format.python_tag = file["python_tag"].get<bool>();
  return corpus;
}

ParseOptions options_of(const Json& test_case) {
  ParseOptions options;
  Json given = test_case.value("options", Json::object());
  options.reasoning = given.value("reasoning", true);
  options.reasoning_open_in_prompt = given.value("reasoning_open_in_prompt", false);
  if (given.contains("parameter_types")) {
    for (const auto& [tool, parameters] : given["parameter_types"].items()) {
      for (const auto& [name, types] : parameters.items())
        options.parameter_types[tool][name] = types.get<std::vector<std::string>>();
    }
  }
  return options;
}

// Arguments compare as JSON values where the expectation gives a value, as text otherwise.
void expect_message(const ParsedMessage& got, const Json& expected, const std::string& label) {
  EXPECT_EQ(got.content, expected["content"].get<std::string>()) << label;
  EXPECT_EQ(got.reasoning_content, expected["reasoning_content"].get<std::string>()) << label;
  const Json& calls = expected["tool_calls"];
  ASSERT_EQ(got.tool_calls.size(), calls.size()) << label;
  for (size_t i = 0; i < calls.size(); ++i) {
    const ToolCall& call = got.tool_calls[i];
    EXPECT_EQ(call.name, calls[i]["name"].get<std::string>()) << label;
    EXPECT_EQ(call.id, "call_" + std::to_string(i)) << label;
    EXPECT_EQ(call.complete, calls[i].value("complete", true)) << label;
    if (calls[i].contains("arguments_text")) {
      EXPECT_EQ(call.arguments, calls[i]["arguments_text"].get<std::string>()) << label;
    } else {
      Json arguments = Json::parse(call.arguments, nullptr, false);
      EXPECT_FALSE(arguments.is_discarded()) << label << ": arguments " << call.arguments;
      EXPECT_EQ(arguments, calls[i]["arguments"]) << label;
    }
  }
}

// Feeds `pieces` to a streaming parser and rebuilds the message from its deltas alone.
ParsedMessage stream(const ToolFormat& format, const ParseOptions& options,
                     const std::vector<std::string>& pieces, std::string* why) {
  StreamingParser parser(format, options);
  ParsedMessage rebuilt;
  auto apply = [&](const MessageDelta& delta) {
    rebuilt.content += delta.content;
    rebuilt.reasoning_content += delta.reasoning_content;
    for (const ToolCallDelta& call : delta.tool_calls) {
      if (call.index == rebuilt.tool_calls.size()) {
        if (call.name.empty()) *why += "a call's first delta has no name; ";
        rebuilt.tool_calls.push_back(ToolCall{call.id, call.name, "", false});
      } else if (call.index > rebuilt.tool_calls.size()) {
        *why += "a call delta skips an index; ";
        return;
      } else if (!call.name.empty()) {
        *why += "a call's name was sent twice; ";
      }
      rebuilt.tool_calls[call.index].arguments += call.arguments;
    }
  };
  for (const std::string& piece : pieces) apply(parser.push(piece));
  apply(parser.finish());
  ParsedMessage whole = parser.message();
  for (size_t i = 0; i < rebuilt.tool_calls.size() && i < whole.tool_calls.size(); ++i) {
    rebuilt.tool_calls[i].complete = whole.tool_calls[i].complete;
  }
  return rebuilt;
}

std::vector<std::string> split_every(const std::string& text, size_t size) {
  std::vector<std::string> pieces;
  for (size_t i = 0; i < text.size(); i += size) pieces.push_back(text.substr(i, size));
  return pieces;
}

std::vector<std::string> split_randomly(const std::string& text, std::mt19937& random) {
  std::vector<std::string> pieces;
  std::uniform_int_distribution<size_t> length(1, 12);
  for (size_t i = 0; i < text.size();) {
    size_t n = std::min(length(random), text.size() - i);
    pieces.push_back(text.substr(i, n));
    i += n;
  }
  return pieces;
}

bool is_prefix(const std::string& prefix, const std::string& whole) {
  return whole.compare(0, prefix.size(), prefix) == 0;
}

class ToolCallCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(ToolCallCorpus, ParsesWholeReplies) {
  Corpus corpus = load_corpus(GetParam());
  ASSERT_FALSE(corpus.cases.empty());
  for (const Json& test_case : corpus.cases) {
    std::string label = GetParam() + ": " + test_case["name"].get<std::string>();
    ParsedMessage got =
        parse_reply(corpus.format, test_case["text"].get<std::string>(), options_of(test_case));
    expect_message(got, test_case["expect"], label);
  }
}

TEST_P(ToolCallCorpus, StreamedRepliesAddUpToTheWhole) {
  Corpus corpus = load_corpus(GetParam());
  std::mt19937 random(27);
  for (const Json& test_case : corpus.cases) {
    std::string label = GetParam() + ": " + test_case["name"].get<std::string>();
    std::string text = test_case["text"].get<std::string>();
    ParseOptions options = options_of(test_case);
    ParsedMessage whole = parse_reply(corpus.format, text, options);
    std::vector<std::vector<std::string>> splits;
    for (size_t size : {1, 2, 3, 5, 8, 13}) splits.push_back(split_every(text, size));
    for (size_t cut = 1; cut < text.size(); ++cut) splits.push_back({text.substr(0, cut), text.substr(cut)});
    for (int round = 0; round < 20; ++round) splits.push_back(split_randomly(text, random));
    for (const auto& pieces : splits) {
      std::string why;
      ParsedMessage streamed = stream(corpus.format, options, pieces, &why);
      EXPECT_TRUE(why.empty()) << label << ": " << why;
      if (streamed != whole) {
        ADD_FAILURE() << label << ": streamed in " << pieces.size() << " pieces (first '" << pieces[0]
                      << "') gives content '" << streamed.content << "' reasoning '"
                      << streamed.reasoning_content << "' and " << streamed.tool_calls.size()
                      << " calls, the whole gives '" << whole.content << "' '" << whole.reasoning_content
                      << "' and " << whole.tool_calls.size() << " calls"
                      << (streamed.tool_calls.size() == whole.tool_calls.size() && !whole.tool_calls.empty()
                              ? " (args '" + streamed.tool_calls[0].arguments + "' vs '" +
                                    whole.tool_calls[0].arguments + "')"
                              : "");
        break;
      }
    }
  }
}

// What a partial parse shows of every prefix is a prefix of the whole parse: nothing shown is
// ever taken back.
TEST_P(ToolCallCorpus, PartialParsesNeverTakeBack) {
  Corpus corpus = load_corpus(GetParam());
  for (const Json& test_case : corpus.cases) {
    std::string label = GetParam() + ": " + test_case["name"].get<std::string>();
    std::string text = test_case["text"].get<std::string>();
    ParseOptions options = options_of(test_case);
    ParsedMessage whole = parse_reply(corpus.format, text, options);
    for (size_t cut = 0; cut <= text.size(); ++cut) {
      ParsedMessage part = parse_partial_reply(corpus.format, std::string_view(text).substr(0, cut), options);
      std::string at = label + " at byte " + std::to_string(cut);
      EXPECT_TRUE(is_prefix(part.content, whole.content)) << at << ": content '" << part.content << "'";
      EXPECT_TRUE(is_prefix(part.reasoning_content, whole.reasoning_content))
          << at << ": reasoning '" << part.reasoning_content << "'";
      ASSERT_LE(part.tool_calls.size(), whole.tool_calls.size()) << at;
      for (size_t i = 0; i < part.tool_calls.size(); ++i) {
        EXPECT_EQ(part.tool_calls[i].name, whole.tool_calls[i].name) << at;
        EXPECT_TRUE(is_prefix(part.tool_calls[i].arguments, whole.tool_calls[i].arguments))
            << at << ": arguments '" << part.tool_calls[i].arguments << "'";
      }
    }
  }
}

// A request without tools: the reasoning is still split off, and call-like text is content.
TEST(ToolCallParser, WithoutToolCallsTheRestIsContent) {
  ToolFormat format = tool_format_for(ToolFamily::kHermes);
  format.reasoning_open = "<think>";
  format.reasoning_close = "</think>";
  ParseOptions options;
  options.tool_calls = false;
  const std::string text =
      "<think>hm</think>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
  const ParsedMessage whole = parse_reply(format, text, options);
  EXPECT_EQ(whole.reasoning_content, "hm");
  EXPECT_EQ(whole.content, "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>");
  EXPECT_TRUE(whole.tool_calls.empty());
  // A generic-family reply that looks like its JSON is left alone too.
  const ParsedMessage generic =
      parse_reply(tool_format_for(ToolFamily::kGeneric), "{\"response\": \"x\"}", options);
  EXPECT_EQ(generic.content, "{\"response\": \"x\"}");
  // Streamed, the deltas add up to the same.
  StreamingParser parser(format, options);
  std::string content;
  for (char c : text) content += parser.push(std::string(1, c)).content;
  content += parser.finish().content;
  EXPECT_EQ(content, whole.content);
}

INSTANTIATE_TEST_SUITE_P(Families, ToolCallCorpus,
                         ::testing::Values("hermes", "qwen3-coder", "llama3", "mistral", "mistral-args",
                                           "granite", "phi4-mini", "deepseek-r1", "deepseek-v3.1", "gpt-oss",
                                           "generic"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name;
                           for (char c : param_info.param)
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace sinter::chat::tools
