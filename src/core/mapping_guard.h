// Turning a bus error on a file mapping into that file's error, instead of the process's death.
//
// Reading a page of a mapped file past the file's end raises SIGBUS: it happens when the file
// is truncated while mapped (copying a new model over the one a server has loaded does this).
// A region registered here is guarded: on SIGBUS inside it, the handler maps anonymous zero
// pages over the region from the faulting page to its end (so the read, re-executed, finds
// zeros), and sets the region's `damaged` flag. The code that uses the mapping checks the flag
// after its reads (a forward pass) and reports the file as changed; nothing else is affected.
// A SIGBUS anywhere else goes to the handler that was installed before, or kills as usual.
#pragma once

#include <atomic>
#include <cstddef>

namespace sinter {

// Registers [begin, begin + bytes) (a whole mapping); -1 when the registry is full (the region is
// then unguarded). Installs the SIGBUS handler on first use. Thread-safe.
int guard_mapping(const void* begin, size_t bytes, std::atomic<bool>* damaged);
// Before the region is unmapped.
void unguard_mapping(int handle);

}  // namespace sinter
