// The Go values Ollama passes to its templates (template.Values → map[string]any), built from
// OllamaTemplateData with the Go types of Ollama's template package, so that printing, JSON and
// field access behave as there: a message is a *templateMessage, tools a templateTools (whose
// String() is JSON), tool call arguments a templateArgs (String() is JSON, "{}" when nil).
#pragma once

#include <string>
#include <vector>

#include "chat/gotemplate/ollama_template.h"
#include "chat/gotemplate/value.h"

namespace sinter::chat::gotemplate {

// messages collated as Ollama's collate() does: consecutive messages of one role (except tool)
// merged with "\n\n"; *system receives all system messages joined with "\n\n".
std::vector<OllamaMessage> collate_messages(const std::vector<OllamaMessage>& messages, std::string* system);

// []*templateMessage (nil when `messages` is empty).
Value template_messages(const std::vector<OllamaMessage>& messages);
// templateTools (nil when `tools` is null).
Value template_tools(const nlohmann::ordered_json& tools);

// map[string]interface {} from name/value pairs (values wrapped in interfaces).
Value template_data(std::vector<std::pair<std::string, Value>> entries);

}  // namespace sinter::chat::gotemplate
