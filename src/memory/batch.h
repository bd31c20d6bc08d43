// A forward pass's batch as every layer below the runtime sees it: each entry a token of some
// sequence at some position, given as a token id or as an embedding row (an image's encoder
// output placed among the text), with up to four position streams for models whose RoPE has
// sections (M-RoPE: time, height, width); and the graph inputs that each part of the memory (and
// the batch itself) fills before the pass.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/token.h"
#include "graph/tensor.h"
#include "sinter/result.h"

namespace sinter {

// Position streams of an entry: stream 0 is its position in the sequence.
inline constexpr int kMaxPositionStreams = 4;

struct BatchEntry {
  TokenId token = 0;
  Position position = 0;
  SequenceId sequence = 0;
  bool want_logits = false;
  // An embedding row (n_embd floats, owned by the caller for the pass) taken instead of the
  // token's: the token id is then ignored.
  const float* embedding = nullptr;
  // Positions of streams 1..3 (M-RoPE's height, width, extra); kSamePosition (a text token):
  // `position` again. Read only by models whose graph asks for several streams.
  static constexpr Position kSamePosition = -1;
  std::array<Position, kMaxPositionStreams - 1> more_positions{kSamePosition, kSamePosition, kSamePosition};
  Position stream_position(int stream) const {
    if (stream == 0) return position;
    const Position p = more_positions[static_cast<size_t>(stream - 1)];
    return p == kSamePosition ? position : p;
  }
};

// A graph input that writes its values before each pass: the token ids or embedding rows and the
// positions of the batch, the KV cells of each token, the attention index, the recurrent state
// slots. Whoever makes an input keeps what it needs to fill it; the runtime only calls fill().
class PassInput {
 public:
  explicit PassInput(Tensor* tensor) : tensor_(tensor) {}
  virtual ~PassInput() = default;
  PassInput(const PassInput&) = delete;
  PassInput& operator=(const PassInput&) = delete;

  // Writes the input's values for the pass: nothing when the graph does not read it (an input
  // pruned from the graph has no storage).
  Status fill(std::span<const BatchEntry> batch) {
    return tensor_->buffer == nullptr ? ok_status() : set(batch);
  }
  Tensor* tensor() const { return tensor_; }

 protected:
  virtual Status set(std::span<const BatchEntry> batch) = 0;
  Tensor* tensor_;
};

}  // namespace sinter
