// Keeps one request from starving the others of processor time. A worker that has spent more
// than a set amount of CPU on its current request (a template that renders for long, a huge
// body's parse, a costly grammar) is moved to the lowest scheduling priority (nice 19) for the
// rest of that request: the model's compute threads and the workers of other requests then go
// first, and the heavy request still runs whenever the processors have time. An unprivileged
// process cannot raise a thread's priority again, so a demoted worker leaves after its request
// and the pool starts a fresh one when needed.
//
// Workers register themselves; the transport's I/O thread calls sweep() a few times a second.
// Model compute that a worker runs itself (an embedding pass, under the model's lock) is not
// counted (UncountedCpu): demoting it would slow every request waiting for that lock.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <chrono>
#include <list>
#include <mutex>

namespace sinter::server::http {

class WorkerCpuWatch {
 public:
  // The nice value a heavy request's worker runs at.
  static constexpr int kDemotedNice = 19;

  struct Worker {
    pid_t tid = 0;
    clockid_t clock{};      // the thread's CPU-time clock
    bool clock_ok = false;  // the clock could be read (false: never demoted)
    bool serving = false;   // between begin() and end()
    bool demoted = false;
    std::chrono::nanoseconds start{0};  // CPU time at begin()
  };

  // The calling thread joins (and leaves with remove()); the handle stays valid until then.
  Worker* add();
  void remove(Worker* worker);
  // The calling thread's worker starts and ends a request; end() says whether it was demoted.
  void begin(Worker* worker);
  bool end(Worker* worker);
  // Demotes each serving worker past `limit` of CPU on its request (a zero limit: none); returns
  // how many it demoted now.
  size_t sweep(std::chrono::nanoseconds limit);
  // Requests demoted so far.
  size_t demoted_total() const;
  // The calling thread's worker and watch while it serves a request (null otherwise).
  static WorkerCpuWatch* current_watch();
  static Worker* current_worker();

 private:
  mutable std::mutex mutex_;
  std::list<Worker> workers_;
  size_t demoted_total_ = 0;
};

// While one lives, the calling worker's CPU time does not count toward its request's share; the
// count starts again from zero after it. Nothing on a thread that is not serving a request.
class UncountedCpu {
 public:
  UncountedCpu();
  ~UncountedCpu();
  UncountedCpu(const UncountedCpu&) = delete;
  UncountedCpu& operator=(const UncountedCpu&) = delete;

 private:
  WorkerCpuWatch* watch_;
  WorkerCpuWatch::Worker* worker_;
};

}  // namespace sinter::server::http
