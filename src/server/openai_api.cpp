// OpenAI's API (https://platform.openai.com/docs/api-reference): chat completions, completions
// and the model list, streaming as server-sent events ending with "data: [DONE]".
#include <random>

#include "chat/tools/streaming_parser.h"
#include "chat/tools/tool_call_parser.h"
#include "server/api_routes.h"
#include "server/chat_reply.h"
#include "server/generation_request.h"
#include "server/json_fields.h"

#ifndef SINTER_VERSION
#define SINTER_VERSION "0.0.0"
#endif

namespace sinter::server {
namespace {

using Json = nlohmann::ordered_json;

std::string random_id(const char* prefix) {
  static std::mutex mutex;
  static std::mt19937_64 generator{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mutex);
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(generator()),
                static_cast<unsigned long long>(generator()));
  return std::string(prefix) + std::string(hex, 24);
}

int64_t unix_seconds(std::chrono::system_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
}

std::string sse(const Json& data) { return "data: " + dump_json(data) + "\n\n"; }

class OpenAiShape : public ResponseShape {
 public:
  OpenAiShape(std::string model, bool chat, bool include_usage, bool logprobs, ChatReplySetup reply = {})
      : model_(std::move(model)),
        chat_(chat),
        include_usage_(include_usage),
        logprobs_(logprobs),
        id_(random_id(chat ? "chatcmpl-" : "cmpl-")),
        created_(unix_seconds(std::chrono::system_clock::now())),
        reply_(std::move(reply)) {}

  const char* stream_content_type() const override { return "text/event-stream"; }

  std::string stream_begin(int32_t choices) override {
    text_offsets_.assign(static_cast<size_t>(std::max(choices, 1)), 0);
    if (reply_.parse) {
      parsers_.clear();
      for (int32_t i = 0; i < std::max(choices, 1); ++i) parsers_.emplace_back(reply_.format, reply_.options);
    }
    if (!chat_) return {};
    std::string out;
    for (int32_t i = 0; i < choices; ++i)
      out += sse(chunk(i, Json{{"role", "assistant"}, {"content", ""}}, nullptr));
    return out;
  }

  std::string stream_piece(int32_t choice, const std::string& text,
                           const std::vector<TokenLogprob>& logprobs) override {
    if (reply_.parse && chat_) return parsed_piece(choice, text, logprobs);
    Json out = chunk(choice, chat_ ? Json{{"content", text}} : Json(text), nullptr);
    if (logprobs_) out["choices"][0]["logprobs"] = logprobs_object(logprobs, offset_of(choice));
    offset_of(choice) += text.size();
    return sse(out);
  }

  std::string stream_choice_end(const Completion& completion) override {
    std::string out;
    const char* reason = finish_reason(completion.stats.stop_reason);
    if (reply_.parse && chat_) {
      chat::tools::StreamingParser& parser = parser_of(completion.choice);
      const chat::tools::MessageDelta last = parser.finish();
      if (!last.empty()) out += sse(chunk(completion.choice, delta_json(last), nullptr));
      reason = reply_reason(parser.message(), completion.stats.stop_reason);
    }
    return out + sse(chunk(completion.choice, chat_ ? Json::object() : Json(""), reason));
  }

  std::string stream_end(const std::vector<Completion>& completions) override {
    std::string out;
    if (include_usage_) {
      Json last = header(true);
      last["choices"] = Json::array();
      last["usage"] = usage(completions);
      out += sse(last);
    }
    return out + "data: [DONE]\n\n";
  }

  // The last chunk of a stream that was cut: its choice ends with finish_reason "error", and the
  // error object beside it makes the openai clients raise it.
  std::string stream_error(const std::string& message) override {
    Json last = chunk(0, chat_ ? Json::object() : Json(""), "error");
    last["error"] =
        Json{{"message", message}, {"type", "server_error"}, {"param", nullptr}, {"code", nullptr}};
    return sse(last) + "data: [DONE]\n\n";
  }

  std::string stream_keepalive() override { return ": keep-alive\n\n"; }

  Json whole(const std::vector<Completion>& completions) override {
    Json answer = header(false);
    Json choices = Json::array();
    for (const Completion& completion : completions) {
      Json choice{{"index", completion.choice}};
      const char* reason = finish_reason(completion.stats.stop_reason);
      if (chat_ && reply_.parse) {
        const chat::tools::ParsedMessage parsed =
            chat::tools::parse_reply(reply_.format, completion.text, reply_.options);
        choice["message"] = message_json(parsed);
        reason = reply_reason(parsed, completion.stats.stop_reason);
      } else if (chat_) {
        choice["message"] = Json{{"role", "assistant"}, {"content", completion.text}, {"refusal", nullptr}};
      } else {
        choice["text"] = completion.text;
      }
      choice["logprobs"] = logprobs_ ? logprobs_object(completion.logprobs, 0) : Json(nullptr);
      choice["finish_reason"] = reason;
      choices.push_back(std::move(choice));
    }
    answer["choices"] = std::move(choices);
    answer["usage"] = usage(completions);
    return answer;
  }

  void error(http::Response& res, const Error& error) override { reply_openai_error(res, error); }

 private:
  Json header(bool streaming) const {
    const char* object =
        chat_ ? (streaming ? "chat.completion.chunk" : "chat.completion") : "text_completion";
    return Json{{"id", id_},
                {"object", object},
                {"created", created_},
                {"model", model_},
                {"system_fingerprint", "sinter-" SINTER_VERSION}};
  }

  // A streamed chunk of one choice: `content` is the chat delta or the completion text.
  Json chunk(int32_t index, const Json& content, const Json& reason) const {
    Json choice{{"index", index}};
    choice[chat_ ? "delta" : "text"] = content;
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = reason;
    Json out = header(true);
    out["choices"] = Json::array({choice});
    if (include_usage_) out["usage"] = nullptr;  // the usage comes in a last chunk of its own
    return out;
  }

  // Chat: {"content": [entries], "refusal": null}. Completions (the legacy shape): parallel lists
  // of tokens, their log-probabilities, the alternatives as {token: logprob} and each token's
  // offset in the text (`offset`: where these tokens' text starts).
  Json logprobs_object(const std::vector<TokenLogprob>& entries, size_t offset) const {
    if (chat_) return Json{{"content", logprobs_json(entries)}, {"refusal", nullptr}};
    Json tokens = Json::array(), token_logprobs = Json::array(), top = Json::array(), offsets = Json::array();
    for (const TokenLogprob& entry : entries) {
      tokens.push_back(entry.piece);
      token_logprobs.push_back(logprob_json(entry.logprob));
      Json alternatives = Json::object();
      for (const TopLogprob& alternative : entry.top) {
        if (!alternatives.contains(alternative.piece))
          alternatives[alternative.piece] = logprob_json(alternative.logprob);
      }
      top.push_back(std::move(alternatives));
      offsets.push_back(offset);
      offset += entry.piece.size();
    }
    return Json{{"tokens", tokens},
                {"token_logprobs", token_logprobs},
                {"top_logprobs", top},
                {"text_offset", offsets}};
  }

  // A parsed reply's message: content (null when empty beside tool calls), reasoning_content and
  // tool_calls where there are some.
  static Json message_json(const chat::tools::ParsedMessage& parsed) {
    Json message{{"role", "assistant"}};
    message["content"] =
        parsed.content.empty() && !parsed.tool_calls.empty() ? Json(nullptr) : Json(parsed.content);
    if (!parsed.reasoning_content.empty()) message["reasoning_content"] = parsed.reasoning_content;
    if (!parsed.tool_calls.empty()) message["tool_calls"] = openai_tool_calls(parsed.tool_calls);
    message["refusal"] = nullptr;
    return message;
  }

  static Json delta_json(const chat::tools::MessageDelta& delta) {
    Json out = Json::object();
    if (!delta.content.empty()) out["content"] = delta.content;
    if (!delta.reasoning_content.empty()) out["reasoning_content"] = delta.reasoning_content;
    if (!delta.tool_calls.empty()) out["tool_calls"] = openai_tool_call_deltas(delta.tool_calls);
    return out;
  }

  // "tool_calls" when the reply called tools (and was not cut by the token limit).
  static const char* reply_reason(const chat::tools::ParsedMessage& parsed, StopReason stop) {
    const char* reason = finish_reason(stop);
    if (!parsed.tool_calls.empty() && std::string_view(reason) != "length") return "tool_calls";
    return reason;
  }

  // A chat piece through the choice's parser: the delta it adds (nothing while it is held back).
  std::string parsed_piece(int32_t choice, const std::string& text,
                           const std::vector<TokenLogprob>& logprobs) {
    const chat::tools::MessageDelta delta = parser_of(choice).push(text);
    if (delta.empty() && !(logprobs_ && !logprobs.empty())) return {};
    Json out = chunk(choice, delta_json(delta), nullptr);
    if (logprobs_) out["choices"][0]["logprobs"] = logprobs_object(logprobs, offset_of(choice));
    offset_of(choice) += text.size();
    return sse(out);
  }

  chat::tools::StreamingParser& parser_of(int32_t choice) {
    const size_t index = static_cast<size_t>(std::max(choice, 0));
    while (index >= parsers_.size()) parsers_.emplace_back(reply_.format, reply_.options);
    return parsers_[index];
  }

  size_t& offset_of(int32_t choice) {
    const size_t index = static_cast<size_t>(std::max(choice, 0));
    if (index >= text_offsets_.size()) text_offsets_.resize(index + 1, 0);
    return text_offsets_[index];
  }

  // The prompt once (the choices share it), the tokens of every choice.
  static Json usage(const std::vector<Completion>& completions) {
    const int64_t prompt = completions.empty() ? 0 : completions.front().stats.prompt_tokens;
    int64_t generated = 0;
    for (const Completion& completion : completions) generated += completion.stats.generated_tokens;
    // cached_tokens: the prompt tokens taken from the prefix cache, not computed again (OpenAI's
    // and llama-server's field).
    const int64_t cached = completions.empty() ? 0 : completions.front().stats.prompt_tokens_reused;
    return Json{{"prompt_tokens", prompt},
                {"completion_tokens", generated},
                {"total_tokens", prompt + generated},
                {"prompt_tokens_details", {{"cached_tokens", cached}}}};
  }

  std::string model_;
  bool chat_;
  bool include_usage_;
  bool logprobs_;
  std::string id_;
  int64_t created_;
  std::vector<size_t> text_offsets_;  // per choice, bytes of text streamed so far
  ChatReplySetup reply_;              // chat: tool calls and reasoning parsed out of the text
  std::vector<chat::tools::StreamingParser> parsers_;  // per choice, when reply_.parse
};

struct OpenAiCommon {
  std::string model;
  bool stream = false;
  bool include_usage = false;
  RequestedGeneration generation;
  ChatToolOptions tools;  // chat: tools and reasoning
};

Result<OpenAiCommon> read_common(const Json& body, bool chat) {
  OpenAiCommon common;
  JsonFields fields(body);
  SINTER_ASSIGN(const auto model, fields.string("model"));
  if (!model || model->empty()) return make_error(ErrorCode::kInvalidArgument, "model is required");
  common.model = *model;
  SINTER_ASSIGN(const auto stream, fields.boolean("stream"));
  common.stream = stream.value_or(false);
  SINTER_ASSIGN(const Json* stream_options, fields.object("stream_options"));
  if (stream_options != nullptr) {
    SINTER_ASSIGN(const auto include_usage,
                  JsonFields(*stream_options, "stream_options.").boolean("include_usage"));
    common.include_usage = include_usage.value_or(false);
  }
  SINTER_ASSIGN(common.generation, read_openai_parameters(body, chat));
  if (chat) {
    SINTER_ASSIGN(common.tools, read_openai_tool_options(body));
    SINTER_TRY(check_grammar_with_tools(common.tools, common.generation.grammar, "response_format"));
  }
  return common;
}

// Runs a request's generation with the OpenAI defaults and the response shape of its route.
Status submit(ServerState& state, const OpenAiCommon& common, ModelLease lease, PromptTokens prompt,
              bool chat, Clock::time_point arrived, const http::Request& req, http::Response& res,
              ChatReplySetup reply = {}) {
  GenerationJob job;
  job.prompt = std::move(prompt);
  SINTER_ASSIGN(job.options,
                make_generation_options(common.generation, kOpenAiDefaults, *lease, state.limits));
  apply_reply_setup(reply, job.options);
  job.lease = std::move(lease);
  job.shape = std::make_unique<OpenAiShape>(common.model, chat, common.include_usage,
                                            common.generation.logprobs, std::move(reply));
  job.stream = common.stream;
  job.choices = common.generation.n;
  if (job.choices > job.lease->scheduler->parallel()) {
    return make_error(ErrorCode::kInvalidArgument, "n is ", job.choices, " but the server serves ",
                      job.lease->scheduler->parallel(), " sequences at once per model (--parallel)");
  }
  job.arrived = arrived;
  run_generation(state, std::move(job), req, res);
  return ok_status();
}

Status handle_chat_completions(ServerState& state, const http::Request& req, http::Response& res) {
  const auto arrived = Clock::now();
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  SINTER_ASSIGN(const OpenAiCommon common, read_common(body, true));
  SINTER_ASSIGN(const Json* messages_json, JsonFields(body).array("messages"));
  if (messages_json == nullptr || messages_json->empty()) {
    return make_error(ErrorCode::kInvalidArgument, "messages is required (a non-empty array)");
  }
  SINTER_ASSIGN(const chat::Json messages, read_messages(*messages_json, "messages"));
  SINTER_ASSIGN(ModelLease lease,
                state.models->acquire(common.model, {state.models->options().default_keep_alive, {}}));
  SINTER_ASSIGN(const RenderedChat rendered,
                render_chat_with_tools(*lease, messages, std::nullopt, common.tools));
  SINTER_ASSIGN(ChatReplySetup reply,
                setup_chat_reply(common.tools, rendered.template_source, rendered.text));
  SINTER_TRY(check_thinking(common.tools, reply, common.model));
  SINTER_ASSIGN(PromptTokens prompt, tokenize_prompt(*lease, rendered.text));
  return submit(state, common, std::move(lease), std::move(prompt), true, arrived, req, res,
                std::move(reply));
}

// "prompt": a string, an array of one string, an array of token ids, or an array of one such array.
Result<PromptTokens> read_completion_prompt(const ServedModel& model, const Json& prompt) {
  if (prompt.is_string()) return tokenize_prompt(model, prompt.get<std::string>());
  if (prompt.is_array() && !prompt.empty()) {
    if (prompt.size() == 1 && prompt[0].is_string())
      return tokenize_prompt(model, prompt[0].get<std::string>());
    if (prompt.size() == 1 && prompt[0].is_array()) return prompt_from_ids(model, prompt[0], "prompt[0]");
    if (prompt[0].is_number()) return prompt_from_ids(model, prompt, "prompt");
    return make_error(ErrorCode::kInvalidArgument, "prompt: only one prompt per request is supported, got ",
                      prompt.size());
  }
  return make_error(ErrorCode::kInvalidArgument, "prompt must be a string or an array of token ids, got ",
                    describe_json(prompt));
}

Status handle_completions(ServerState& state, const http::Request& req, http::Response& res) {
  const auto arrived = Clock::now();
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  SINTER_ASSIGN(const OpenAiCommon common, read_common(body, false));
  const Json* prompt = JsonFields(body).find("prompt");
  if (prompt == nullptr) return make_error(ErrorCode::kInvalidArgument, "prompt is required");
  if (!prompt->is_string() && !prompt->is_array()) {
    return make_error(ErrorCode::kInvalidArgument, "prompt must be a string or an array of token ids, got ",
                      describe_json(*prompt));
  }
  SINTER_ASSIGN(ModelLease lease,
                state.models->acquire(common.model, {state.models->options().default_keep_alive, {}}));
  SINTER_ASSIGN(PromptTokens tokens, read_completion_prompt(*lease, *prompt));
  return submit(state, common, std::move(lease), std::move(tokens), false, arrived, req, res);
}

Json model_object(const ModelFile& file) {
  return Json{{"id", tagged_name(file.name)},
              {"object", "model"},
              {"created", unix_seconds(file.modified)},
              {"owned_by", "sinter"}};
}

// The route handlers' errors in this API's shape.
template <class Handler>
http::RouteHandler guarded(ServerState& state, Handler handler) {
  return server::guarded(state, handler, &reply_openai_error);
}

}  // namespace

void add_openai_routes(http::Router& router, ServerState& state) {
  router.add("POST", "/v1/chat/completions", guarded(state, handle_chat_completions));
  router.add("POST", "/v1/completions", guarded(state, handle_completions));
  router.add("GET", "/v1/models", [&state](const http::Request&, http::Response& res) {
    Json data = Json::array();
    for (const ModelFile& file : state.models->list()) data.push_back(model_object(file));
    reply_json(res, {{"object", "list"}, {"data", data}});
  });
  router.add("GET", "/v1/models/{id}", [&state](const http::Request& req, http::Response& res) {
    auto file = state.models->find(req.path_params.at(0));
    if (!file) return reply_openai_error(res, file.error());
    reply_json(res, model_object(*file));
  });
}

}  // namespace sinter::server
