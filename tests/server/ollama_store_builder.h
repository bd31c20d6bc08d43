// Test support: a small Ollama model store written in Ollama's layout (blobs named by their
// SHA-256, a manifest per name and tag), as `ollama pull` leaves it.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "server/sha256.h"

namespace sinter::testing {

class OllamaStoreBuilder {
 public:
  using Json = nlohmann::ordered_json;

  explicit OllamaStoreBuilder(std::string dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_ + "/blobs");
  }
  const std::string& dir() const { return dir_; }

  // Writes `content` as a blob; the layer that names it ("model", "template", "params", ...).
  Json layer(const std::string& kind, const std::string& content) {
    const std::string hex = server::sha256_hex(content);
    std::ofstream(dir_ + "/blobs/sha256-" + hex, std::ios::binary) << content;
    return Json{{"mediaType", "application/vnd.ollama.image." + kind},
                {"digest", "sha256:" + hex},
                {"size", content.size()}};
  }
  // A layer with a file's bytes (a GGUF model).
  Json file_layer(const std::string& kind, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return layer(kind, bytes.str());
  }
  // DIR/manifests/<path> ("registry.ollama.ai/library/stories/latest") listing `layers`; returns
  // the manifest's text.
  std::string manifest(const std::string& path, const Json& layers) {
    const Json config = layer("config", R"({"model_format":"gguf","model_family":"llama"})");
    Json manifest{{"schemaVersion", 2},
                  {"mediaType", "application/vnd.docker.distribution.manifest.v2+json"},
                  {"config",
                   {{"mediaType", "application/vnd.docker.container.image.v1+json"},
                    {"digest", config["digest"]},
                    {"size", config["size"]}}},
                  {"layers", layers}};
    const std::string full = dir_ + "/manifests/" + path;
    std::filesystem::create_directories(std::filesystem::path(full).parent_path());
    const std::string text = manifest.dump();
    std::ofstream(full, std::ios::binary) << text;
    return text;
  }

 private:
  std::string dir_;
};

}  // namespace sinter::testing
