// The Modelfile of a model from an Ollama store (server/ollama_store.h): what the manifest's
// layers say beside the weights — prompt template, system prompt, parameters, licences, seed
// messages — and the texts /api/show prints for it, as Ollama prints them.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sinter::server {

struct ModelfileMessage {
  std::string role;
  std::string content;
};

struct Modelfile {
  std::string name;                            // in full: "registry.ollama.ai/library/llama3.2:3b"
  std::string short_name;                      // as listed: "llama3.2:3b"
  std::string model_path;                      // the GGUF blob (FROM)
  std::optional<std::string> template_source;  // Go text/template syntax (TEMPLATE)
  std::optional<std::string> system;           // SYSTEM
  // PARAMETER lines: Ollama's option names and values ({"stop": ["<|eot_id|>"], "temperature":
  // 0.6}), the ones sinter can apply (see read_modelfile_params).
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  std::vector<std::string> licenses;       // LICENSE
  std::vector<ModelfileMessage> messages;  // MESSAGE: put before a conversation's own
};

// The text of /api/show "modelfile": a header naming the model, then FROM, TEMPLATE, SYSTEM,
// PARAMETER (one line per value of a list), LICENSE and MESSAGE lines; a value with a newline or
// an outer space is quoted ("..." or """...""" when it has a quote), as Ollama writes them.
std::string modelfile_text(const Modelfile& modelfile);

// /api/show "parameters": a line per value, the name padded to 30 columns and the value in Go's
// %#v syntax ("stop                           \"<|eot_id|>\"\ntemperature                    0.6").
std::string modelfile_parameters(const nlohmann::ordered_json& params);

// A JSON scalar as Go's fmt prints the value encoding/json decoded from it: %v (`sharp` false:
// strings as they are) or %#v (strings quoted like strconv.Quote). Numbers are float64 in Go:
// 4096 prints "4096", 1000000 "1e+06", 0.6 "0.6".
std::string go_format_value(const nlohmann::ordered_json& value, bool sharp);

}  // namespace sinter::server
