// The batch's own graph inputs (model/batch_inputs.h): token ids (none read for embedding rows),
// positions in one stream or M-RoPE's several, output rows, embedding rows and their mask.
#include "model/batch_inputs.h"

#include <gtest/gtest.h>

#include "backend/backend.h"
#include "backend/buffer.h"

namespace sinter {
namespace {

// A tensor of `count` values of `type` in a CPU buffer of its own.
struct HostTensor {
  HostTensor(DType type, int64_t ne0, int64_t ne1 = 1) {
    static const std::unique_ptr<Backend> backend = create_backend("cpu", BackendOptions{1}).value();
    tensor = make_persistent("t", type, {ne0, ne1, 1, 1}, nullptr);
    buffer = backend->allocate(BufferUsage::kCompute, tensor.bytes()).value();
    bind_tensor(tensor, *buffer, 0);
  }
  template <class T>
  std::vector<T> values() const {
    std::vector<T> out(static_cast<size_t>(tensor.elements()));
    tensor_get(tensor, out.data(), 0, out.size() * sizeof(T));
    return out;
  }
  Tensor tensor;
  std::unique_ptr<Buffer> buffer;
};

std::vector<BatchEntry> batch_of_three() {
  static const float row[4] = {0.5f, -1.0f, 2.0f, 8.0f};
  std::vector<BatchEntry> batch(3);
  batch[0] = {7, 10, 0, false};
  batch[1] = {9, 11, 0, true};
  batch[2] = {123456, 4, 1, true};
  batch[2].embedding = row;
  batch[2].more_positions = {20, 30, BatchEntry::kSamePosition};
  return batch;
}

TEST(BatchInputs, TokensPositionsAndOutputs) {
  const auto batch = batch_of_three();
  HostTensor ids(DType::I32, 3), positions(DType::I32, 3), streams(DType::I32, 12), outputs(DType::I32, 2);
  ASSERT_TRUE(TokenIdsInput(&ids.tensor).fill(batch));
  EXPECT_EQ(ids.values<int32_t>(), (std::vector<int32_t>{7, 9, 0}));  // an embedding row's id is not read
  ASSERT_TRUE(PositionsInput(&positions.tensor, 1).fill(batch));
  EXPECT_EQ(positions.values<int32_t>(), (std::vector<int32_t>{10, 11, 4}));
  // M-RoPE: stream by stream; a text token has its position in every stream.
  ASSERT_TRUE(PositionsInput(&streams.tensor, 4).fill(batch));
  EXPECT_EQ(streams.values<int32_t>(), (std::vector<int32_t>{10, 11, 4, 10, 11, 20, 10, 11, 30, 10, 11, 4}));
  ASSERT_TRUE(OutputIdsInput(&outputs.tensor).fill(batch));
  EXPECT_EQ(outputs.values<int32_t>(), (std::vector<int32_t>{1, 2}));
  HostTensor wrong(DType::I32, 1);
  EXPECT_FALSE(OutputIdsInput(&wrong.tensor).fill(batch));  // a graph sized for another batch
}

TEST(BatchInputs, EmbeddingRowsAndTheirMask) {
  const auto batch = batch_of_three();
  HostTensor rows(DType::F32, 4, 3), keep(DType::F32, 4, 3);
  ASSERT_TRUE(EmbeddingRowsInput(&rows.tensor, &keep.tensor).fill(batch));
  EXPECT_EQ(rows.values<float>(), (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 0.5f, -1.0f, 2.0f, 8.0f}));
  EXPECT_EQ(keep.values<float>(), (std::vector<float>{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}));
  // An input the graph does not read (no storage) is left alone.
  Tensor pruned = make_persistent("pruned", DType::I32, {3, 1, 1, 1}, nullptr);
  EXPECT_TRUE(TokenIdsInput(&pruned).fill(batch));
}

}  // namespace
}  // namespace sinter
