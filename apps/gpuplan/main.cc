// gpuplan: plan, price, check and meter rented GPU servers. Thin front end over gpuplan_core.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <stdexcept>

#include "commands.h"
#include "core/error.h"
#include "io/error_json.h"
#include "io/text_lang.h"
#include "read/messages.h"

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

namespace {

// --json anywhere before "--": a command line that fails to parse still asked for JSON.
bool AskedForJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      return false;
    }
    if (std::strcmp(argv[i], "--json") == 0) {
      return true;
    }
  }
  return false;
}

// With --json the error is a JSON object on stdout (io/error_json.h), else one line on stderr;
// when stdout cannot be written the line goes to stderr all the same.
int Report(const ErrorReport& r, bool json) {
  if (json) {
    std::cout.clear();
    std::cout << ErrorToJson(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    std::cout.flush();
  }
  if (!json || !std::cout) {
    std::cerr << "gpuplan: " << ErrorLine(r) << "\n";
  }
  return ExitCode(r.kind);
}

}  // namespace
}  // namespace gpuplan::cli

int main(int argc, char** argv) {
  using namespace gpuplan::cli;
  CLI::App app{"gpuplan: which GPUs, how many, how laid out, and what it costs"};
  app.require_subcommand(1);
  GlobalOptions g;
  app.add_option("--data-dir", g.data_dir, "folder with gpus.yaml and models/ (default: $GPUPLAN_DATA or the build's data/)");
  // The language of tables, verdicts and error lines (data/messages.json); JSON stays English.
  std::string lang;
  app.add_option("--lang", lang, "zh or en (default: from LC_ALL, LC_MESSAGES or LANG; zh_CN.UTF-8 is zh)")
      ->check(CLI::IsMember({"zh", "en"}));
  app.fallthrough();  // --lang and --data-dir also after the subcommand
  // One table of subcommands; help is generated from it.
  struct Entry {
    const char* name;
    Runner (*reg)(CLI::App&, GlobalOptions&);
  };
  const Entry table[] = {{"fit", RegisterFit}, {"gpus", RegisterGpus}, {"models", RegisterModels}, {"frameworks", RegisterFrameworks}, {"cost", RegisterCost}, {"check", RegisterCheck}, {"meter", RegisterMeter}, {"serve", RegisterServe}};
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
    if (AskedForJson(argc, argv)) {
      return Report(gpuplan::UsageError(e.what()), true);
    }
    app.exit(e);
    return gpuplan::kExitBadInput;
  }
  const gpuplan::Lang text_lang = lang.empty() ? gpuplan::LangFromEnvironment() : gpuplan::ParseLang(lang);
  if (text_lang != gpuplan::Lang::kEn) {
    try {
      gpuplan::SetTextLanguage(gpuplan::Messages::Load(DataDir(g) + "/messages.json"), text_lang);
    } catch (const std::exception&) {
      // No catalogue (or an unreadable one) in this data folder: English, as before.
    }
  }
  try {
    // Test hook (docs/cli.md): provokes the internal-error path, exit 4.
    if (const char* hook = std::getenv("GPUPLAN_TEST_INTERNAL_ERROR"); hook != nullptr && std::strcmp(hook, "1") == 0) {
      throw std::logic_error("GPUPLAN_TEST_INTERNAL_ERROR=1 (test hook)");
    }
    int code = gpuplan::kExitOk;
    for (auto* sub : app.get_subcommands()) {
      code = runners.at(sub)();
    }
    if (!std::cout.flush()) {
      throw gpuplan::EnvironmentError("cannot write the output to standard output");
    }
    return code;
  } catch (const std::exception& e) {
    return Report(gpuplan::DescribeError(e), g.json);
  } catch (...) {
    return Report(gpuplan::DescribeError(std::runtime_error("an exception that is not a std::exception")), g.json);
  }
}
