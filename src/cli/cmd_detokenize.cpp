// `sinter detokenize MODEL IDS`: the text of comma-separated token ids, written to stdout exactly
// (no newline added). Ids outside the vocabulary are an error.
#include <charconv>
#include <cstdio>

#include "cli/command.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace sinter::cli {
namespace {

struct Options {
  std::string model;
  std::string ids;
  std::string force_pre;
  bool render_special = false;
};

int run(const Options& options) {
  std::vector<TokenId> ids;
  std::string_view rest = options.ids;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    TokenId id = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (item.empty() || error != std::errc() || end != item.data() + item.size()) {
      return fail("'" + std::string(item) + "' is not a token id (expected comma-separated integers)");
    }
    ids.push_back(id);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  auto file = GgufFile::open(options.model);
  if (!file) return fail(file.error().message());
  auto tokenizer = Tokenizer::from_metadata(file->metadata(), TokenizerOptions{options.force_pre});
  if (!tokenizer) return fail(options.model + ": " + tokenizer.error().message());
  if (auto status = (*tokenizer)->check_ids(ids); !status) return fail(status.error().message());
  const std::string text = (*tokenizer)->decode(ids, options.render_special);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto options = std::make_shared<Options>();
  app->add_option("model", options->model, "GGUF file (a model or a vocabulary)")->required();
  app->add_option("ids", options->ids, "Comma-separated token ids, e.g. 1,2,3")->required();
  app->add_flag("--render-special", options->render_special, "Write control tokens as their text");
  app->add_option("--force-pre", options->force_pre, "Use this BPE pre-tokenizer instead of the file's");
  return [options] { return run(*options); };
}

const CommandRegistration kDetokenize{"detokenize", "Print the text of token ids", setup};

}  // namespace
}  // namespace sinter::cli
