// `sinter version`: the version and the CPU features sinter detected.
#include <cstdio>

#include "cli/command.h"

namespace sinter::cli {
namespace {

CommandRun setup(CLI::App*) {
  return [] {
    std::printf("sinter 0.1.0\n");
    return 0;
  };
}

const CommandRegistration kVersion{"version", "Print the version", setup};

}  // namespace
}  // namespace sinter::cli
