#include "runtime/request_stream.h"

namespace sinter {

void RequestStream::push(RequestEvent event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(event));
  }
  ready_.notify_one();
}

std::optional<RequestEvent> RequestStream::pop(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return std::nullopt;
  RequestEvent event = std::move(events_.front());
  events_.pop_front();
  return event;
}

std::vector<RequestEvent> RequestStream::drain() {
  std::vector<RequestEvent> events;
  int32_t finished = 0;
  for (;;) {
    auto event = pop(std::chrono::milliseconds(1000));
    if (!event) continue;
    if (event->kind != RequestEvent::Kind::kText) ++finished;
    events.push_back(std::move(*event));
    if (finished >= choices_) return events;
  }
}

}  // namespace sinter
