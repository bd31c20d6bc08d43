// Ids shared by every layer that deals in tokens and sequences.
#pragma once

#include <cstdint>

namespace sinter {

using TokenId = int32_t;     // index into the model's vocabulary
using Position = int32_t;    // position of a token in its sequence (0-based)
using SequenceId = int32_t;  // a sequence served by the engine (0-based)

constexpr TokenId kNoToken = -1;

}  // namespace sinter
