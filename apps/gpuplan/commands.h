// The CLI's subcommands. Each Register* adds its CLI11 subcommand and returns the function
// that runs it; main() owns error handling and exit codes (docs/cli.md).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "core/error.h"  // the exit codes, one meaning everywhere: kExitOk .. kExitInternal

namespace gpuplan::cli {

struct GlobalOptions {
  std::string data_dir;
  bool json = false;
};

using Runner = std::function<int()>;

Runner RegisterFit(CLI::App& app, GlobalOptions& g);
Runner RegisterGpus(CLI::App& app, GlobalOptions& g);
Runner RegisterModels(CLI::App& app, GlobalOptions& g);
Runner RegisterFrameworks(CLI::App& app, GlobalOptions& g);
Runner RegisterCost(CLI::App& app, GlobalOptions& g);
Runner RegisterCheck(CLI::App& app, GlobalOptions& g);
Runner RegisterMeter(CLI::App& app, GlobalOptions& g);
Runner RegisterPlan(CLI::App& app, GlobalOptions& g);
Runner RegisterServe(CLI::App& app, GlobalOptions& g);

// Resolved data directory: --data-dir, else $GPUPLAN_DATA, else the build's data/ folder.
std::string DataDir(const GlobalOptions& g);

}  // namespace gpuplan::cli
