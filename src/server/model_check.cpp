#include "server/model_check.h"

#include "core/log.h"
#include "gguf/gguf_file.h"
#include "runtime/diagnosis.h"

namespace sinter::server {

std::optional<std::string> diagnose_model_file(const std::string& path, const std::string& backend) {
  auto file = GgufFile::open(path);
  if (!file) return file.error().message();
  DiagnosisOptions options;
  options.backend = backend;
  // The memory estimate plans one pass; a tiny one costs nothing and says the same here.
  options.n_ctx = 16;
  options.n_batch = 1;
  const Diagnosis diagnosis = diagnose(*file, options);
  if (diagnosis.loadable) return std::nullopt;
  for (const DiagnosisIssue& issue : diagnosis.issues) {
    if (issue.severity == "error") return issue.message;
  }
  return "the diagnosis found it cannot be loaded";
}

void ModelCheck::check(ModelFile& file) {
  const std::string version = file.digest.empty() ? file.path : file.digest;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const auto it = verdicts_.find(version); it != verdicts_.end()) {
      if (!file.broken) file.broken = it->second;
      return;
    }
  }
  // Outside the lock: opening a large file's header takes a moment.
  std::optional<std::string> verdict = file.broken;
  if (!verdict) verdict = diagnose_model_file(file.path, backend_);
  std::lock_guard<std::mutex> lock(mutex_);
  const bool first = verdicts_.emplace(version, verdict).second;
  if (first && verdict) log_warn("server", file.name, " is not offered: ", *verdict);
  file.broken = verdict;
}

}  // namespace sinter::server
