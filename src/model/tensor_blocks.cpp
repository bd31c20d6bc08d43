#include "model/tensor_blocks.h"

#include <algorithm>
#include <string_view>

namespace sinter {
namespace {

constexpr std::string_view kPrefix = "blk.";
// More digits than any real block number; longer ones are not read as numbers at all.
constexpr size_t kMaxDigits = 10;

// The N of "blk.N.<rest>", or -1 when `name` is not named like a block's tensor.
int64_t block_number(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return -1;
  name.remove_prefix(kPrefix.size());
  size_t digits = 0;
  int64_t n = 0;
  while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') {
    if (digits == kMaxDigits) return -1;
    n = n * 10 + (name[digits] - '0');
    ++digits;
  }
  if (digits == 0 || digits == name.size() || name[digits] != '.') return -1;
  if (digits > 1 && name[0] == '0') return -1;  // "blk.01.": not a name an architecture binds
  return n;
}

}  // namespace

TensorBlocks tensor_blocks(const std::vector<GgufTensorInfo>& tensors) {
  std::vector<int64_t> numbers;  // at most one per tensor: bounded by the file's size
  for (const auto& t : tensors) {
    const int64_t n = block_number(t.name);
    if (n >= 0) numbers.push_back(n);
  }
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  TensorBlocks blocks;
  blocks.count = numbers.size();
  if (numbers.empty()) return blocks;
  blocks.highest = static_cast<uint64_t>(numbers.back());
  blocks.first_absent = blocks.count;
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (numbers[i] != static_cast<int64_t>(i)) {
      blocks.first_absent = i;
      break;
    }
  }
  return blocks;
}

}  // namespace sinter
