// allOf: the components merged into one schema, keyword by keyword, so that the converter can
// generate values that satisfy all of them. Only merges whose result is exactly (or a subset of)
// the conjunction are made; anything else is a kUnsupported error naming the keyword and path.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "sinter/result.h"

namespace sinter::json_schema {

// A local $ref's target (or an error naming the ref and the path it was met at).
using RefResolver =
    std::function<Result<const nlohmann::ordered_json*>(const std::string& ref, const std::string& path)>;

// `schema` with its allOf (and, in its components, their $ref and nested allOf) merged away.
// `budget` bounds how many refs and nested allOf are followed (cycles end there).
Result<nlohmann::ordered_json> merge_all_of(const nlohmann::ordered_json& schema, const std::string& path,
                                            const RefResolver& resolve, int budget);

// Keywords that only annotate (title, description, ...): ignored by the converter and the merge.
bool is_annotation_keyword(const std::string& keyword);

}  // namespace sinter::json_schema
