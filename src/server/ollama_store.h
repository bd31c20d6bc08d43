// An Ollama model store read as it lies on disk, so that the models a user pulled with Ollama
// are served unchanged (`sinter serve --ollama-models [DIR]`).
//
// The layout (Ollama's server/manifest and server/images):
//   DIR/manifests/<host>/<namespace>/<model>/<tag>   a JSON manifest:
//     {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
//      "config": {"mediaType", "digest": "sha256:<hex>", "size"},
//      "layers": [{"mediaType": "application/vnd.ollama.image.<kind>", "digest", "size"}, ...]}
//   DIR/blobs/sha256-<hex>                            the layers' contents
// Layer kinds: model (the GGUF file), template (Go text/template; "prompt" in old stores),
// system (text), params (a JSON object of options), messages (a JSON array of {role, content}),
// license (text); adapter and projector are not supported: such a model is listed as broken.
//
// Model names follow Ollama's: [host/][namespace/]model[:tag], host registry.ollama.ai,
// namespace library and tag latest by default, listed as short as that allows ("llama3.2:3b",
// "user/model:tag", "example.com/ns/model:tag").
//
// Blobs are checked to exist with the size the manifest gives; their SHA-256 is not verified:
// hashing a model of several GB on every listing would take minutes (`ollama pull` verified it
// when it wrote the blob).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/model_manager.h"
#include "sinter/result.h"

namespace sinter::server {

inline constexpr std::string_view kOllamaDefaultHost = "registry.ollama.ai";
inline constexpr std::string_view kOllamaDefaultNamespace = "library";
inline constexpr std::string_view kOllamaDefaultTag = "latest";

struct OllamaName {
  std::string host{kOllamaDefaultHost};
  std::string ns{kOllamaDefaultNamespace};
  std::string model;
  std::string tag{kOllamaDefaultTag};

  // The shortest spelling: "llama3.2:3b", "user/model:tag", "host/ns/model:tag".
  std::string display() const;
  // Every part: "registry.ollama.ai/library/llama3.2:3b".
  std::string full() const;
};

// Reads a name as Ollama does: "[host/][namespace/]model[:tag][@digest]" (the digest is
// ignored), missing parts defaulted. kInvalidArgument when a part has characters or a length
// Ollama refuses (a model starts with a letter, digit or '_' and has letters, digits, '-', '_'
// and '.'; a namespace no '.'; a host may also have ':').
Result<OllamaName> parse_ollama_name(std::string_view text);

// Where Ollama keeps its models: $OLLAMA_MODELS, else ~/.ollama/models.
std::string default_ollama_models_dir();

struct ManifestLayer {
  std::string media_type;
  std::string digest;  // "sha256:<64 hex digits>"
  uint64_t size = 0;
};

struct Manifest {
  ManifestLayer config;
  std::vector<ManifestLayer> layers;
  uint64_t total_size() const;  // config and layers, as Ollama reports a model's size
};

// A manifest's JSON; kFormat naming the field that is missing or malformed.
Result<Manifest> parse_manifest(std::string_view text);

// DIR/blobs/sha256-<hex> for "sha256:<hex>"; kFormat for any other digest.
Result<std::string> ollama_blob_path(const std::string& dir, std::string_view digest);

// One manifest of the store as a model to serve: `name` the short name, `path` the GGUF blob,
// `bytes` the size of all layers, `digest` the manifest's SHA-256 (as `ollama list` shows it),
// `modelfile` its other layers. A manifest that cannot be served (unreadable, no model layer, a
// missing or short blob, an adapter or projector) gives a model with `broken` set to the reason.
ModelFile read_ollama_model(const std::string& dir, const OllamaName& name);

// The models of a store, cached by manifest: a manifest whose size and modification time have
// not changed is not read again (nor are its problems logged again); a broken one is read again
// when the blobs folder changed (a blob it lacked may have arrived). Thread-safe.
class OllamaStore {
 public:
  explicit OllamaStore(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // Every DIR/manifests/<host>/<namespace>/<model>/<tag> with a valid name; none when DIR or
  // its manifests folder does not exist.
  std::vector<ModelFile> scan();

 private:
  struct Cached {
    uint64_t manifest_bytes = 0;
    SystemTime manifest_modified;
    SystemTime blobs_modified;  // of DIR/blobs when the manifest was read
    ModelFile model;
  };
  std::string dir_;
  std::mutex mutex_;
  std::map<std::string, Cached> cache_;  // by manifest path
};

}  // namespace sinter::server
