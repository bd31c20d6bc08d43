#include "server/streaming.h"

#include <algorithm>
#include <cmath>

#include "core/log.h"
#include "server/json_fields.h"

namespace sinter::server {
namespace {

// How often a waiting answer looks at its client (and at shutdown).
constexpr auto kPollInterval = std::chrono::milliseconds(50);
constexpr auto kKeepaliveInterval = std::chrono::seconds(5);

int64_t nanoseconds_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

bool past_time_limit(const ServerState& state, const GenerationJob& job) {
  return state.request_timeout.count() > 0 && Clock::now() - job.arrived > state.request_timeout;
}

std::string time_limit_message(const ServerState& state) {
  return concat("the request ran past the server's time limit of ",
                std::chrono::duration<double>(state.request_timeout).count(), " s (--request-timeout)");
}

const char* openai_error_type(int status) {
  if (status == 404) return "not_found_error";
  if (status == 503) return "server_busy";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

void set_retry_after(http::Response& res, const Error& error) {
  if (error.code() == ErrorCode::kBusy) res.set_header("Retry-After", "1");
}

// The choices of one request, filled in as their events come.
// What an event adds to an answer held until its end: the text and its logprob entries, each
// entry also as the JSON tree of the answer (an object of nlohmann nodes, and a number node per
// byte of its token: some 40 bytes a byte).
size_t answer_bytes(const RequestEvent& event) {
  size_t bytes = event.text.size();
  const auto entry_bytes = [](const std::string& piece) { return 320 + 41 * piece.size(); };
  for (const TokenLogprob& entry : event.logprobs) {
    bytes += entry_bytes(entry.piece);
    for (const TopLogprob& alternative : entry.top) bytes += entry_bytes(alternative.piece);
  }
  return bytes;
}

class Choices {
 public:
  explicit Choices(const GenerationJob& job) : completions_(static_cast<size_t>(std::max(job.choices, 1))) {
    for (size_t i = 0; i < completions_.size(); ++i) {
      completions_[i].choice = static_cast<int32_t>(i);
      completions_[i].prompt = job.prompt.tokens;
    }
    remaining_ = completions_.size();
  }

  // Fails when the answer would pass the request's memory (core/memory_budget.h).
  Status on_text(const RequestEvent& event) {
    SINTER_TRY(charge_current_account(answer_bytes(event)));
    Completion& completion = at(event.choice);
    completion.text += event.text;
    completion.logprobs.insert(completion.logprobs.end(), event.logprobs.begin(), event.logprobs.end());
    return ok_status();
  }

  // A choice's final event: its completion filled in (all_done() tells whether it was the last).
  Completion& on_done(RequestEvent& event, const GenerationJob& job) {
    Completion& completion = at(event.choice);
    completion.tokens = std::move(event.tokens);
    completion.stats = event.stats;
    completion.load_ns = job.lease.load_ns();
    completion.total_ns = nanoseconds_since(job.arrived);
    --remaining_;
    return completion;
  }
  bool all_done() const { return remaining_ == 0; }
  const std::vector<Completion>& all() const { return completions_; }

 private:
  Completion& at(int32_t choice) {
    return completions_[std::min(static_cast<size_t>(std::max(choice, 0)), completions_.size() - 1)];
  }

  std::vector<Completion> completions_;
  size_t remaining_ = 0;
};

// The state of one streamed answer, shared by the stream's pump and its end callback.
class StreamingAnswer {
 public:
  StreamingAnswer(ServerState& server, GenerationJob job, std::shared_ptr<RequestStream> stream)
      : server_(server), job_(std::move(job)), stream_(std::move(stream)), choices_(job_) {}

  // Writes what the scheduler produced since the last call.
  http::PumpResult pump(http::ChunkSink& sink) {
    if (!began_) {
      began_ = true;
      last_write_ = Clock::now();
      if (!write(sink, job_.shape->stream_begin(job_.choices))) return http::PumpResult::kAbandoned;
    }
    for (;;) {
      if (server_.stopping.load() || past_time_limit(server_, job_)) {
        stream_->cancel();
        write(sink, job_.shape->stream_error(server_.stopping.load() ? "the server is shutting down"
                                                                     : time_limit_message(server_)));
        return end();
      }
      std::optional<RequestEvent> event = stream_->pop(kPollInterval);
      if (!event) {
        // Nothing new: hand control back (the transport checks the client, then calls again).
        if (Clock::now() - last_write_ >= kKeepaliveInterval &&
            !write(sink, job_.shape->stream_keepalive())) {
          return http::PumpResult::kAbandoned;
        }
        return http::PumpResult::kMore;
      }
      switch (event->kind) {
        case RequestEvent::Kind::kText:
          if (Status kept = choices_.on_text(*event); !kept) {
            stream_->cancel();
            write(sink, job_.shape->stream_error(kept.error().message()));
            return end();
          }
          if (event->text.empty() && event->logprobs.empty()) break;
          if (!write(sink, job_.shape->stream_piece(event->choice, event->text, event->logprobs))) {
            return http::PumpResult::kAbandoned;
          }
          break;
        case RequestEvent::Kind::kDone: {
          if (event->stats.stop_reason == StopReason::kCancelled) return http::PumpResult::kAbandoned;
          const Completion& completion = choices_.on_done(*event, job_);
          if (!write(sink, job_.shape->stream_choice_end(completion))) return http::PumpResult::kAbandoned;
          if (!choices_.all_done()) break;
          if (!write(sink, job_.shape->stream_end(choices_.all()))) return http::PumpResult::kAbandoned;
          return end();
        }
        case RequestEvent::Kind::kError:
          stream_->cancel();
          log_warn("server", job_.lease->file.name, ": generation failed: ", event->text);
          write(sink, job_.shape->stream_error(event->text));
          return end();
      }
    }
  }

  // The stream is over: `completed` false when the client went away or a write failed.
  void on_end(bool completed) {
    if (!completed || !finished_) {
      stream_->cancel();
      if (!finished_ && job_.lease) server_.metrics->record_cancelled(job_.lease->file.name);
    }
    job_.lease.release();
  }

 private:
  bool write(http::ChunkSink& sink, const std::string& data) {
    if (data.empty()) return true;
    if (!sink.write(data)) {
      stream_->cancel();
      return false;
    }
    last_write_ = Clock::now();
    return true;
  }

  http::PumpResult end() {
    finished_ = true;
    // The request is over: let keep_alive 0 unload the model without waiting for the socket.
    job_.lease.release();
    return http::PumpResult::kFinished;
  }

  ServerState& server_;
  GenerationJob job_;
  std::shared_ptr<RequestStream> stream_;
  Choices choices_;
  bool began_ = false;
  bool finished_ = false;
  Clock::time_point last_write_;
};

}  // namespace

int http_status_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kContextFull:
    case ErrorCode::kUnsupported: return 400;
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kTooLarge: return 413;
    case ErrorCode::kBusy:
    case ErrorCode::kCancelled: return 503;
    default: return 500;
  }
}

void reply_json(http::Response& res, const nlohmann::ordered_json& body, int status) {
  res.status = status;
  res.set_content(dump_json(body), "application/json; charset=utf-8");
}

void reply_error(http::Response& res, int status, const std::string& message) {
  reply_json(res, {{"error", message}}, status);
}

void reply_error(http::Response& res, const Error& error) {
  set_retry_after(res, error);
  reply_error(res, http_status_for(error.code()), error.message());
}

void reply_openai_error(http::Response& res, int status, const std::string& message) {
  reply_openai_error(res, status, message, nullptr, nullptr);
}

void reply_openai_error(http::Response& res, int status, const std::string& message, const Json& param,
                        const Json& code) {
  reply_json(
      res,
      {{"error",
        {{"message", message}, {"type", openai_error_type(status)}, {"param", param}, {"code", code}}}},
      status);
}

void reply_openai_error(http::Response& res, const Error& error) {
  set_retry_after(res, error);
  const OpenAiErrorFields fields = openai_error_fields(error);
  reply_openai_error(res, http_status_for(error.code()), error.message(), fields.param, fields.code);
}

OpenAiErrorFields openai_error_fields(const Error& error) {
  const std::string& message = error.message();
  OpenAiErrorFields fields;
  // Messages about a request field start with its name ("temperature must be in [0, 2], got 3",
  // "logit_bias[\"5\"] must be ...", "n is 3 but ..."): that name is the param.
  const size_t end = message.find_first_of(" :");
  const std::string first = message.substr(0, end);
  const bool names_field = end != std::string::npos && !first.empty() &&
                           std::all_of(first.begin(), first.end(),
                                       [](char c) {
                                         return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                                                c == '_' || c == '.' || c == '[' || c == ']' || c == '"';
                                       }) &&
                           (message.compare(end, 6, " must ") == 0 || message.compare(end, 4, " is ") == 0 ||
                            message.compare(end, 5, " are ") == 0 || message.compare(end, 6, " needs") == 0 ||
                            message[end] == ':');
  if (names_field) fields.param = first.substr(0, first.find_first_of("[."));
  switch (error.code()) {
    case ErrorCode::kNotFound:
      if (message.rfind("model ", 0) == 0) {
        fields.param = "model";
        fields.code = "model_not_found";
      }
      break;
    case ErrorCode::kContextFull: fields.code = "context_length_exceeded"; break;
    case ErrorCode::kBusy: fields.code = "server_busy"; break;
    case ErrorCode::kInvalidArgument:
      if (names_field)
        fields.code =
            message.find("not supported") != std::string::npos ? "unsupported_parameter" : "invalid_value";
      break;
    default: break;
  }
  return fields;
}

double logprob_json(float logprob) { return std::isfinite(logprob) ? logprob : -9999.0; }

namespace {

nlohmann::ordered_json token_json(const std::string& piece, float logprob) {
  nlohmann::ordered_json bytes = nlohmann::ordered_json::array();
  for (unsigned char c : piece) bytes.push_back(static_cast<int>(c));
  return {{"token", piece}, {"logprob", logprob_json(logprob)}, {"bytes", bytes}};
}

}  // namespace

nlohmann::ordered_json logprobs_json(const std::vector<TokenLogprob>& entries) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const TokenLogprob& entry : entries) {
    nlohmann::ordered_json item = token_json(entry.piece, entry.logprob);
    nlohmann::ordered_json top = nlohmann::ordered_json::array();
    for (const TopLogprob& alternative : entry.top)
      top.push_back(token_json(alternative.piece, alternative.logprob));
    item["top_logprobs"] = std::move(top);
    out.push_back(std::move(item));
  }
  return out;
}

const char* finish_reason(StopReason reason) {
  switch (reason) {
    case StopReason::kMaxTokens:
    case StopReason::kContextFull: return "length";
    default: return "stop";
  }
}

void run_generation(ServerState& state, GenerationJob job, const http::Request& req, http::Response& res) {
  SchedulerRequest request;
  request.prompt = job.prompt.tokens;
  request.prompt_has_bos = job.prompt.has_bos;
  request.options = job.options;
  request.n = job.choices;
  request.client = req.client_address;
  auto submitted = job.lease->scheduler->submit(std::move(request));
  if (!submitted) {
    if (submitted.error().code() == ErrorCode::kBusy)
      log_info("server", job.lease->file.name, ": queue full, 503");
    job.shape->error(res, submitted.error());
    return;
  }
  std::shared_ptr<RequestStream> stream = std::move(submitted).value();

  if (job.stream) {
    const std::string content_type = job.shape->stream_content_type();
    auto answer = std::make_shared<StreamingAnswer>(state, std::move(job), std::move(stream));
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.stream =
        http::StreamingBody{content_type, [answer](http::ChunkSink& sink) { return answer->pump(sink); },
                            [answer](bool completed) { answer->on_end(completed); }};
    return;
  }

  Choices choices(job);
  while (!choices.all_done()) {
    if (state.stopping.load()) {
      stream->cancel();
      job.shape->error(res, Error(ErrorCode::kCancelled, "the server is shutting down"));
      return;
    }
    if (past_time_limit(state, job)) {
      stream->cancel();
      job.shape->error(res, Error(ErrorCode::kCancelled, time_limit_message(state)));
      return;
    }
    if (req.client_gone()) {
      // Nobody will read the answer: free the slot (or the queue place) now.
      stream->cancel();
      state.metrics->record_cancelled(job.lease->file.name);
      res.status = 499;
      return;
    }
    std::optional<RequestEvent> event = stream->pop(kPollInterval);
    if (!event) continue;
    if (event->kind == RequestEvent::Kind::kText) {
      if (Status kept = choices.on_text(*event); !kept) {
        stream->cancel();
        job.shape->error(res, kept.error());
        return;
      }
    } else if (event->kind == RequestEvent::Kind::kError) {
      stream->cancel();
      log_warn("server", job.lease->file.name, ": generation failed: ", event->text);
      job.shape->error(res, Error(event->error_code, event->text));
      return;
    } else {
      choices.on_done(*event, job);
    }
  }
  job.lease.release();
  reply_json(res, job.shape->whole(choices.all()));
}

}  // namespace sinter::server
