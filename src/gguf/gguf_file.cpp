// GgufFile: one parsed file, or the shards of a split model assembled into one, and the naming
// convention of shards.
#include "gguf/gguf_file.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>

#include "gguf/gguf_shard.h"

namespace sinter {
namespace {

// The split.* keys of one shard, as written by llama.cpp's gguf-split (uint16 there; any
// integer type that fits is accepted).
struct SplitKeys {
  std::optional<uint32_t> count;          // split.count: number of shards
  std::optional<uint32_t> index;          // split.no: this shard, 0-based
  std::optional<uint64_t> total_tensors;  // split.tensors.count: tensors in all shards
};

Result<SplitKeys> read_split_keys(const Metadata& metadata, const std::string& path) {
  SplitKeys keys;
  auto count = metadata.find<uint32_t>("split.count");
  if (!count) return count.error().with_context(path);
  auto index = metadata.find<uint32_t>("split.no");
  if (!index) return index.error().with_context(path);
  auto total = metadata.find<uint64_t>("split.tensors.count");
  if (!total) return total.error().with_context(path);
  keys.count = *count;
  keys.index = *index;
  keys.total_tensors = *total;
  if (keys.count && *keys.count == 0) return make_error(ErrorCode::kFormat, path, ": split.count is 0");
  if (keys.index && *keys.index >= keys.count.value_or(1)) {
    return make_error(ErrorCode::kFormat, path, ": split.no ", *keys.index, " is not below split.count ",
                      keys.count.value_or(1));
  }
  return keys;
}

// Parses a decimal uint32 that fills `digits` entirely.
std::optional<uint32_t> parse_number(std::string_view digits) {
  uint32_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

}  // namespace

void GgufFile::add_shard(GgufShard shard, std::shared_ptr<MappedFile> file) {
  if (shards_.empty()) {
    version_ = shard.version;
    alignment_ = shard.alignment;
    metadata_ = std::move(shard.metadata);
  }
  tensors_.reserve(tensors_.size() + shard.tensors.size());
  for (auto& info : shard.tensors) {
    tensor_index_.emplace(info.name, tensors_.size());
    tensors_.push_back(std::move(info));
  }
  shards_.push_back(std::move(file));
}

Result<GgufFile> GgufFile::parse(std::shared_ptr<MappedFile> file) {
  SINTER_ASSIGN(GgufShard shard, parse_gguf_shard(*file, 0));
  GgufFile gguf;
  gguf.add_shard(std::move(shard), std::move(file));
  return gguf;
}

Result<GgufFile> GgufFile::open(const std::string& path) {
  SINTER_ASSIGN(auto file, MappedFile::open(path));
  SINTER_ASSIGN(GgufShard first, parse_gguf_shard(*file, 0));
  SINTER_ASSIGN(const SplitKeys split, read_split_keys(first.metadata, path));
  const uint32_t count = split.count.value_or(1);
  if (split.index.value_or(0) != 0) {
    const auto name = gguf_parse_split_path(path);
    return make_error(ErrorCode::kInvalidArgument, path, " is shard ", *split.index + 1, " of ", count,
                      " of a split model; open the first shard",
                      name ? concat(", ", gguf_split_path(name->prefix, 0, count)) : std::string());
  }
  GgufFile gguf;
  gguf.add_shard(std::move(first), std::move(file));
  if (count == 1) return gguf;

  const auto name = gguf_parse_split_path(path);
  if (!name || name->index != 0 || name->count != count) {
    return make_error(ErrorCode::kFormat, path, " declares split.count ", count, " but is not named like ",
                      gguf_split_path("NAME", 0, count));
  }
  for (uint32_t i = 1; i < count; ++i) {
    const std::string shard_path = gguf_split_path(name->prefix, i, count);
    auto shard_file = MappedFile::open(shard_path);
    if (!shard_file) {
      return shard_file.error().with_context(concat(path, ": shard ", i + 1, " of ", count, " is missing"));
    }
    SINTER_ASSIGN(GgufShard shard, parse_gguf_shard(**shard_file, i));
    SINTER_ASSIGN(const SplitKeys keys, read_split_keys(shard.metadata, shard_path));
    if (keys.count != split.count) {
      return make_error(ErrorCode::kFormat, shard_path, ": split.count is ",
                        keys.count ? std::to_string(*keys.count) : std::string("missing"),
                        " but the first shard says ", count);
    }
    if (keys.index != i) {
      return make_error(ErrorCode::kFormat, shard_path, ": split.no is ",
                        keys.index ? std::to_string(*keys.index) : std::string("missing"), ", expected ", i,
                        " from the file name");
    }
    for (const auto& info : shard.tensors) {
      if (const GgufTensorInfo* earlier = gguf.find_tensor(info.name)) {
        return make_error(ErrorCode::kFormat, shard_path, ": tensor '", info.name, "' also appears in shard ",
                          earlier->shard + 1, " (", gguf.shards_[earlier->shard]->path(), ")");
      }
    }
    gguf.add_shard(std::move(shard), std::move(*shard_file));
  }
  if (split.total_tensors && *split.total_tensors != gguf.tensors_.size()) {
    return make_error(ErrorCode::kFormat, path, ": split.tensors.count is ", *split.total_tensors,
                      " but the ", count, " shards hold ", gguf.tensors_.size(), " tensors");
  }
  return gguf;
}

void GgufFile::release_payload(const void* data, size_t bytes) const {
  for (const auto& shard : shards_) shard->release_pages(data, bytes);  // only the shard holding them acts
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const std::string& GgufFile::path() const {
  static const std::string kNone;
  return shards_.empty() ? kNone : shards_.front()->path();
}

uint64_t GgufFile::file_bytes() const {
  uint64_t total = 0;
  for (const auto& shard : shards_) total += shard->size();
  return total;
}

std::string gguf_split_path(std::string_view prefix, uint32_t index, uint32_t count) {
  char tail[48];
  std::snprintf(tail, sizeof tail, "-%05" PRIu32 "-of-%05" PRIu32 ".gguf", index + 1, count);
  return std::string(prefix) + tail;
}

std::optional<GgufSplitName> gguf_parse_split_path(std::string_view path) {
  constexpr std::string_view kExtension = ".gguf";
  constexpr std::string_view kOf = "-of-";
  if (path.size() < kExtension.size() || path.substr(path.size() - kExtension.size()) != kExtension) {
    return std::nullopt;
  }
  const std::string_view stem = path.substr(0, path.size() - kExtension.size());
  const size_t of = stem.rfind(kOf);
  if (of == std::string_view::npos) return std::nullopt;
  const size_t dash = stem.rfind('-', of == 0 ? 0 : of - 1);
  if (dash == std::string_view::npos || dash >= of) return std::nullopt;
  const auto number = parse_number(stem.substr(dash + 1, of - dash - 1));
  const auto count = parse_number(stem.substr(of + kOf.size()));
  if (!number || !count || *number == 0 || *number > *count) return std::nullopt;
  GgufSplitName name{std::string(stem.substr(0, dash)), *number - 1, *count};
  // Only the canonical spelling (five digits or more, no extra zeros) names a shard.
  if (gguf_split_path(name.prefix, name.index, name.count) != path) return std::nullopt;
  return name;
}

std::string gguf_shard_path(const std::string& first_shard_path, uint32_t index, uint32_t count) {
  const auto name = gguf_parse_split_path(first_shard_path);
  if (!name || name->index != 0 || name->count != count || index >= count) return {};
  return gguf_split_path(name->prefix, index, count);
}

bool GgufFile::damaged() const {
  return std::any_of(shards_.begin(), shards_.end(), [](const auto& shard) { return shard->damaged(); });
}

bool GgufFile::changed_on_disk() const {
  return std::any_of(shards_.begin(), shards_.end(),
                     [](const auto& shard) { return shard->changed_on_disk(); });
}

}  // namespace sinter
