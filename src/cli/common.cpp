#include "cli/common.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace sinter::cli {

Result<std::vector<TokenId>> parse_ids(const std::string& text) {
  std::vector<TokenId> ids;
  size_t i = 0;
  const auto skip = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '[' || text[i] == ']' || text[i] == '\n')) ++i;
  };
  skip();
  while (i < text.size()) {
    const char* start = text.c_str() + i;
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(start, &end, 10);
    if (end == start || errno != 0 || value < INT32_MIN || value > INT32_MAX) {
      return make_error(ErrorCode::kInvalidArgument, "not a token id list at character ", i, ": '", text, "'");
    }
    ids.push_back(static_cast<TokenId>(value));
    i = static_cast<size_t>(end - text.c_str());
    skip();
    if (i < text.size()) {
      if (text[i] != ',') return make_error(ErrorCode::kInvalidArgument, "expected ',' at character ", i, " of '", text, "'");
      ++i;
      skip();
    }
  }
  return ids;
}

Result<DType> parse_kv_type(const std::string& name) {
  const auto type = dtype_from_name(name);
  if (!type || (*type != DType::F16 && *type != DType::F32 && *type != DType::BF16)) {
    return make_error(ErrorCode::kInvalidArgument, "KV cache type must be f16, bf16 or f32, not '", name, "'");
  }
  return *type;
}

void softmax_double(std::span<const float> logits, std::vector<double>& out) {
  out.resize(logits.size());
  float max_logit = -INFINITY;
  for (float l : logits) max_logit = std::max(max_logit, l);
  double sum = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    out[i] = std::exp(static_cast<double>(logits[i]) - static_cast<double>(max_logit));
    sum += out[i];
  }
  for (double& p : out) p /= sum;
}

std::string json_ids(std::span<const TokenId> ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out + "]";
}

}  // namespace sinter::cli
