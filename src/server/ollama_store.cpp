#include "server/ollama_store.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/json_parse.h"
#include "core/log.h"
#include "server/request_parameters.h"
#include "server/sha256.h"

namespace sinter::server {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr std::string_view kLayerPrefix = "application/vnd.ollama.image.";
// Manifests and the text layers (template, system, params, messages, license) are small; a
// larger one is not what Ollama writes.
constexpr uint64_t kMaxManifestBytes = 1 << 20;
constexpr uint64_t kMaxTextLayerBytes = 8 << 20;

bool equal_fold(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// A part of a name: a letter, digit or '_' first, then those or the characters in `more`.
bool valid_part(std::string_view part, std::string_view more, size_t max_length) {
  if (part.empty() || part.size() > max_length) return false;
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (!word(part[0])) return false;
  return std::all_of(part.begin() + 1, part.end(),
                     [&](char c) { return word(c) || more.find(c) != std::string_view::npos; });
}

SystemTime modification_time(const fs::path& path) {
  std::error_code error;
  const auto time = fs::last_write_time(path, error);
  if (error) return SystemTime();
  return std::chrono::time_point_cast<SystemTime::duration>(std::chrono::file_clock::to_sys(time));
}

// The whole file, if it has at most `max_bytes`.
Result<std::string> read_small_file(const fs::path& path, uint64_t max_bytes) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (error) return make_error(ErrorCode::kNotFound, path.string(), " is missing");
  if (size > max_bytes)
    return make_error(ErrorCode::kFormat, path.string(), " has ", size,
                      " bytes, more than a layer of its kind");
  std::ifstream in(path, std::ios::binary);
  std::string text(size, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size)))
    return make_error(ErrorCode::kIo, "cannot read ", path.string());
  return text;
}

Result<ManifestLayer> read_layer(const Json& value, const std::string& field) {
  if (!value.is_object()) return make_error(ErrorCode::kFormat, field, " must be an object");
  ManifestLayer layer;
  const auto media_type = value.find("mediaType");
  const auto digest = value.find("digest");
  const auto size = value.find("size");
  if (media_type == value.end() || !media_type->is_string())
    return make_error(ErrorCode::kFormat, field, ".mediaType must be a string");
  if (digest == value.end() || !digest->is_string())
    return make_error(ErrorCode::kFormat, field, ".digest must be a string");
  if (size == value.end() || !size->is_number_unsigned())
    return make_error(ErrorCode::kFormat, field, ".size must be a non-negative integer");
  layer.media_type = media_type->get<std::string>();
  layer.digest = digest->get<std::string>();
  layer.size = size->get<uint64_t>();
  return layer;
}

// A blob of the store with the size its layer gives.
Result<std::string> checked_blob(const std::string& dir, const ManifestLayer& layer) {
  SINTER_ASSIGN(std::string path, ollama_blob_path(dir, layer.digest));
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (error) return make_error(ErrorCode::kNotFound, "the blob ", path, " is missing");
  if (size != layer.size) {
    return make_error(ErrorCode::kFormat, "the blob ", path, " has ", size, " bytes where the manifest says ",
                      layer.size, " (an interrupted download?)");
  }
  return path;
}

Result<std::string> read_text_layer(const std::string& dir, const ManifestLayer& layer) {
  SINTER_ASSIGN(const std::string path, checked_blob(dir, layer));
  return read_small_file(path, kMaxTextLayerBytes);
}

// The params layer's options that sinter applies: each is read as a request's "options" would
// be; one that sinter does not know or accept is left out, with a warning.
Json usable_params(const Json& params, const std::string& model) {
  Json kept = Json::object();
  for (const auto& [key, value] : params.items()) {
    const Json one{{key, value}};
    if (auto read = read_ollama_options(&one); !read) {
      log_warn("server", model, ": the Modelfile's parameter ", key, " is not applied (",
               read.error().message(), ")");
      continue;
    }
    kept[key] = value;
  }
  return kept;
}

Result<std::vector<ModelfileMessage>> read_messages_layer(const std::string& text) {
  auto parsed = parse_json<Json>(text, "the messages layer");
  if (!parsed) return Error(ErrorCode::kFormat, parsed.error().message());
  const Json& messages = *parsed;
  if (!messages.is_array()) return make_error(ErrorCode::kFormat, "the messages layer is not a JSON array");
  std::vector<ModelfileMessage> out;
  for (const Json& message : messages) {
    if (!message.is_object() || !message.value("role", Json()).is_string() ||
        !message.value("content", Json()).is_string()) {
      return make_error(ErrorCode::kFormat, "the messages layer has an entry without a role and content");
    }
    out.push_back({message["role"].get<std::string>(), message["content"].get<std::string>()});
  }
  return out;
}

std::string layer_kind(const ManifestLayer& layer) {
  if (layer.media_type.rfind(kLayerPrefix, 0) != 0) return "";
  return layer.media_type.substr(kLayerPrefix.size());
}

// The layers of a manifest into `model` and `modelfile`; an error says why it cannot be served.
// What refuses the model (an adapter, the weights' blob) is looked at before the text layers.
Status read_layers(const std::string& dir, const Manifest& manifest, ModelFile& model, Modelfile& modelfile) {
  const ManifestLayer* weights = nullptr;
  for (const ManifestLayer& layer : manifest.layers) {
    const std::string kind = layer_kind(layer);
    if (kind == "model") weights = &layer;  // the last one, as Ollama takes it
    if (kind == "adapter")
      return make_error(ErrorCode::kUnsupported, "it has a LoRA adapter layer, which sinter cannot apply");
    if (kind == "projector") {
      return make_error(ErrorCode::kUnsupported,
                        "it has a projector layer (image input), which sinter does not support");
    }
  }
  if (weights == nullptr) {
    return make_error(ErrorCode::kUnsupported, "the manifest has no GGUF model layer (", kLayerPrefix,
                      "model)");
  }
  SINTER_ASSIGN(model.path, checked_blob(dir, *weights));
  modelfile.model_path = model.path;
  for (const ManifestLayer& layer : manifest.layers) {
    const std::string kind = layer_kind(layer);
    if (kind == "template" || kind == "prompt") {
      SINTER_ASSIGN(modelfile.template_source, read_text_layer(dir, layer));
    } else if (kind == "system") {
      SINTER_ASSIGN(modelfile.system, read_text_layer(dir, layer));
    } else if (kind == "license") {
      SINTER_ASSIGN(std::string license, read_text_layer(dir, layer));
      modelfile.licenses.push_back(std::move(license));
    } else if (kind == "params") {
      SINTER_ASSIGN(const std::string text, read_text_layer(dir, layer));
      auto parsed = parse_json<Json>(text, "the params layer");
      if (!parsed) return Error(ErrorCode::kFormat, parsed.error().message());
      const Json& params = *parsed;
      if (!params.is_object()) return make_error(ErrorCode::kFormat, "the params layer is not a JSON object");
      modelfile.params = usable_params(params, model.name);
    } else if (kind == "messages") {
      SINTER_ASSIGN(const std::string text, read_text_layer(dir, layer));
      SINTER_ASSIGN(modelfile.messages, read_messages_layer(text));
    }
    // Other kinds (embed, ...) say nothing sinter uses, as in Ollama.
  }
  return ok_status();
}

// Folders (or links to folders) directly under `dir`, sorted.
std::vector<std::string> subfolders(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (it->is_directory(error)) names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::string OllamaName::display() const {
  std::string out;
  if (!equal_fold(host, kOllamaDefaultHost)) {
    out = host + "/" + ns + "/";
  } else if (!equal_fold(ns, kOllamaDefaultNamespace)) {
    out = ns + "/";
  }
  return out + model + ":" + tag;
}

std::string OllamaName::full() const { return host + "/" + ns + "/" + model + ":" + tag; }

Result<OllamaName> parse_ollama_name(std::string_view text) {
  const std::string original(text);
  const auto invalid = [&](const char* why) {
    return make_error(ErrorCode::kInvalidArgument, "'", original, "' is not a valid model name (", why, ")");
  };
  if (const size_t at = text.rfind('@'); at != std::string_view::npos) text = text.substr(0, at);
  OllamaName name;
  if (const size_t colon = text.rfind(':');
      colon != std::string_view::npos && text.find('/', colon) == std::string_view::npos) {
    name.tag = std::string(text.substr(colon + 1));
    text = text.substr(0, colon);
  }
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t slash = text.find('/', start);
    parts.emplace_back(text.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() > 3) return invalid("more than host/namespace/model");
  name.model = parts.back();
  if (parts.size() >= 2) name.ns = parts[parts.size() - 2];
  if (parts.size() == 3) name.host = parts[0];
  if (!valid_part(name.model, "-_.", 80)) return invalid("the model part");
  if (!valid_part(name.tag, "-_.", 80)) return invalid("the tag");
  if (!valid_part(name.ns, "-_", 80)) return invalid("the namespace");
  if (!valid_part(name.host, "-_.:", 350)) return invalid("the host");
  return name;
}

std::string default_ollama_models_dir() {
  if (const char* dir = std::getenv("OLLAMA_MODELS"); dir != nullptr && *dir != '\0') return dir;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return "";
  return (fs::path(home) / ".ollama" / "models").string();
}

uint64_t Manifest::total_size() const {
  uint64_t size = config.size;
  for (const ManifestLayer& layer : layers) size += layer.size;
  return size;
}

Result<Manifest> parse_manifest(std::string_view text) {
  auto parsed = parse_json<Json>(text, "the manifest");
  if (!parsed) return Error(ErrorCode::kFormat, parsed.error().message());
  const Json& json = *parsed;
  if (!json.is_object()) return make_error(ErrorCode::kFormat, "the manifest is not a JSON object");
  const auto version = json.find("schemaVersion");
  if (version == json.end() || !version->is_number_integer() || version->get<int64_t>() != 2)
    return make_error(ErrorCode::kFormat, "the manifest's schemaVersion is not 2");
  Manifest manifest;
  if (const auto config = json.find("config"); config != json.end() && !config->is_null()) {
    SINTER_ASSIGN(manifest.config, read_layer(*config, "config"));
  }
  const auto layers = json.find("layers");
  if (layers == json.end() || !layers->is_array())
    return make_error(ErrorCode::kFormat, "the manifest's layers must be an array");
  for (size_t i = 0; i < layers->size(); ++i) {
    SINTER_ASSIGN(ManifestLayer layer, read_layer((*layers)[i], concat("layers[", i, "]")));
    manifest.layers.push_back(std::move(layer));
  }
  return manifest;
}

Result<std::string> ollama_blob_path(const std::string& dir, std::string_view digest) {
  const bool valid = digest.size() == 71 && digest.substr(0, 6) == "sha256" &&
                     (digest[6] == ':' || digest[6] == '-') &&
                     std::all_of(digest.begin() + 7, digest.end(),
                                 [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  if (!valid) return make_error(ErrorCode::kFormat, "'", digest, "' is not a sha256 digest");
  return (fs::path(dir) / "blobs" / ("sha256-" + std::string(digest.substr(7)))).string();
}

ModelFile read_ollama_model(const std::string& dir, const OllamaName& name) {
  ModelFile model;
  model.name = name.display();
  const fs::path manifest_path = fs::path(dir) / "manifests" / name.host / name.ns / name.model / name.tag;
  model.path = manifest_path.string();
  model.modified = modification_time(manifest_path);
  auto modelfile = std::make_shared<Modelfile>();
  modelfile->name = name.full();
  modelfile->short_name = model.name;
  auto text = read_small_file(manifest_path, kMaxManifestBytes);
  if (!text) {
    model.broken = text.error().message();
    return model;
  }
  model.digest = sha256_hex(*text);
  auto manifest = parse_manifest(*text);
  if (!manifest) {
    model.broken = concat(manifest_path.string(), ": ", manifest.error().message());
    return model;
  }
  model.bytes = manifest->total_size();
  if (const Status read = read_layers(dir, *manifest, model, *modelfile); !read) {
    model.broken = read.error().message();
    return model;
  }
  model.modelfile = std::move(modelfile);
  return model;
}

std::vector<ModelFile> OllamaStore::scan() {
  std::vector<ModelFile> models;
  const fs::path root = fs::path(dir_) / "manifests";
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, Cached> seen;
  // Blobs arrive by a rename into DIR/blobs, which changes the folder's modification time.
  const SystemTime blobs_modified = modification_time(fs::path(dir_) / "blobs");
  for (const std::string& host : subfolders(root)) {
    for (const std::string& ns : subfolders(root / host)) {
      for (const std::string& model_name : subfolders(root / host / ns)) {
        std::error_code error;
        const fs::path folder = root / host / ns / model_name;
        for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
          if (!it->is_regular_file(error)) continue;
          const std::string tag = it->path().filename().string();
          auto name = parse_ollama_name(host + "/" + ns + "/" + model_name + ":" + tag);
          if (!name) continue;  // not a manifest (".DS_Store", a temporary file)
          const std::string path = it->path().string();
          Cached entry;
          entry.manifest_bytes = it->file_size(error);
          entry.manifest_modified = modification_time(it->path());
          entry.blobs_modified = blobs_modified;
          const auto cached = cache_.find(path);
          // A broken model is read again only when a blob may have arrived since.
          if (cached != cache_.end() && cached->second.manifest_bytes == entry.manifest_bytes &&
              cached->second.manifest_modified == entry.manifest_modified &&
              (!cached->second.model.broken || cached->second.blobs_modified == blobs_modified)) {
            entry.model = cached->second.model;
          } else {
            entry.model = read_ollama_model(dir_, *name);
          }
          models.push_back(entry.model);
          seen[path] = std::move(entry);
        }
      }
    }
  }
  cache_ = std::move(seen);
  std::sort(models.begin(), models.end(),
            [](const ModelFile& a, const ModelFile& b) { return a.name < b.name; });
  return models;
}

}  // namespace sinter::server
