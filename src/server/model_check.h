// Whether a model offered by a folder (--models) or an Ollama store can be served, decided
// before it is loaded: the GGUF header is read and diagnosed (runtime/diagnosis.h) without
// touching the weights. A broken model is left out of the listings (/api/tags, /v1/models), and
// asking for it by name gives the reason. Verdicts are kept per file version
// (ModelFile::digest), and each broken version is logged once.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "server/model_manager.h"

namespace sinter::server {

// Why the GGUF file at `path` cannot run on `backend`, or nullopt when it can.
std::optional<std::string> diagnose_model_file(const std::string& path, const std::string& backend);

class ModelCheck {
 public:
  explicit ModelCheck(std::string backend) : backend_(std::move(backend)) {}
  // Sets `file.broken` when the file cannot be served (a reason already there is kept).
  void check(ModelFile& file);

 private:
  std::string backend_;
  std::mutex mutex_;
  std::map<std::string, std::optional<std::string>> verdicts_;  // by file version
};

}  // namespace sinter::server
