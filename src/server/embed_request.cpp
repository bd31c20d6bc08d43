#include "server/embed_request.h"

#include <cstring>

#include "server/json_fields.h"
#include "server/request_parameters.h"

namespace sinter::server {
namespace {

// OpenAI takes at most this many inputs in one request.
// Inputs of one embedding request (OpenAI's limit, applied to every route: each input is a
// vector in the answer) and documents of one rerank request.
constexpr size_t kMaxInputs = 2048;
// A vector keeps at most this many values (`dimensions`); the model's width bounds it later.
constexpr int64_t kMaxDimensions = 1 << 20;

Result<std::string> required_model(const JsonFields& fields) {
  SINTER_ASSIGN(const auto model, fields.string("model"));
  if (!model || model->empty()) return make_error(ErrorCode::kInvalidArgument, "model is required");
  return *model;
}

Status read_keep_alive(const JsonFields& fields, EmbedRequest& out) {
  if (const Json* keep_alive = fields.find("keep_alive")) {
    SINTER_ASSIGN(out.keep_alive, parse_keep_alive(*keep_alive, "keep_alive"));
  }
  return ok_status();
}

// Ollama's `options`: checked as for generation (an unknown or wrong option is an error); only
// num_ctx matters to an embedding.
Status read_options(const JsonFields& fields, EmbedRequest& out) {
  SINTER_ASSIGN(const Json* options, fields.object("options"));
  SINTER_ASSIGN(const RequestedGeneration generation, read_ollama_options(options));
  out.context_per_sequence = generation.context_per_sequence;
  return ok_status();
}

Status read_dimensions(const JsonFields& fields, EmbedRequest& out) {
  SINTER_ASSIGN(const auto dimensions, fields.integer("dimensions", 1, kMaxDimensions));
  if (dimensions) out.dimensions = static_cast<int32_t>(*dimensions);
  return ok_status();
}

// A list of token ids: integers of at least 0 (the vocabulary is checked with the model).
Result<std::vector<int64_t>> token_list(const Json& ids, const std::string& field) {
  std::vector<int64_t> tokens;
  tokens.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const Json& id = ids[i];
    if (!id.is_number_integer() && !id.is_number_unsigned()) {
      return make_error(ErrorCode::kInvalidArgument, field, "[", i, "] must be a token id (an integer), got ",
                        describe_json(id));
    }
    if (id.is_number_unsigned() ? id.get<uint64_t>() > static_cast<uint64_t>(INT32_MAX)
                                : id.get<int64_t>() < 0) {
      return make_error(ErrorCode::kInvalidArgument, field, "[", i, "] is not a token id: ", id.dump());
    }
    tokens.push_back(id.get<int64_t>());
  }
  return tokens;
}

Status check_count(const char* field, size_t count) {
  if (count <= kMaxInputs) return ok_status();
  return make_error(ErrorCode::kInvalidArgument, field, " has ", count, " items, more than the limit of ",
                    kMaxInputs);
}

Error input_type_error(const char* field, const char* expected, const Json& value) {
  return make_error(ErrorCode::kInvalidArgument, field, " must be ", expected, ", got ",
                    describe_json(value));
}

}  // namespace

Result<EmbedRequest> parse_ollama_embed(const Json& body) {
  EmbedRequest out;
  JsonFields fields(body);
  SINTER_ASSIGN(out.model, required_model(fields));
  if (const Json* input = fields.find("input")) {
    if (input->is_string()) {
      // "" is no input, as in Ollama (the model loads, the answer has no vectors).
      if (!input->get_ref<const std::string&>().empty())
        out.inputs.push_back({input->get<std::string>(), {}});
    } else if (input->is_array()) {
      SINTER_TRY(check_count("input", input->size()));
      for (size_t i = 0; i < input->size(); ++i) {
        const Json& item = (*input)[i];
        if (!item.is_string()) {
          return make_error(ErrorCode::kInvalidArgument, "input[", i, "] must be a string, got ",
                            describe_json(item));
        }
        out.inputs.push_back({item.get<std::string>(), {}});
      }
    } else {
      return input_type_error("input", "a string or an array of strings", *input);
    }
  }
  SINTER_ASSIGN(const auto truncate, fields.boolean("truncate"));
  out.truncate = truncate.value_or(true);
  SINTER_TRY(read_dimensions(fields, out));
  SINTER_TRY(read_keep_alive(fields, out));
  SINTER_TRY(read_options(fields, out));
  return out;
}

Result<EmbedRequest> parse_ollama_embeddings(const Json& body) {
  EmbedRequest out;
  JsonFields fields(body);
  SINTER_ASSIGN(out.model, required_model(fields));
  SINTER_ASSIGN(const auto prompt, fields.string("prompt"));
  if (prompt && !prompt->empty()) out.inputs.push_back({*prompt, {}});
  out.normalize = -1;  // Ollama's older route answers the pooled vector as it is
  SINTER_TRY(read_keep_alive(fields, out));
  SINTER_TRY(read_options(fields, out));
  return out;
}

Result<EmbedRequest> parse_openai_embeddings(const Json& body) {
  EmbedRequest out;
  out.truncate = false;
  JsonFields fields(body);
  SINTER_ASSIGN(out.model, required_model(fields));
  const Json* input = fields.find("input");
  if (input == nullptr) return make_error(ErrorCode::kInvalidArgument, "input is required");
  if (input->is_string()) {
    out.inputs.push_back({input->get<std::string>(), {}});
  } else if (input->is_array()) {
    if (input->empty()) return make_error(ErrorCode::kInvalidArgument, "input must not be an empty array");
    const Json& first = input->front();
    if (first.is_number()) {
      // One input as token ids.
      SINTER_ASSIGN(auto tokens, token_list(*input, "input"));
      out.inputs.push_back({std::nullopt, std::move(tokens)});
    } else {
      SINTER_TRY(check_count("input", input->size()));
      for (size_t i = 0; i < input->size(); ++i) {
        const Json& item = (*input)[i];
        const std::string field = "input[" + std::to_string(i) + "]";
        if (item.is_string()) {
          out.inputs.push_back({item.get<std::string>(), {}});
        } else if (item.is_array()) {
          if (item.empty()) return make_error(ErrorCode::kInvalidArgument, field, " has no token ids");
          SINTER_ASSIGN(auto tokens, token_list(item, field));
          out.inputs.push_back({std::nullopt, std::move(tokens)});
        } else {
          return make_error(ErrorCode::kInvalidArgument, field,
                            " must be a string or an array of token ids, got ", describe_json(item));
        }
      }
    }
  } else {
    return input_type_error("input", "a string, an array of strings, or token ids", *input);
  }
  SINTER_ASSIGN(const auto format, fields.string("encoding_format"));
  if (format && *format != "float" && *format != "base64") {
    return make_error(ErrorCode::kInvalidArgument, "encoding_format must be \"float\" or \"base64\", got \"",
                      *format, "\"");
  }
  out.base64 = format && *format == "base64";
  SINTER_TRY(read_dimensions(fields, out));
  SINTER_ASSIGN(const auto user, fields.string("user"));  // accepted, unused
  (void)user;
  SINTER_ASSIGN(const auto truncate, fields.boolean("truncate"));
  out.truncate = truncate.value_or(false);
  SINTER_ASSIGN(const auto normalize, fields.integer("embd_normalize", -1, 1 << 20));
  if (normalize) out.normalize = static_cast<int32_t>(*normalize);
  return out;
}

Result<RerankRequest> parse_rerank(const Json& body) {
  RerankRequest out;
  JsonFields fields(body);
  SINTER_ASSIGN(out.model, required_model(fields));
  SINTER_ASSIGN(const auto query, fields.string("query"));
  if (!query) return make_error(ErrorCode::kInvalidArgument, "query is required (a string)");
  out.query = *query;
  const char* name = fields.has("documents") ? "documents" : "texts";
  SINTER_ASSIGN(const Json* documents, fields.array(name));
  if (documents == nullptr || documents->empty()) {
    return make_error(ErrorCode::kInvalidArgument, "documents is required (a non-empty array of strings)");
  }
  SINTER_TRY(check_count(name, documents->size()));
  for (size_t i = 0; i < documents->size(); ++i) {
    const Json& document = (*documents)[i];
    if (document.is_string()) {
      out.documents.push_back(document.get<std::string>());
    } else if (document.is_object()) {
      // Jina's multimodal shape: {"text": "..."}.
      SINTER_ASSIGN(const auto text,
                    JsonFields(document, std::string(name) + "[" + std::to_string(i) + "].").string("text"));
      if (!text) {
        return make_error(ErrorCode::kInvalidArgument, name, "[", i,
                          "] must be a string or {\"text\": string}");
      }
      out.documents.push_back(*text);
    } else {
      return make_error(ErrorCode::kInvalidArgument, name, "[", i, "] must be a string, got ",
                        describe_json(document));
    }
  }
  SINTER_ASSIGN(const auto top_n, fields.integer("top_n", 1, INT32_MAX));
  if (top_n) out.top_n = static_cast<int32_t>(*top_n);
  SINTER_ASSIGN(const auto return_documents, fields.boolean("return_documents"));
  out.return_documents = return_documents.value_or(false);
  return out;
}

std::string base64_floats(std::span<const float> values) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint8_t> bytes(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &values[i], 4);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + static_cast<size_t>(b)] = static_cast<uint8_t>(bits >> (8 * b));
  }
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t triple = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(triple >> shift) & 63];
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    uint32_t triple = uint32_t{bytes[i]} << 16;
    if (rest == 2) triple |= uint32_t{bytes[i + 1]} << 8;
    out += kAlphabet[(triple >> 18) & 63];
    out += kAlphabet[(triple >> 12) & 63];
    out += rest == 2 ? kAlphabet[(triple >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace sinter::server
