// SHA-256 (FIPS 180-4) of a small buffer, for the digests Ollama gives its manifests. Model
// blobs are never hashed: that would take minutes for large models (see server/ollama_store.h).
#pragma once

#include <string>
#include <string_view>

namespace sinter::server {

// 64 lower-case hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace sinter::server
