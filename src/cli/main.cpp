#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>

#include "cli/command.h"
#include "cli/flag_bounds.h"

namespace sinter::cli {

std::vector<RegisteredCommand>& registered_commands() {
  static std::vector<RegisteredCommand> commands;
  return commands;
}

CommandRegistration::CommandRegistration(std::string name, std::string description, CommandSetup setup) {
  registered_commands().push_back({std::move(name), std::move(description), std::move(setup)});
}

int fail(const std::string& message) {
  std::fprintf(stderr, "sinter: error: %s\n", message.c_str());
  return 1;
}

}  // namespace sinter::cli

int main(int argc, char** argv) {
  using namespace sinter::cli;
  // Past a file-size limit (ulimit -f) a write fails with EFBIG, which the command reports and
  // after which its temporary file is removed, instead of the signal killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"sinter: run large language models from GGUF files"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sinter 0.1.0");
  auto commands = registered_commands();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::map<CLI::App*, CommandRun> runs;
  for (const auto& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    runs[sub] = command.setup(sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const FlagRangeError& e) {
    return fail(e.what());  // the same form and exit status as the commands' other value errors
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto& [sub, run] : runs) {
    if (sub->parsed()) return run();
  }
  return 1;
}
