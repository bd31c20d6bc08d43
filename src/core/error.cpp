#include "sinter/result.h"

namespace sinter {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kIo: return "i/o error";
    case ErrorCode::kFormat: return "malformed input";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kContextFull: return "context full";
    case ErrorCode::kCancelled: return "cancelled";
    case ErrorCode::kBusy: return "busy";
    case ErrorCode::kTooLarge: return "too large";
    case ErrorCode::kInternal: return "internal error";
  }
  return "unknown error";
}

}  // namespace sinter
