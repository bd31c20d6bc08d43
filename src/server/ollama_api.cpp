// Ollama's API (https://github.com/ollama/ollama/blob/main/docs/api.md), the parts that make
// sense for a server of local GGUF files.
#include <map>
#include <mutex>

#include "chat/tools/streaming_parser.h"
#include "chat/tools/tool_call_parser.h"
#include "core/log.h"
#include "gguf/gguf_file.h"
#include "model/registry.h"
#include "server/api_routes.h"
#include "server/chat_reply.h"
#include "server/durations.h"
#include "server/generation_request.h"
#include "server/json_fields.h"
#include "server/model_info.h"
#include "server/modelfile.h"
#include "server/structured_output.h"

#ifndef SINTER_VERSION
#define SINTER_VERSION "0.0.0"
#endif

namespace sinter::server {
namespace {

// The version of Ollama whose API sinter implements (clients gate features on /api/version).
constexpr const char* kOllamaApiVersion = "0.13.0";
constexpr size_t kMaxTemplateBytes = 1 << 20;

using Json = nlohmann::ordered_json;

// The NDJSON answer of /api/generate (chat false) and /api/chat (chat true).
class OllamaShape : public ResponseShape {
 public:
  OllamaShape(std::string model, bool chat, bool logprobs, ChatReplySetup reply = {})
      : model_(std::move(model)), chat_(chat), logprobs_(logprobs), reply_(std::move(reply)) {}

  const char* stream_content_type() const override { return "application/x-ndjson"; }

  std::string stream_piece(int32_t choice, const std::string& text,
                           const std::vector<TokenLogprob>& logprobs) override {
    Json chunk = base();
    if (parsing()) {
      // Content and thinking stream as they come; the calls go out whole at the end.
      const chat::tools::MessageDelta delta = parser_of(choice).push(text);
      if (delta.content.empty() && delta.reasoning_content.empty() && !(logprobs_ && !logprobs.empty()))
        return {};
      put_message(chunk, delta.content, delta.reasoning_content, {});
    } else {
      put_text(chunk, text);
    }
    chunk["done"] = false;
    if (logprobs_) chunk["logprobs"] = logprobs_json(logprobs);
    return dump_json(chunk) + "\n";
  }

  std::string stream_choice_end(const Completion& completion) override {
    std::string out;
    if (parsing()) {
      chat::tools::StreamingParser& parser = parser_of(completion.choice);
      const chat::tools::MessageDelta last = parser.finish();
      const auto& calls = parser.message().tool_calls;
      if (!last.content.empty() || !last.reasoning_content.empty() || !calls.empty()) {
        Json chunk = base();
        put_message(chunk, last.content, last.reasoning_content, calls);
        chunk["done"] = false;
        out += dump_json(chunk) + "\n";
      }
    }
    return out + dump_json(final(completion, "", false)) + "\n";
  }

  // The last object of a stream that was cut: done, with done_reason "error" and the message
  // (ollama clients raise an object that has "error").
  std::string stream_error(const std::string& message) override {
    Json last = base();
    put_text(last, "");
    last["done"] = true;
    last["done_reason"] = "error";
    last["error"] = message;
    return dump_json(last) + "\n";
  }

  Json whole(const std::vector<Completion>& completions) override {
    if (!parsing()) return final(completions.front(), completions.front().text, logprobs_);
    const chat::tools::ParsedMessage parsed =
        chat::tools::parse_reply(reply_.format, completions.front().text, reply_.options);
    Json answer = final(completions.front(), "", logprobs_);
    put_message(answer, parsed.content, parsed.reasoning_content, parsed.tool_calls);
    return answer;
  }

 private:
  Json base() const { return Json{{"model", model_}, {"created_at", now_rfc3339()}}; }

  bool parsing() const { return reply_.parse; }

  chat::tools::StreamingParser& parser_of(int32_t choice) {
    const size_t index = static_cast<size_t>(std::max(choice, 0));
    while (index >= parsers_.size()) parsers_.emplace_back(reply_.format, reply_.options);
    return parsers_[index];
  }

  // A chat message with its thinking and tool calls where there are some (/api/generate:
  // "response" and "thinking").
  void put_message(Json& chunk, const std::string& content, const std::string& thinking,
                   const std::vector<chat::tools::ToolCall>& calls) const {
    if (!chat_) {
      chunk["response"] = content;
      if (!thinking.empty()) chunk["thinking"] = thinking;
      return;
    }
    Json message{{"role", "assistant"}, {"content", content}};
    if (!thinking.empty()) message["thinking"] = thinking;
    if (!calls.empty()) message["tool_calls"] = ollama_tool_calls(calls);
    chunk["message"] = std::move(message);
  }

  void put_text(Json& chunk, const std::string& text) const {
    if (chat_) {
      chunk["message"] = Json{{"role", "assistant"}, {"content", text}};
    } else {
      chunk["response"] = text;
    }
  }

  Json final(const Completion& completion, const std::string& text, bool with_logprobs) const {
    Json chunk = base();
    put_text(chunk, text);
    chunk["done"] = true;
    chunk["done_reason"] = finish_reason(completion.stats.stop_reason);
    if (!chat_) {
      std::vector<TokenId> context = completion.prompt;
      context.insert(context.end(), completion.tokens.begin(), completion.tokens.end());
      chunk["context"] = context;
    }
    const RequestStats& stats = completion.stats;
    chunk["total_duration"] = completion.total_ns;
    chunk["load_duration"] = completion.load_ns;
    chunk["prompt_eval_count"] = stats.prompt_tokens;
    chunk["prompt_eval_duration"] = stats.prompt_ns;
    chunk["eval_count"] = stats.generated_tokens;
    chunk["eval_duration"] = stats.generation_ns;
    if (with_logprobs) chunk["logprobs"] = logprobs_json(completion.logprobs);
    return chunk;
  }

  std::string model_;
  bool chat_;
  bool logprobs_;
  ChatReplySetup reply_;  // chat: tool calls and thinking parsed out of the text
  std::vector<chat::tools::StreamingParser> parsers_;
};

// Facts read from model files for /api/tags, kept per file version (digest).
class DetailsCache {
 public:
  ModelDetails get(const ModelFile& file) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = cache_.find(file.digest); it != cache_.end()) return it->second;
    }
    ModelDetails details;
    if (auto gguf = GgufFile::open(file.path)) {
      details = read_model_details(*gguf);
    } else {
      log_warn("server", file.name, ": ", gguf.error().message());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    cache_[file.digest] = details;
    return details;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, ModelDetails> cache_;
};

DetailsCache& details_cache() {
  static DetailsCache cache;
  return cache;
}

// The fields both generation endpoints read before touching a model.
struct OllamaCommon {
  std::string model;
  bool stream = true;
  KeepAlive keep_alive{0};
  RequestedGeneration generation;
  std::optional<std::string> template_source;
  ChatToolOptions tools;  // tools and think
};

Result<OllamaCommon> read_common(const Json& body, const ModelManager& models) {
  OllamaCommon common;
  JsonFields fields(body);
  SINTER_ASSIGN(const auto model, fields.string("model"));
  if (!model || model->empty()) return make_error(ErrorCode::kInvalidArgument, "model is required");
  common.model = *model;
  SINTER_ASSIGN(const auto stream, fields.boolean("stream"));
  common.stream = stream.value_or(true);
  common.keep_alive = models.options().default_keep_alive;
  if (const Json* keep_alive = fields.find("keep_alive")) {
    SINTER_ASSIGN(common.keep_alive, parse_keep_alive(*keep_alive, "keep_alive"));
  }
  SINTER_ASSIGN(const Json* options, fields.object("options"));
  SINTER_ASSIGN(common.generation, read_ollama_options(options));
  // Structured output: `format` ("" and null mean none, as clients send "" always), or a GBNF
  // `grammar` as llama-server takes it.
  SINTER_ASSIGN(auto from_format, ollama_format_grammar(fields.find("format")));
  SINTER_ASSIGN(common.generation.grammar,
                request_grammar(fields.find("grammar"), std::move(from_format), "format"));
  SINTER_TRY(read_ollama_logprobs(body, common.generation));
  SINTER_ASSIGN(common.template_source, fields.string("template"));
  // Templates are a few KB; a bound on the source bounds the parse (linear, but not free).
  if (common.template_source && common.template_source->size() > kMaxTemplateBytes) {
    return make_error(ErrorCode::kInvalidArgument, "template is ", common.template_source->size(),
                      " bytes, more than the limit of ", kMaxTemplateBytes);
  }
  SINTER_ASSIGN(common.tools, read_ollama_tool_options(body));
  SINTER_TRY(check_grammar_with_tools(common.tools, common.generation.grammar, "format"));
  return common;
}

// An empty prompt loads the model (or, with keep_alive 0, unloads it), as in Ollama.
void load_or_unload(ServerState& state, const OllamaCommon& common, bool chat, http::Response& res) {
  Json answer{{"model", common.model}, {"created_at", now_rfc3339()}};
  if (chat) answer["message"] = Json{{"role", "assistant"}, {"content", ""}};
  if (!chat) answer["response"] = "";
  answer["done"] = true;
  if (common.keep_alive == KeepAlive(0)) {
    state.models->unload(common.model);
    answer["done_reason"] = "unload";
  } else {
    auto lease =
        state.models->acquire(common.model, {common.keep_alive, common.generation.context_per_sequence});
    if (!lease) return reply_error(res, lease.error());
    answer["done_reason"] = "load";
  }
  reply_json(res, answer);
}

Result<ModelLease> acquire(ServerState& state, const OllamaCommon& common) {
  return state.models->acquire(common.model, {common.keep_alive, common.generation.context_per_sequence});
}

Status handle_generate(ServerState& state, const http::Request& req, http::Response& res) {
  const auto arrived = Clock::now();
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  SINTER_ASSIGN(const OllamaCommon common, read_common(body, *state.models));
  if (common.tools.has_tools())
    return make_error(ErrorCode::kInvalidArgument, "tools are supported on /api/chat only");
  JsonFields fields(body);
  SINTER_ASSIGN(const auto prompt, fields.string("prompt"));
  SINTER_ASSIGN(const auto system, fields.string("system"));
  SINTER_ASSIGN(const auto raw, fields.boolean("raw"));
  SINTER_ASSIGN(const auto suffix, fields.string("suffix"));
  if (suffix && !suffix->empty())
    return make_error(ErrorCode::kInvalidArgument, "suffix (fill-in-the-middle) is not supported");
  SINTER_ASSIGN(const Json* images, fields.array("images"));
  if (images != nullptr && !images->empty())
    return make_error(ErrorCode::kInvalidArgument, "images are not supported");
  SINTER_ASSIGN(const Json* context, fields.array("context"));
  SINTER_TRY(state.models->find(common.model));

  if (prompt.value_or("").empty() && (context == nullptr || context->empty())) {
    load_or_unload(state, common, false, res);
    return ok_status();
  }
  SINTER_ASSIGN(ModelLease lease, acquire(state, common));
  RenderedChat rendered{prompt.value_or(""), lease->has_chat_template ? lease->chat_template.source : ""};
  if (!raw.value_or(false)) {
    SINTER_ASSIGN(rendered, render_generate_turn(*lease, rendered.text, system, common.template_source,
                                                 chat_render_options(common.tools)));
  }
  // think: the reasoning goes to "thinking" (a raw prompt: as the model's template would write it).
  SINTER_ASSIGN(ChatReplySetup reply,
                setup_chat_reply(common.tools, rendered.template_source, rendered.text));
  SINTER_TRY(check_thinking(common.tools, reply, common.model));
  const std::string& text = rendered.text;
  PromptTokens tokens;
  if (context != nullptr && !context->empty()) {
    // A previous answer's context continues: its tokens, then the new text without a second BOS.
    SINTER_ASSIGN(tokens, prompt_from_ids(*lease, *context, "context"));
    SINTER_ASSIGN(const PromptTokens more, tokenize_prompt(*lease, text, false));
    tokens.tokens.insert(tokens.tokens.end(), more.tokens.begin(), more.tokens.end());
  } else {
    SINTER_ASSIGN(tokens, tokenize_prompt(*lease, text));
  }
  GenerationJob job;
  SINTER_ASSIGN(job.options,
                make_generation_options(common.generation, kOllamaDefaults, *lease, state.limits));
  apply_reply_setup(reply, job.options);
  job.lease = std::move(lease);
  job.prompt = std::move(tokens);
  job.shape =
      std::make_unique<OllamaShape>(common.model, false, common.generation.logprobs, std::move(reply));
  job.stream = common.stream;
  job.arrived = arrived;
  run_generation(state, std::move(job), req, res);
  return ok_status();
}

Status handle_chat(ServerState& state, const http::Request& req, http::Response& res) {
  const auto arrived = Clock::now();
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  SINTER_ASSIGN(const OllamaCommon common, read_common(body, *state.models));
  JsonFields fields(body);
  SINTER_ASSIGN(const Json* messages_json, fields.array("messages"));
  chat::Json messages = chat::Json::array();
  if (messages_json != nullptr) {
    SINTER_ASSIGN(messages, read_messages(*messages_json, "messages"));
  }
  SINTER_TRY(state.models->find(common.model));
  if (messages.empty()) {
    load_or_unload(state, common, true, res);
    return ok_status();
  }
  SINTER_ASSIGN(ModelLease lease, acquire(state, common));
  SINTER_ASSIGN(const RenderedChat rendered,
                render_chat_with_tools(*lease, messages, common.template_source, common.tools));
  SINTER_ASSIGN(ChatReplySetup reply,
                setup_chat_reply(common.tools, rendered.template_source, rendered.text));
  SINTER_TRY(check_thinking(common.tools, reply, common.model));
  GenerationJob job;
  SINTER_ASSIGN(job.prompt, tokenize_prompt(*lease, rendered.text));
  SINTER_ASSIGN(job.options,
                make_generation_options(common.generation, kOllamaDefaults, *lease, state.limits));
  apply_reply_setup(reply, job.options);
  job.lease = std::move(lease);
  job.shape = std::make_unique<OllamaShape>(common.model, true, common.generation.logprobs, std::move(reply));
  job.stream = common.stream;
  job.arrived = arrived;
  run_generation(state, std::move(job), req, res);
  return ok_status();
}

Json describe_model(const ModelFile& file) {
  const ModelDetails details = details_cache().get(file);
  return Json{{"name", tagged_name(file.name)},
              {"model", tagged_name(file.name)},
              {"modified_at", format_rfc3339(file.modified)},
              {"size", file.bytes},
              {"digest", file.digest},
              {"details", details_json(details)}};
}

Status handle_tags(ServerState& state, http::Response& res) {
  Json models = Json::array();
  for (const ModelFile& file : state.models->list()) models.push_back(describe_model(file));
  reply_json(res, {{"models", models}});
  return ok_status();
}

Status handle_show(ServerState& state, const http::Request& req, http::Response& res) {
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  JsonFields fields(body);
  SINTER_ASSIGN(auto name, fields.string("model"));
  if (!name) {
    SINTER_ASSIGN(name, fields.string("name"));  // the older spelling
  }
  if (!name || name->empty()) return make_error(ErrorCode::kInvalidArgument, "model is required");
  SINTER_ASSIGN(const auto verbose, fields.boolean("verbose"));
  SINTER_ASSIGN(const ModelFile file, state.models->find(*name));
  SINTER_ASSIGN(const GgufFile gguf, GgufFile::open(file.path));
  const ModelDetails details = read_model_details(gguf);
  std::string template_source;
  if (auto chat_template = chat::ChatTemplate::from_metadata(gguf.metadata());
      chat_template && !chat_template->is_builtin_chatml) {
    template_source = chat_template->source;
  }
  // A model of an Ollama store shows its Modelfile as Ollama does.
  const Modelfile* modelfile = file.modelfile.get();
  if (modelfile != nullptr && modelfile->template_source) template_source = *modelfile->template_source;
  Json answer{
      {"modelfile", modelfile != nullptr ? modelfile_text(*modelfile)
                                         : "# Modelfile generated by sinter\nFROM " + file.path + "\n"},
      {"parameters", modelfile != nullptr ? modelfile_parameters(modelfile->params) : ""},
      {"template", template_source}};
  if (modelfile != nullptr && modelfile->system) answer["system"] = *modelfile->system;
  answer["details"] = details_json(details);
  answer["model_info"] = model_info_json(gguf, details, verbose.value_or(false));
  // An embedding model (an encoder, or a decoder file with a pooling type) embeds; the others
  // complete, as Ollama says.
  const bool encoder = is_embedding_model_file(gguf.metadata());
  Json capabilities = Json::array({encoder ? "embedding" : "completion"});
  // What the template can do, as Ollama tells it: tools when it renders them, thinking when it
  // has reasoning tags (docs/TOOL_CALLS.md).
  if (!encoder && template_shows_tools(template_source)) capabilities.push_back("tools");
  if (!encoder && !template_source.empty() &&
      template_can_think(chat::tools::detect_tool_format(template_source))) {
    capabilities.push_back("thinking");
  }
  answer["capabilities"] = std::move(capabilities);
  answer["modified_at"] = format_rfc3339(file.modified);
  reply_json(res, answer);
  return ok_status();
}

Status handle_ps(ServerState& state, http::Response& res) {
  Json models = Json::array();
  const auto forever = std::chrono::system_clock::now() + std::chrono::hours(24 * 365 * 100);
  for (const LoadedModelInfo& info : state.models->loaded()) {
    Json entry = describe_model(info.file);
    entry.erase("modified_at");
    entry["size"] = info.memory_bytes;
    entry["size_vram"] = 0;
    entry["expires_at"] = format_rfc3339(info.expires_at.value_or(forever));
    entry["context_length"] = info.context_per_sequence;
    entry["parallel"] = info.parallel;
    entry["requests"] = info.requests;
    models.push_back(std::move(entry));
  }
  reply_json(res, {{"models", models}});
  return ok_status();
}

Status handle_tokenize(ServerState& state, const http::Request& req, http::Response& res) {
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  JsonFields fields(body);
  SINTER_ASSIGN(const auto model, fields.string("model"));
  if (!model || model->empty()) return make_error(ErrorCode::kInvalidArgument, "model is required");
  SINTER_ASSIGN(const auto content, fields.string("content"));
  if (!content) return make_error(ErrorCode::kInvalidArgument, "content is required (the text to tokenize)");
  SINTER_ASSIGN(const auto add_special, fields.boolean("add_special"));
  SINTER_ASSIGN(const auto parse_special, fields.boolean("parse_special"));
  SINTER_ASSIGN(
      ModelLease lease,
      state.models->acquire(*model, {state.models->options().default_keep_alive, {}, ModelUse::kAny}));
  SINTER_ASSIGN(const std::vector<TokenId> tokens,
                lease->tokenizer->encode(
                    *content, EncodeOptions{add_special.value_or(true), parse_special.value_or(true)}));
  reply_json(res, {{"model", *model}, {"tokens", tokens}});
  return ok_status();
}

Status handle_detokenize(ServerState& state, const http::Request& req, http::Response& res) {
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  JsonFields fields(body);
  SINTER_ASSIGN(const auto model, fields.string("model"));
  if (!model || model->empty()) return make_error(ErrorCode::kInvalidArgument, "model is required");
  SINTER_ASSIGN(const Json* ids, fields.array("tokens"));
  if (ids == nullptr)
    return make_error(ErrorCode::kInvalidArgument, "tokens is required (an array of token ids)");
  SINTER_ASSIGN(const auto render_special, fields.boolean("render_special"));
  SINTER_ASSIGN(
      ModelLease lease,
      state.models->acquire(*model, {state.models->options().default_keep_alive, {}, ModelUse::kAny}));
  SINTER_ASSIGN(const PromptTokens tokens, prompt_from_ids(*lease, *ids, "tokens"));
  const std::string content = lease->tokenizer->decode(tokens.tokens, render_special.value_or(false));
  reply_json(res, {{"model", *model}, {"content", content}});
  return ok_status();
}

// The route handlers' errors in this API's shape.
template <class Handler>
http::RouteHandler guarded(ServerState& state, Handler handler) {
  return server::guarded(state, handler, &reply_error);
}

}  // namespace

std::string now_rfc3339() { return format_rfc3339(std::chrono::system_clock::now()); }

void add_ollama_routes(http::Router& router, ServerState& state) {
  router.add("POST", "/api/generate", guarded(state, handle_generate));
  router.add("POST", "/api/chat", guarded(state, handle_chat));
  router.add("GET", "/api/tags",
             guarded(state, [](ServerState& s, const http::Request&, http::Response& res) {
               return handle_tags(s, res);
             }));
  router.add("POST", "/api/show", guarded(state, handle_show));
  router.add("GET", "/api/ps", guarded(state, [](ServerState& s, const http::Request&, http::Response& res) {
               return handle_ps(s, res);
             }));
  router.add("GET", "/api/version", [](const http::Request&, http::Response& res) {
    reply_json(res, {{"version", kOllamaApiVersion}, {"sinter_version", SINTER_VERSION}});
  });
  router.add("POST", "/api/tokenize", guarded(state, handle_tokenize));
  router.add("POST", "/api/detokenize", guarded(state, handle_detokenize));
  const auto not_supported = [](const http::Request& req, http::Response& res) {
    reply_error(res, 501, req.path + " is not supported: sinter serves the GGUF files it was started with");
  };
  for (const char* path : {"/api/pull", "/api/push", "/api/create", "/api/copy"}) {
    router.add("POST", path, not_supported);
  }
  router.add("DELETE", "/api/delete", not_supported);
}

}  // namespace sinter::server
