// Reading an Ollama model store: names, manifests, blobs and the Modelfile layers, and the
// model manager serving a store beside a folder of GGUF files (broken files left out).
#include "server/ollama_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "server/ollama_store_builder.h"
#include "server/sha256.h"
#include "support/test_paths.h"

namespace sinter::server {
namespace {

using Json = nlohmann::ordered_json;
using testing::OllamaStoreBuilder;

TEST(OllamaName, DefaultsAndShortestSpelling) {
  struct Case {
    const char* text;
    const char* full;
    const char* display;
  };
  const Case cases[] = {
      {"llama3.2", "registry.ollama.ai/library/llama3.2:latest", "llama3.2:latest"},
      {"llama3.2:3b", "registry.ollama.ai/library/llama3.2:3b", "llama3.2:3b"},
      {"library/llama3.2:3b", "registry.ollama.ai/library/llama3.2:3b", "llama3.2:3b"},
      {"registry.ollama.ai/library/llama3.2:3b", "registry.ollama.ai/library/llama3.2:3b", "llama3.2:3b"},
      {"user/model:q4_K_M", "registry.ollama.ai/user/model:q4_K_M", "user/model:q4_K_M"},
      {"hf.co/bartowski/Qwen2.5-0.5B-GGUF:Q4_0", "hf.co/bartowski/Qwen2.5-0.5B-GGUF:Q4_0",
       "hf.co/bartowski/Qwen2.5-0.5B-GGUF:Q4_0"},
      {"localhost:5000/ns/model", "localhost:5000/ns/model:latest", "localhost:5000/ns/model:latest"},
      {"model:tag@sha256:abc", "registry.ollama.ai/library/model:tag", "model:tag"},
  };
  for (const Case& c : cases) {
    const auto name = parse_ollama_name(c.text);
    ASSERT_TRUE(name) << c.text << ": " << name.error().message();
    EXPECT_EQ(name->full(), c.full) << c.text;
    EXPECT_EQ(name->display(), c.display) << c.text;
  }
  for (const char* bad : {"", ":tag", "model:", "-model", "a/b/c/d", "ns.x/model", "model:ta g", ".hidden"}) {
    const auto name = parse_ollama_name(bad);
    ASSERT_FALSE(name) << bad;
    EXPECT_EQ(name.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(name.error().message().find("is not a valid model name"), std::string::npos);
  }
}

TEST(OllamaStore, DefaultFolderFollowsOllamaModels) {
  const char* saved = std::getenv("OLLAMA_MODELS");
  const std::string restore = saved ? saved : "";
  setenv("OLLAMA_MODELS", "/srv/ollama", 1);
  EXPECT_EQ(default_ollama_models_dir(), "/srv/ollama");
  unsetenv("OLLAMA_MODELS");
  if (const char* home = std::getenv("HOME")) {
    EXPECT_EQ(default_ollama_models_dir(), std::string(home) + "/.ollama/models");
  }
  if (saved) setenv("OLLAMA_MODELS", restore.c_str(), 1);
}

TEST(OllamaStore, ManifestFieldsAreChecked) {
  const auto manifest = parse_manifest(R"({"schemaVersion": 2, "config": {"mediaType": "c",
      "digest": "sha256:00", "size": 3}, "layers": [{"mediaType": "m", "digest": "sha256:11", "size": 5}]})");
  ASSERT_TRUE(manifest) << manifest.error().message();
  EXPECT_EQ(manifest->layers.size(), 1u);
  EXPECT_EQ(manifest->layers[0].media_type, "m");
  EXPECT_EQ(manifest->total_size(), 8u);
  const std::pair<const char*, const char*> bad[] = {
      {"[", "not valid JSON"},
      {R"({"schemaVersion": 1, "layers": []})", "schemaVersion is not 2"},
      {R"({"schemaVersion": 2})", "layers must be an array"},
      {R"({"schemaVersion": 2, "layers": [{"mediaType": "m", "digest": "d", "size": -1}]})",
       "layers[0].size must be a non-negative integer"},
      {R"({"schemaVersion": 2, "layers": [{"digest": "d", "size": 1}]})", "layers[0].mediaType"},
  };
  for (const auto& [text, message] : bad) {
    const auto parsed = parse_manifest(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kFormat);
    EXPECT_NE(parsed.error().message().find(message), std::string::npos) << parsed.error().message();
  }
}

TEST(OllamaStore, BlobPaths) {
  const std::string hex(64, 'a');
  EXPECT_EQ(ollama_blob_path("/s", "sha256:" + hex).value(), "/s/blobs/sha256-" + hex);
  EXPECT_EQ(ollama_blob_path("/s", "sha256-" + hex).value(), "/s/blobs/sha256-" + hex);
  for (const std::string& bad :
       {std::string("sha256:abc"), "md5:" + hex, "sha256:" + hex + "/../x", "sha256:" + std::string(64, 'g')})
    EXPECT_FALSE(ollama_blob_path("/s", bad)) << bad;
}

// A store with stories260K under several names and Modelfile layers.
class Store : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir();
    store_ = std::make_unique<OllamaStoreBuilder>(dir_ + "/ollama");
    weights_ = store_->file_layer("model", testing::stories_model());
  }
  Json full_layers() {
    return Json::array({weights_, store_->layer("template", "Q: {{ .Prompt }} A:"),
                        store_->layer("system", "Tell stories."),
                        store_->layer("params", R"({"stop": ["."], "temperature": 0, "num_ctx": 64,
                                                    "mirostat": 2, "no_such_option": 1})"),
                        store_->layer("license", "MIT"),
                        store_->layer("messages", R"([{"role": "user", "content": "Hello"}])")});
  }
  std::string dir_;
  std::unique_ptr<OllamaStoreBuilder> store_;
  Json weights_;
};

TEST_F(Store, ReadsTheModelfileLayers) {
  const std::string manifest = store_->manifest("registry.ollama.ai/library/stories/tiny", full_layers());
  const ModelFile model = read_ollama_model(store_->dir(), parse_ollama_name("stories:tiny").value());
  ASSERT_FALSE(model.broken) << *model.broken;
  EXPECT_EQ(model.name, "stories:tiny");
  EXPECT_EQ(model.path, store_->dir() + "/blobs/sha256-" + weights_["digest"].get<std::string>().substr(7));
  EXPECT_EQ(model.digest, sha256_hex(manifest));  // as `ollama list` shows it
  EXPECT_EQ(model.bytes, parse_manifest(manifest)->total_size());
  ASSERT_NE(model.modelfile, nullptr);
  const Modelfile& modelfile = *model.modelfile;
  EXPECT_EQ(modelfile.name, "registry.ollama.ai/library/stories:tiny");
  EXPECT_EQ(modelfile.short_name, "stories:tiny");
  EXPECT_EQ(modelfile.model_path, model.path);
  EXPECT_EQ(modelfile.template_source, "Q: {{ .Prompt }} A:");
  EXPECT_EQ(modelfile.system, "Tell stories.");
  // The options sinter cannot apply are left out (mirostat 2, an unknown name).
  EXPECT_EQ(modelfile.params, Json::parse(R"({"stop": ["."], "temperature": 0, "num_ctx": 64})"));
  EXPECT_EQ(modelfile.licenses, std::vector<std::string>{"MIT"});
  ASSERT_EQ(modelfile.messages.size(), 1u);
  EXPECT_EQ(modelfile.messages[0].role, "user");
  EXPECT_EQ(modelfile.messages[0].content, "Hello");
}

TEST_F(Store, ModelsThatCannotBeServedSayWhy) {
  const std::string missing = std::string(64, 'b');
  Json gone = weights_;
  gone["digest"] = "sha256:" + missing;
  Json short_blob = weights_;
  short_blob["size"] = weights_["size"].get<uint64_t>() + 1;
  store_->manifest("registry.ollama.ai/library/gone/latest", Json::array({gone}));
  store_->manifest("registry.ollama.ai/library/short/latest", Json::array({short_blob}));
  store_->manifest("registry.ollama.ai/library/lora/latest",
                   Json::array({weights_, store_->layer("adapter", "lora")}));
  store_->manifest("registry.ollama.ai/library/vision/latest",
                   Json::array({weights_, store_->layer("projector", "clip")}));
  store_->manifest("registry.ollama.ai/library/empty/latest", Json::array({store_->layer("system", "x")}));
  std::filesystem::create_directories(store_->dir() + "/manifests/registry.ollama.ai/library/bad");
  std::ofstream(store_->dir() + "/manifests/registry.ollama.ai/library/bad/latest") << "{not json";
  const std::pair<const char*, std::string> cases[] = {
      {"gone", "the blob " + store_->dir() + "/blobs/sha256-" + missing + " is missing"},
      {"short", "bytes where the manifest says"},
      {"lora", "it has a LoRA adapter layer, which sinter cannot apply"},
      {"vision", "it has a projector layer (image input), which sinter does not support"},
      {"empty", "the manifest has no GGUF model layer (application/vnd.ollama.image.model)"},
      {"bad", "the manifest is not valid JSON"},
  };
  for (const auto& [name, reason] : cases) {
    const ModelFile model = read_ollama_model(store_->dir(), parse_ollama_name(name).value());
    ASSERT_TRUE(model.broken) << name;
    EXPECT_NE(model.broken->find(reason), std::string::npos) << name << ": " << *model.broken;
  }
}

TEST_F(Store, ScanListsEveryManifestByName) {
  store_->manifest("registry.ollama.ai/library/stories/latest", Json::array({weights_}));
  store_->manifest("registry.ollama.ai/library/stories/tiny", full_layers());
  store_->manifest("registry.ollama.ai/someone/stories/v1", Json::array({weights_}));
  store_->manifest("example.com/ns/stories/v2", Json::array({weights_}));
  std::ofstream(store_->dir() + "/manifests/registry.ollama.ai/library/stories/.DS_Store") << "x";
  OllamaStore store(store_->dir());
  std::vector<std::string> names;
  for (const ModelFile& model : store.scan()) {
    EXPECT_FALSE(model.broken) << model.name;
    names.push_back(model.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"example.com/ns/stories:v2", "someone/stories:v1",
                                             "stories:latest", "stories:tiny"}));
  // A store without manifests (or no store at all) has no models.
  EXPECT_TRUE(OllamaStore(dir_ + "/nothing").scan().empty());
}

// A params layer nested 150,000 deep used to crash every scan (a recursive walk over it), after
// every restart: it is refused while parsed, and the model is listed as broken with the reason.
TEST_F(Store, DeeplyNestedLayersMakeABrokenModel) {
  const std::string deep = std::string(150'000, '[') + std::string(150'000, ']');
  store_->manifest("registry.ollama.ai/library/params/latest",
                   Json::array({weights_, store_->layer("params", "{\"stop\": " + deep + "}")}));
  store_->manifest("registry.ollama.ai/library/messages/latest",
                   Json::array({weights_, store_->layer("messages", deep)}));
  OllamaStore store(store_->dir());
  const auto models = store.scan();
  ASSERT_EQ(models.size(), 2u);
  for (const ModelFile& model : models) {
    ASSERT_TRUE(model.broken) << model.name;
    EXPECT_NE(model.broken->find("nests deeper than 128 levels"), std::string::npos) << *model.broken;
  }
}

// A broken manifest is not read again on every scan (200 of them made each /api/tags take
// seconds): only when the blobs folder changed, since a blob it lacks may have arrived.
TEST_F(Store, BrokenManifestsAreReadAgainOnlyWhenBlobsArrive) {
  const std::string content = "late template";
  Json late = store_->layer("template", "placeholder");
  late["digest"] = "sha256:" + sha256_hex(content);
  late["size"] = content.size();
  store_->manifest("registry.ollama.ai/library/late/latest", Json::array({weights_, late}));
  OllamaStore store(store_->dir());
  ASSERT_EQ(store.scan().size(), 1u);
  EXPECT_TRUE(store.scan().front().broken);
  // The blob arrives, but the folder's time is put back: the cached verdict stands, so the
  // manifest was not read again.
  const std::string blobs = store_->dir() + "/blobs";
  struct stat before {};
  ASSERT_EQ(::stat(blobs.c_str(), &before), 0);
  store_->layer("template", content);
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, blobs.c_str(), times, 0), 0);
  EXPECT_TRUE(store.scan().front().broken);
  // With the folder's time changed, it is read again and found whole.
  const timespec later[2] = {{before.st_atim.tv_sec + 5, 0}, {before.st_mtim.tv_sec + 5, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, blobs.c_str(), later, 0), 0);
  const auto models = store.scan();
  ASSERT_EQ(models.size(), 1u);
  EXPECT_FALSE(models.front().broken) << *models.front().broken;
}

// The manager serves the store beside a folder; names resolve as Ollama's do.
class ManagedStore : public Store {
 protected:
  std::unique_ptr<ModelManager> manager(const std::string& folder) {
    ServingOptions options;
    options.parallel = 1;
    options.load.threads = 1;
    auto manager = ModelManager::create(ModelSources{"", folder, store_->dir(), false}, options);
    EXPECT_TRUE(manager) << manager.error().message();
    return manager ? std::move(manager).value() : nullptr;
  }
};

TEST_F(ManagedStore, FindsStoreModelsByAnySpelling) {
  store_->manifest("registry.ollama.ai/library/stories/latest", Json::array({weights_}));
  store_->manifest("registry.ollama.ai/library/stories/tiny", full_layers());
  store_->manifest("registry.ollama.ai/someone/tale/v1", Json::array({weights_}));
  auto models = manager("");
  ASSERT_NE(models, nullptr);
  std::vector<std::string> listed;
  for (const ModelFile& model : models->list()) listed.push_back(model.name);
  EXPECT_EQ(listed, (std::vector<std::string>{"someone/tale:v1", "stories:latest", "stories:tiny"}));
  for (const char* name :
       {"stories", "stories:latest", "library/stories", "registry.ollama.ai/library/stories"})
    EXPECT_EQ(models->find(name).value().name, "stories:latest") << name;
  EXPECT_EQ(models->find("registry.ollama.ai/library/stories:tiny").value().name, "stories:tiny");
  EXPECT_EQ(models->find("someone/tale:v1").value().name, "someone/tale:v1");
  EXPECT_EQ(models->find("tale:v1").error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(models->find("someone/tale").error().code(), ErrorCode::kNotFound);  // no :latest
}

TEST_F(ManagedStore, ModelfileContextAppliesWhenTheRequestGivesNone) {
  store_->manifest("registry.ollama.ai/library/stories/tiny", full_layers());
  auto models = manager("");
  ASSERT_NE(models, nullptr);
  {
    auto lease = models->acquire("stories:tiny", {KeepAlive(-1), std::nullopt});
    ASSERT_TRUE(lease) << lease.error().message();
    EXPECT_EQ((*lease)->context_per_sequence, 64);  // PARAMETER num_ctx 64
    ASSERT_NE((*lease)->modelfile(), nullptr);
    EXPECT_EQ((*lease)->modelfile()->system, "Tell stories.");
  }
  auto lease = models->acquire("stories:tiny", {KeepAlive(-1), 128});
  ASSERT_TRUE(lease) << lease.error().message();
  EXPECT_EQ((*lease)->context_per_sequence, 128);  // the request's num_ctx wins
}

TEST_F(ManagedStore, FilesWinOverStoreModelsOfTheSameName) {
  const std::string folder = dir_ + "/models";
  std::filesystem::create_directories(folder);
  std::filesystem::copy_file(testing::stories_model(), folder + "/stories.gguf");
  store_->manifest("registry.ollama.ai/library/stories/latest", full_layers());
  store_->manifest("registry.ollama.ai/library/stories/tiny", full_layers());
  auto models = manager(folder);
  ASSERT_NE(models, nullptr);
  std::vector<std::string> listed;
  for (const ModelFile& model : models->list()) listed.push_back(model.name);
  EXPECT_EQ(listed, (std::vector<std::string>{"stories", "stories:tiny"}));
  const ModelFile file = models->find("stories:latest").value();
  EXPECT_EQ(file.path, folder + "/stories.gguf");
  EXPECT_EQ(file.modelfile, nullptr);
  EXPECT_NE(models->find("stories:tiny").value().modelfile, nullptr);
}

TEST_F(ManagedStore, BrokenModelsAreNotListedAndFindingOneSaysWhy) {
  const std::string folder = dir_ + "/models";
  std::filesystem::create_directories(folder);
  std::filesystem::copy_file(testing::stories_model(), folder + "/good.gguf");
  std::ofstream(folder + "/garbage.gguf") << "GGUF but not really";
  // A valid GGUF header whose architecture sinter does not have.
  {
    std::ifstream in(testing::stories_model(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string arch = "llama";
    const size_t at = bytes.find("general.architecture");
    ASSERT_NE(at, std::string::npos);
    const size_t value = bytes.find(arch, at + 20);
    ASSERT_NE(value, std::string::npos);
    bytes.replace(value, arch.size(), "zzzzz");
    std::ofstream(folder + "/alien.gguf", std::ios::binary) << bytes;
  }
  Json gone = weights_;
  gone["digest"] = "sha256:" + std::string(64, 'c');
  store_->manifest("registry.ollama.ai/library/gone/latest", Json::array({gone}));
  auto models = manager(folder);
  ASSERT_NE(models, nullptr);
  std::vector<std::string> listed;
  for (const ModelFile& model : models->list()) listed.push_back(model.name);
  EXPECT_EQ(listed, std::vector<std::string>{"good"});
  const std::pair<const char*, const char*> cases[] = {
      {"garbage", "garbage.gguf"},
      {"alien:latest", "unknown architecture 'zzzzz'"},
      {"gone", "is missing"},
  };
  for (const auto& [name, reason] : cases) {
    const auto found = models->find(name);
    ASSERT_FALSE(found) << name;
    EXPECT_EQ(found.error().code(), ErrorCode::kUnsupported) << name;  // 400, not 500
    EXPECT_NE(found.error().message().find(std::string("model '") + name + "' cannot be served: "),
              std::string::npos)
        << found.error().message();
    EXPECT_NE(found.error().message().find(reason), std::string::npos) << found.error().message();
    const auto lease = models->acquire(name, {KeepAlive(0), std::nullopt});
    ASSERT_FALSE(lease) << name;
    EXPECT_EQ(lease.error().code(), ErrorCode::kUnsupported);
  }
  // Mended in place: offered again.
  std::filesystem::copy_file(testing::stories_model(), folder + "/garbage.gguf",
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_TRUE(models->find("garbage")) << models->find("garbage").error().message();
}

TEST(ModelSources, Rules) {
  ServingOptions options;
  const auto none = ModelManager::create(ModelSources{}, options);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("--ollama-models"), std::string::npos);
  const auto both = ModelManager::create(ModelSources{testing::stories_model(), "/tmp", "", false}, options);
  ASSERT_FALSE(both);
  const auto missing = ModelManager::create(ModelSources{"", "", "/nonexistent/store", false}, options);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "Ollama model folder /nonexistent/store does not exist");
  // The default store may be missing: nothing is offered from it.
  const auto optional = ModelManager::create(ModelSources{"", "", "/nonexistent/store", true}, options);
  ASSERT_TRUE(optional) << optional.error().message();
  EXPECT_TRUE((*optional)->list().empty());
}

}  // namespace
}  // namespace sinter::server
