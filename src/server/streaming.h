// Answering generation requests: submit to the model's scheduler, then either stream the text
// as it comes (NDJSON for Ollama, server-sent events for OpenAI) or answer with one JSON object
// at the end. A client that goes away cancels its request, streamed or not;
// a full queue is 503 with Retry-After.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/memory_budget.h"
#include "runtime/scheduler.h"
#include "server/generation_request.h"
#include "server/http/message.h"
#include "server/http/router.h"
#include "server/metrics.h"
#include "server/model_manager.h"
#include "server/prompt.h"

namespace sinter::server {

using Clock = std::chrono::steady_clock;

// What the handlers share.
struct ServerState {
  ModelManager* models = nullptr;
  ServerMetrics* metrics = nullptr;
  ServerLimits limits;
  // A request still running this long after it arrived is cut (0: no limit).
  std::chrono::milliseconds request_timeout{0};
  std::atomic<bool> stopping{false};
  MemoryPool* request_memory = nullptr;  // what requests hold, all together (core/memory_budget.h)
};

// The HTTP status for an error: invalid input and prompts over the context 400, unknown models
// 404, a full queue or shutdown 503, anything else 500.
int http_status_for(ErrorCode code);

// {"error": "message"} (Ollama and sinter's own routes).
void reply_error(http::Response& res, int status, const std::string& message);
void reply_error(http::Response& res, const Error& error);
// {"error": {"message", "type", "param", "code"}} (the OpenAI routes).
void reply_openai_error(http::Response& res, int status, const std::string& message);
void reply_openai_error(http::Response& res, const Error& error);
void reply_openai_error(http::Response& res, int status, const std::string& message,
                        const nlohmann::ordered_json& param, const nlohmann::ordered_json& code);

// OpenAI's "param" and "code" of an error where they apply: the request field its message names
// ("temperature", "logit_bias", "n"), "model_not_found" with param "model",
// "context_length_exceeded", "invalid_value" / "unsupported_parameter"; null otherwise.
struct OpenAiErrorFields {
  nlohmann::ordered_json param;
  nlohmann::ordered_json code;
};
OpenAiErrorFields openai_error_fields(const Error& error);
void reply_json(http::Response& res, const nlohmann::ordered_json& body, int status = 200);

// Wraps a route handler that may fail, `Status handler(state, req, res)`: its error becomes the
// API's error body (`reply`: reply_error or reply_openai_error) with the matching status.
template <class Handler>
http::RouteHandler guarded(ServerState& state, Handler handler,
                           void (*reply)(http::Response&, const Error&)) {
  return [&state, handler, reply](http::Request& req, http::Response& res) {
    Status status = handler(state, req, res);
    if (!status) reply(res, status.error());
  };
}

// One finished completion (a choice), for its final chunk or the whole answer.
struct Completion {
  int32_t choice = 0;
  std::vector<TokenId> prompt;
  std::string text;
  std::vector<TokenId> tokens;         // generated (end-of-generation token excluded)
  std::vector<TokenLogprob> logprobs;  // with logprobs requested: one per reported token
  RequestStats stats;
  int64_t load_ns = 0;   // time spent loading (or waiting for) the model
  int64_t total_ns = 0;  // from the request's arrival to its end
};

// "stop" (end of generation, stop string) or "length" (token limit, full context).
const char* finish_reason(StopReason reason);

// A log-probability as JSON: -inf (a token the model rules out) as OpenAI writes it, -9999.
double logprob_json(float logprob);

// Entries as Ollama and OpenAI's chat write them: [{"token", "logprob", "bytes", "top_logprobs":
// [{"token", "logprob", "bytes"}]}] ("token" is the token's text, its bytes exactly in "bytes").
nlohmann::ordered_json logprobs_json(const std::vector<TokenLogprob>& entries);

// How one endpoint writes its answer. A request has one or more choices (OpenAI's n); their
// pieces interleave, each ends on its own, then the answer ends.
class ResponseShape {
 public:
  virtual ~ResponseShape() = default;
  virtual const char* stream_content_type() const = 0;
  virtual std::string stream_begin(int32_t /*choices*/) { return {}; }
  // Text of a choice and the log-probabilities of the tokens it completes (when requested).
  virtual std::string stream_piece(int32_t choice, const std::string& text,
                                   const std::vector<TokenLogprob>& logprobs) = 0;
  // One choice has finished.
  virtual std::string stream_choice_end(const Completion& completion) = 0;
  // Every choice has finished.
  virtual std::string stream_end(const std::vector<Completion>& /*completions*/) { return {}; }
  virtual std::string stream_error(const std::string& message) = 0;
  // Written every few seconds while nothing else is (SSE comments); empty: nothing.
  virtual std::string stream_keepalive() { return {}; }
  virtual nlohmann::ordered_json whole(const std::vector<Completion>& completions) = 0;
  // The error body of this API (reply_error or reply_openai_error).
  virtual void error(http::Response& res, const Error& error) { reply_error(res, error); }
};

struct GenerationJob {
  ModelLease lease;
  PromptTokens prompt;
  GenerationOptions options;
  std::unique_ptr<ResponseShape> shape;
  bool stream = true;
  int32_t choices = 1;  // OpenAI's n
  Clock::time_point arrived;
};

// Submits the job and sets up the response (a streamed body when streaming). A client that goes
// away (req.client_gone()) cancels the job, queued or running.
void run_generation(ServerState& state, GenerationJob job, const http::Request& req, http::Response& res);

}  // namespace sinter::server
