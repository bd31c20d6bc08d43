// Subcommands of the `sinter` tool. Each lives in its own cmd_<name>.cpp and registers itself:
//
//   static const sinter::cli::CommandRegistration kInspect{"inspect", "Diagnose a GGUF file", setup};
//
// where setup(CLI::App*) declares the options and returns the function that runs the command
// (its int result is the process exit status).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace sinter::cli {

using CommandRun = std::function<int()>;
using CommandSetup = std::function<CommandRun(CLI::App*)>;

struct CommandRegistration {
  CommandRegistration(std::string name, std::string description, CommandSetup setup);
};

struct RegisteredCommand {
  std::string name;
  std::string description;
  CommandSetup setup;
};
std::vector<RegisteredCommand>& registered_commands();

// Prints "sinter: error: <message>" to stderr and returns the exit status 1.
int fail(const std::string& message);

}  // namespace sinter::cli
