// gpuplan: plan, price, check and meter rented GPU servers. Thin front end over gpuplan_library.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <stdexcept>

#include "cli_options.h"
#include "commands.h"
#include "core/error.h"
#include "core/names.h"
#include "core/stop_cleanup.h"
#include "format/error_json.h"
#include "format/text_lang.h"
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

// With --json the error is a JSON object on stdout (format/error_json.h), else one line on stderr;
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

// The command words of `argv` checked against the subcommand tables before CLI11 parses, so a
// typo gets "did you mean" and a missing command lists the commands (CLI11 says only "A
// subcommand is required" for both). Returns the error, or nullopt when the words are fine.
std::optional<gpuplan::ErrorReport> CheckCommandWords(CLI::App& app, int argc, char** argv) {
  CLI::App* cur = &app;
  std::string path = "gpuplan";
  auto names = [](CLI::App* a) {
    std::vector<std::string> out;
    for (const CLI::App* s : a->get_subcommands({})) {
      out.push_back(s->get_name());
    }
    return out;
  };
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& n : v) {
      s += (s.empty() ? "" : ", ") + n;
    }
    return s;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      break;
    }
    if (a.size() > 1 && a[0] == '-') {
      // An option of this command or a parent (--lang and --data-dir fall through) that takes a
      // value consumes the next word, unless given as --opt=value.
      if (a.find('=') == std::string::npos) {
        for (CLI::App* at = cur; at != nullptr; at = at->get_parent()) {
          const CLI::Option* o = at->get_option_no_throw(a);
          if (o != nullptr) {
            i += o->get_type_size() != 0 ? 1 : 0;
            break;
          }
        }
      }
      continue;
    }
    if (cur->get_subcommands({}).empty() || cur->get_require_subcommand_min() == 0) {
      return std::nullopt;  // a command that takes its own words from here on
    }
    CLI::App* next = nullptr;
    for (CLI::App* sub : cur->get_subcommands({})) {
      next = next != nullptr ? next : (sub->check_name(a) ? sub : nullptr);
    }
    if (next == nullptr) {
      std::vector<std::string> close;
      for (const auto& n : gpuplan::ClosestNames(a, names(cur), 2)) {
        if (gpuplan::EditDistance(gpuplan::NormalizeName(a), gpuplan::NormalizeName(n)) <=
            std::max<int>(2, static_cast<int>(n.size() / 3))) {
          close.push_back(n);
        }
      }
      return gpuplan::UsageError("unknown command '" + a + "' for " + path +
                                 (close.empty() ? "" : "; did you mean " + gpuplan::JoinOr(close) + "?") +
                                 " (commands: " + join(names(cur)) + ")");
    }
    cur = next;
    path += " " + a;
  }
  if (!cur->get_subcommands({}).empty() && cur->get_require_subcommand_min() > 0) {
    for (const std::string& a : {std::string("--help"), std::string("-h"), std::string("--version")}) {
      for (int i = 1; i < argc; ++i) {
        if (a == argv[i]) {
          return std::nullopt;  // CLI11 answers these
        }
      }
    }
    return gpuplan::UsageError(path + " needs a command: " + join(names(cur)) + " (" + path + " COMMAND --help)");
  }
  return std::nullopt;
}

// The language of text output: --lang, else the locale (LC_ALL, LC_MESSAGES, LANG).
void SetLanguage(const std::string& lang, const GlobalOptions& g) {
  const gpuplan::Lang text_lang = lang.empty() ? gpuplan::LangFromEnvironment() : gpuplan::ParseLang(lang);
  if (text_lang != gpuplan::Lang::kEn) {
    try {
      gpuplan::SetTextLanguage(gpuplan::Messages::Load(DataDir(g) + "/messages.json"), text_lang);
    } catch (const std::exception&) {
      // No catalogue (or an unreadable one) in this data folder: English, as before.
    }
  }
}

}  // namespace
}  // namespace gpuplan::cli

int main(int argc, char** argv) {
  using namespace gpuplan::cli;
  // SIGINT/SIGTERM end a command at once but remove its temporary files and worker process
  // groups first; meter run, serve and check --net-listen replace this with a graceful stop.
  gpuplan::InstallStopCleanup();
  CLI::App app{"gpuplan: which GPUs, how many, how laid out, and what it costs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpuplan ") + GPUPLAN_VERSION);
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
  const Entry table[] = {{"fit", RegisterFit}, {"gpus", RegisterGpus}, {"models", RegisterModels}, {"frameworks", RegisterFrameworks}, {"cost", RegisterCost}, {"check", RegisterCheck}, {"meter", RegisterMeter}, {"plan", RegisterPlan}, {"serve", RegisterServe}};
  std::map<CLI::App*, Runner> runners;
  for (const auto& e : table) {
    Runner r = e.reg(app, g);
    runners[app.get_subcommand(e.name)] = std::move(r);
  }
  if (const auto bad = CheckCommandWords(app, argc, argv)) {
    // Not parsed yet: --lang and --data-dir read from the words themselves for the error line.
    GlobalOptions early;
    std::string early_lang;
    for (int i = 1; i + 1 < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--lang") {
        early_lang = argv[i + 1];
      } else if (a == "--data-dir") {
        early.data_dir = argv[i + 1];
      }
    }
    SetLanguage(early_lang == "zh" || early_lang == "en" ? early_lang : "", early);
    return Report(*bad, AskedForJson(argc, argv));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 says "Could not convert: --gpus = 1.5": name the option, the value and what it takes.
    const std::string what = e.what();
    const std::string prefix = "Could not convert: ";
    if (what.rfind(prefix, 0) == 0 && what.find(" = ") != std::string::npos) {
      const std::string flag = what.substr(prefix.size(), what.find(" = ") - prefix.size());
      const std::string value = what.substr(what.find(" = ") + 3);
      gpuplan::ErrorReport r = gpuplan::UsageError("expected a number (a whole number for counts), got '" + value + "'");
      r.field = flag;
      return Report(r, AskedForJson(argc, argv));
    }
    // The number validators (cli_options.h) say "FLAG: <their message>": an empty number ("--seq
    // ''", which CLI11 would read as 0) and a count beyond 64 bits (which CLI11 would saturate).
    for (const auto& [said, message] :
         {std::pair{kEmptyNumber, "expected a number (a whole number for counts), got ''"},
          std::pair{kNumberOutOfRange, "expected a whole number, got one beyond 64 bits"}}) {
      const std::string suffix = std::string(": ") + said;
      if (what.size() > suffix.size() && what.rfind('-', 0) == 0 &&
          what.compare(what.size() - suffix.size(), suffix.size(), suffix) == 0) {
        gpuplan::ErrorReport r = gpuplan::UsageError(message);
        r.field = what.substr(0, what.size() - suffix.size());
        return Report(r, AskedForJson(argc, argv));
      }
    }
    if (AskedForJson(argc, argv)) {
      return Report(gpuplan::UsageError(e.what()), true);
    }
    app.exit(e);
    return gpuplan::kExitBadInput;
  }
  SetLanguage(lang, g);
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
  } catch (const gpuplan::InputError& e) {
    // The library names options by key; the command line spells them as flags.
    return Report(gpuplan::DescribeError(SpellFlags(e)), g.json);
  } catch (const std::exception& e) {
    return Report(gpuplan::DescribeError(e), g.json);
  } catch (...) {
    return Report(gpuplan::DescribeError(std::runtime_error("an exception that is not a std::exception")), g.json);
  }
}
