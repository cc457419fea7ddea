// gpuplan: plan, price, check and meter rented GPU servers. Thin front end over gpuplan_core.
#include <cstdlib>
#include <iostream>
#include <map>

#include "commands.h"
#include "core/error.h"

namespace gpuplan::cli {

std::string DataDir(const GlobalOptions& g) {
  if (!g.data_dir.empty()) {
    return g.data_dir;
  }
  if (const char* env = std::getenv("GPUPLAN_DATA"); env != nullptr && *env != '\0') {
    return env;
  }
  return GPUPLAN_DATA_DIR;
}

}  // namespace gpuplan::cli

int main(int argc, char** argv) {
  using namespace gpuplan::cli;
  CLI::App app{"gpuplan: which GPUs, how many, how laid out, and what it costs"};
  app.require_subcommand(1);
  GlobalOptions g;
  app.add_option("--data-dir", g.data_dir, "folder with gpus.yaml and models/ (default: $GPUPLAN_DATA or the build's data/)");
  // One table of subcommands; help is generated from it.
  struct Entry {
    const char* name;
    Runner (*reg)(CLI::App&, GlobalOptions&);
  };
  const Entry table[] = {{"fit", RegisterFit}, {"gpus", RegisterGpus}, {"models", RegisterModels}, {"cost", RegisterCost}};
  std::map<CLI::App*, Runner> runners;
  for (const auto& e : table) {
    Runner r = e.reg(app, g);
    runners[app.get_subcommand(e.name)] = std::move(r);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }
  try {
    for (auto* sub : app.get_subcommands()) {
      return runners.at(sub)();
    }
  } catch (const gpuplan::InputError& e) {
    std::cerr << "gpuplan: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const gpuplan::EnvironmentError& e) {
    std::cerr << "gpuplan: environment: " << e.what() << "\n";
    return kExitEnvironment;
  } catch (const std::exception& e) {
    std::cerr << "gpuplan: internal error: " << e.what() << "\n";
    return kExitEnvironment;
  }
  return kExitOk;
}
