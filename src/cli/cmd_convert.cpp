// `sinter convert tokenizer tokenizer.json [tokenizer_config.json] -o vocab.gguf`: a GGUF file
// holding the tokenizer keys of a Hugging Face tokenizer (see tokenizer/hf_import.h).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/hf_import.h"
#include "tokenizer/tokenizer.h"

namespace sinter::cli {
namespace {

struct Options {
  std::string tokenizer_json;
  std::string config_json;
  std::string output;
  std::string pre;
  std::string name;
  std::string architecture;
};

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot read ", path);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

int convert_tokenizer(const Options& options) {
  auto tokenizer_json = read_file(options.tokenizer_json);
  if (!tokenizer_json) return fail(tokenizer_json.error().message());
  std::string config_json;
  if (!options.config_json.empty()) {
    auto config = read_file(options.config_json);
    if (!config) return fail(config.error().message());
    config_json = std::move(*config);
  }
  auto imported = import_hf_tokenizer(*tokenizer_json, config_json, HfImportOptions{options.pre});
  if (!imported) return fail(options.tokenizer_json + ": " + imported.error().message());
  // Check that sinter can load what it is about to write.
  auto tokenizer = Tokenizer::from_metadata(imported->metadata);
  if (!tokenizer) return fail("the converted vocabulary does not load: " + tokenizer.error().message());
  GgufWriter writer;
  if (!options.architecture.empty()) {
    writer.metadata().set("general.architecture", GgufValue::of_string(options.architecture));
  }
  if (!options.name.empty()) writer.metadata().set("general.name", GgufValue::of_string(options.name));
  for (const auto& [key, value] : imported->metadata.entries()) writer.metadata().set(key, value);
  if (auto status = writer.write(options.output); !status) return fail(status.error().message());
  for (const std::string& note : imported->notes) std::fprintf(stderr, "sinter: note: %s\n", note.c_str());
  std::fprintf(stderr, "sinter: wrote %s: %s vocabulary of %d tokens%s%s\n", options.output.c_str(),
               std::string((*tokenizer)->model_name()).c_str(), (*tokenizer)->vocab_size(),
               (*tokenizer)->pre_tokenizer_name().empty() ? "" : ", pre-tokenizer ",
               std::string((*tokenizer)->pre_tokenizer_name()).c_str());
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto options = std::make_shared<Options>();
  app->require_subcommand(1);
  CLI::App* tokenizer = app->add_subcommand("tokenizer", "Hugging Face tokenizer.json → GGUF tokenizer keys");
  tokenizer->add_option("tokenizer_json", options->tokenizer_json, "tokenizer.json")->required();
  tokenizer->add_option("tokenizer_config_json", options->config_json,
                        "tokenizer_config.json (special tokens, add_bos/add_eos, chat template)");
  tokenizer->add_option("-o,--output", options->output, "GGUF file to write")->required();
  tokenizer->add_option("--pre", options->pre, "Write this tokenizer.ggml.pre instead of recognizing it");
  tokenizer->add_option("--name", options->name, "general.name to write");
  tokenizer->add_option(
      "--architecture", options->architecture,
      "general.architecture to write (llama.cpp loads a vocabulary-only file only with one)");
  return [options, tokenizer] {
    if (tokenizer->parsed()) return convert_tokenizer(*options);
    return fail("convert: name what to convert (tokenizer)");
  };
}

const CommandRegistration kConvert{"convert", "Convert files into GGUF (convert tokenizer ...)", setup};

}  // namespace
}  // namespace sinter::cli
