#include "model/batch_inputs.h"

#include <algorithm>
#include <cstring>

#include "backend/buffer.h"

namespace sinter {

Status TokenIdsInput::set(std::span<const BatchEntry> batch) {
  values_.resize(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) values_[i] = batch[i].embedding != nullptr ? 0 : batch[i].token;
  tensor_set(*tensor_, values_.data(), values_.size());
  return ok_status();
}

Status PositionsInput::set(std::span<const BatchEntry> batch) {
  values_.resize(batch.size() * static_cast<size_t>(streams_));
  for (int s = 0; s < streams_; ++s) {
    for (size_t i = 0; i < batch.size(); ++i)
      values_[static_cast<size_t>(s) * batch.size() + i] = batch[i].stream_position(s);
  }
  tensor_set(*tensor_, values_.data(), values_.size());
  return ok_status();
}

Status OutputIdsInput::set(std::span<const BatchEntry> batch) {
  values_.clear();
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].want_logits) values_.push_back(static_cast<int32_t>(i));
  }
  if (values_.empty()) values_.push_back(static_cast<int32_t>(batch.size()) - 1);
  if (static_cast<int64_t>(values_.size()) != tensor_->ne[0]) {
    return make_error(ErrorCode::kInternal, "the pass wants ", values_.size(), " output rows, its graph ",
                      tensor_->ne[0]);
  }
  tensor_set(*tensor_, values_.data(), values_.size());
  return ok_status();
}

Status EmbeddingRowsInput::set(std::span<const BatchEntry> batch) {
  const auto width = static_cast<size_t>(tensor_->ne[0]);
  values_.assign(width * batch.size(), 0.0f);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].embedding != nullptr)
      std::memcpy(&values_[i * width], batch[i].embedding, width * sizeof(float));
  }
  tensor_set(*tensor_, values_.data(), values_.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    std::fill_n(values_.begin() + static_cast<ptrdiff_t>(i * width), width,
                batch[i].embedding != nullptr ? 0.0f : 1.0f);
  }
  if (keep_->buffer != nullptr) tensor_set(*keep_, values_.data(), values_.size());
  return ok_status();
}

}  // namespace sinter
