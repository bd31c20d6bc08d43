#include "memory/memory_plan.h"

namespace sinter {

uint64_t usable_memory(uint64_t available) { return available - available / 8; }

Status check_context_fits(const ContextMemory& need, const std::optional<AvailableMemory>& available) {
  if (!available) return ok_status();
  const uint64_t usable = usable_memory(available->bytes);
  if (need.total() <= usable) return ok_status();
  return make_error(ErrorCode::kInvalidArgument, "a context of ", need.n_ctx, " tokens needs ",
                    format_bytes(need.total()), " of memory (KV cache ", format_bytes(need.kv_bytes),
                    ", cell bookkeeping ", format_bytes(need.bookkeeping_bytes), ", compute buffers ",
                    format_bytes(need.compute_bytes), ") but only ", format_bytes(available->bytes),
                    " is available (", available->source, "), of which a context may take 7/8 (",
                    format_bytes(usable), "); use a smaller context");
}

}  // namespace sinter
