#include "server/http/worker_cpu.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sinter::server::http {
namespace {

bool cpu_time(clockid_t clock, std::chrono::nanoseconds& out) {
  timespec now{};
  if (clock_gettime(clock, &now) != 0) return false;
  out = std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
  return true;
}

thread_local WorkerCpuWatch* current_watch_ = nullptr;
thread_local WorkerCpuWatch::Worker* current_worker_ = nullptr;

}  // namespace

WorkerCpuWatch* WorkerCpuWatch::current_watch() { return current_watch_; }
WorkerCpuWatch::Worker* WorkerCpuWatch::current_worker() { return current_worker_; }

WorkerCpuWatch::Worker* WorkerCpuWatch::add() {
  Worker worker;
  worker.tid = static_cast<pid_t>(::syscall(SYS_gettid));
  worker.clock_ok = pthread_getcpuclockid(pthread_self(), &worker.clock) == 0;
  std::lock_guard<std::mutex> lock(mutex_);
  workers_.push_back(worker);
  return &workers_.back();
}

void WorkerCpuWatch::remove(Worker* worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  workers_.remove_if([worker](const Worker& w) { return &w == worker; });
}

void WorkerCpuWatch::begin(Worker* worker) {
  std::chrono::nanoseconds now{0};
  const bool read = worker->clock_ok && cpu_time(worker->clock, now);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    worker->start = now;
    worker->serving = read;
  }
  current_watch_ = this;
  current_worker_ = worker;
}

bool WorkerCpuWatch::end(Worker* worker) {
  current_watch_ = nullptr;
  current_worker_ = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  worker->serving = false;
  return worker->demoted;
}

UncountedCpu::UncountedCpu()
    : watch_(WorkerCpuWatch::current_watch()), worker_(WorkerCpuWatch::current_worker()) {
  if (watch_ == nullptr) return;
  // Not serving (for the sweep) until the destructor begins a fresh count.
  watch_->end(worker_);
}

UncountedCpu::~UncountedCpu() {
  if (watch_ != nullptr) watch_->begin(worker_);
}

size_t WorkerCpuWatch::sweep(std::chrono::nanoseconds limit) {
  if (limit.count() <= 0) return 0;
  size_t demoted = 0;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Worker& worker : workers_) {
    if (!worker.serving || worker.demoted) continue;
    std::chrono::nanoseconds now{0};
    // The thread is registered, so it has not exited and its clock is valid.
    if (!cpu_time(worker.clock, now) || now - worker.start < limit) continue;
    worker.demoted = true;  // once tried, whatever setpriority says: a failure would repeat
    if (::setpriority(PRIO_PROCESS, static_cast<id_t>(worker.tid), kDemotedNice) == 0) ++demoted;
  }
  demoted_total_ += demoted;
  return demoted;
}

size_t WorkerCpuWatch::demoted_total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return demoted_total_;
}

}  // namespace sinter::server::http
