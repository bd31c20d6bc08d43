#include "core/mapping_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>

namespace sinter {
namespace {

// The signal handler reads the registry without a lock: every field is an atomic, and a slot is
// published by its `begin` (written last, cleared first).
struct Region {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<std::atomic<bool>*> damaged{nullptr};
};

constexpr int kRegions = 1024;
Region regions[kRegions];
std::mutex registry_mutex;
struct sigaction previous_action;
bool installed = false;

void pass_on(int signal, siginfo_t* info, void* context) {
  if ((previous_action.sa_flags & SA_SIGINFO) != 0 && previous_action.sa_sigaction != nullptr) {
    previous_action.sa_sigaction(signal, info, context);
    return;
  }
  if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN &&
      previous_action.sa_handler != nullptr) {
    previous_action.sa_handler(signal);
    return;
  }
  // The default action: returning re-executes the faulting read, which now kills the process.
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(SIGBUS, &fallback, nullptr);
}

void on_bus_error(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (Region& region : regions) {
    const uintptr_t begin = region.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin) continue;
    const uintptr_t end = region.end.load(std::memory_order_acquire);
    if (address >= end) continue;
    const uintptr_t first = address / page * page;
    const uintptr_t last = (end + page - 1) / page * page;
    // mmap is a plain system call on Linux, safe here in practice (not on POSIX's list).
    void* zeros = mmap(reinterpret_cast<void*>(first), last - first, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (zeros == MAP_FAILED) break;
    if (std::atomic<bool>* damaged = region.damaged.load(std::memory_order_acquire)) damaged->store(true);
    return;
  }
  pass_on(signal, info, context);
}

}  // namespace

int guard_mapping(const void* begin, size_t bytes, std::atomic<bool>* damaged) {
  if (begin == nullptr || bytes == 0) return -1;
  std::lock_guard<std::mutex> lock(registry_mutex);
  if (!installed) {
    struct sigaction action {};
    action.sa_sigaction = on_bus_error;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGBUS, &action, &previous_action) != 0) return -1;
    installed = true;
  }
  for (int i = 0; i < kRegions; ++i) {
    Region& region = regions[i];
    if (region.begin.load(std::memory_order_relaxed) != 0) continue;
    region.damaged.store(damaged, std::memory_order_release);
    region.end.store(reinterpret_cast<uintptr_t>(begin) + bytes, std::memory_order_release);
    region.begin.store(reinterpret_cast<uintptr_t>(begin), std::memory_order_release);
    return i;
  }
  return -1;
}

void unguard_mapping(int handle) {
  if (handle < 0 || handle >= kRegions) return;
  std::lock_guard<std::mutex> lock(registry_mutex);
  regions[handle].begin.store(0, std::memory_order_release);
  regions[handle].end.store(0, std::memory_order_release);
  regions[handle].damaged.store(nullptr, std::memory_order_release);
}

}  // namespace sinter
