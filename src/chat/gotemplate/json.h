// encoding/json for template values (what Ollama's `json` template function and the String()
// methods of its tool types print), and the conversion of request JSON into Go values the way
// encoding/json decodes into `any`: objects become map[string]interface {} (iterated in key order),
// arrays []interface {}, numbers float64.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "chat/gotemplate/value.h"

namespace sinter::chat::gotemplate {

// json.Marshal: nullopt where Go fails (NaN or infinite floats). Strings are escaped as Go does
// (<, >, & and U+2028/U+2029 as \u escapes; invalid UTF-8 as \ufffd); map keys in key order;
// struct fields under their JSON names, omitempty honoured; []byte as base64.
std::optional<std::string> go_json_marshal(const Value& v);

// What the value's String() method returns (see Stringer).
std::string stringer_text(const Value& v);

// A decoded JSON value as Go's `any` holds it (null → invalid, i.e. a nil interface). Values
// nested deeper than kMaxJsonDepth (core/json_parse.h) become nil.
Value value_from_json(const nlohmann::ordered_json& json, int depth = 0);

}  // namespace sinter::chat::gotemplate
