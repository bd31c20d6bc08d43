// Parsing and printing helpers shared by the subcommands.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/token.h"
#include "sinter/result.h"
#include "tensor/dtype.h"

namespace sinter::cli {

// "1,2,3" (spaces and a surrounding [ ] allowed) -> ids.
Result<std::vector<TokenId>> parse_ids(const std::string& text);
Result<DType> parse_kv_type(const std::string& name);
// Softmax computed in double with the maximum subtracted.
void softmax_double(std::span<const float> logits, std::vector<double>& out);
std::string json_ids(std::span<const TokenId> ids);  // "[1,2,3]"

}  // namespace sinter::cli
