// `sinter tokenize MODEL TEXT`: the token ids of TEXT as a JSON array, the shape of the llama.cpp
// oracle's `tokenize` (special tokens parsed, no BOS/EOS added unless --add-special).
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace sinter::cli {
namespace {

struct Options {
  std::string model;
  std::string text;
  std::string text_file;
  std::string force_pre;
  bool pieces = false;
  bool ids = false;
  bool add_special = false;
  bool no_parse_special = false;
};

int run(const Options& options) {
  std::string text = options.text;
  if (!options.text_file.empty()) {
    std::ifstream in(options.text_file, std::ios::binary);
    if (!in) return fail("cannot read " + options.text_file);
    std::ostringstream content;
    content << in.rdbuf();
    text = content.str();
  }
  auto file = GgufFile::open(options.model);
  if (!file) return fail(file.error().message());
  auto tokenizer = Tokenizer::from_metadata(file->metadata(), TokenizerOptions{options.force_pre});
  if (!tokenizer) return fail(options.model + ": " + tokenizer.error().message());
  auto ids = (*tokenizer)->encode(text, EncodeOptions{options.add_special, !options.no_parse_special});
  if (!ids) return fail(ids.error().message());
  nlohmann::json out = nlohmann::json::array();
  for (TokenId id : *ids) {
    if (options.pieces) {
      out.push_back(std::string((*tokenizer)->token_text(id)));
    } else {
      out.push_back(id);
    }
  }
  std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto options = std::make_shared<Options>();
  app->add_option("model", options->model,
                  "GGUF file (a model or a vocabulary from `sinter convert tokenizer`)")
      ->required();
  app->add_option("text", options->text, "Text to tokenize");
  app->add_option("--file", options->text_file, "Read the text from this file instead");
  auto* ids = app->add_flag("--ids", options->ids, "Print token ids (the default)");
  app->add_flag("--pieces", options->pieces, "Print the tokens' vocabulary texts instead of ids")
      ->excludes(ids);
  app->add_flag("--add-special", options->add_special, "Add BOS/EOS as the vocabulary asks");
  app->add_flag("--no-parse-special", options->no_parse_special, "Treat special-token text as plain text");
  app->add_option("--force-pre", options->force_pre, "Use this BPE pre-tokenizer instead of the file's");
  return [options] { return run(*options); };
}

const CommandRegistration kTokenize{"tokenize", "Print the token ids of a text", setup};

}  // namespace
}  // namespace sinter::cli
