// gpuplan fit: flags into a FitRequest (fit/fit_request.h), the library runs it (RunFit,
// plan/fit_job.h), and plan/render/fit_job_json.h or plan/render/fit_text.h renders the result.
#include <unistd.h>

#include <iostream>

#include "catalog/gpu_catalog.h"
#include "catalog/listings.h"
#include "cli_options.h"
#include "commands.h"
#include "plan/fit_job.h"
#include "fit/fit_options.h"
#include "fit/fit_request.h"
#include "plan/render/fit_job_json.h"
#include "plan/render/fit_text.h"

namespace gpuplan::cli {
namespace {

void ProgressBar(double fraction) {
  static const bool tty = isatty(STDERR_FILENO) != 0;
  if (!tty) {
    return;
  }
  const int width = 40;
  const int filled = static_cast<int>(fraction * width);
  std::cerr << "\r[" << std::string(static_cast<std::size_t>(filled), '#')
            << std::string(static_cast<std::size_t>(width - filled), ' ') << "] " << static_cast<int>(100 * fraction)
            << "%" << (fraction >= 1.0 ? "\r\33[K" : "") << std::flush;
}

}  // namespace

Runner RegisterFit(CLI::App& app, GlobalOptions& g) {
  auto o = std::make_shared<FitRequest>();
  CLI::App* c = app.add_subcommand("fit", "memory, step time and the best layout for a model and task; does it fit?");
  AddOptions(c, FitOptionTable(), *o);
  c->add_flag("--json", g.json, "print JSON");

  return [o, c, &g]() -> int {
    MarkGivenFitOptions(*o, GivenByKey(c, FitOptionTable()));
    o->progress = ProgressBar;
    const std::string data = DataDir(g);
    // The result points into the catalog: it outlives the result.
    const GpuCatalog cat = LoadGpuCatalog(data);
    const FitJobResult res = RunFit(*o, cat, data);
    if (g.json) {
      std::cout << FitJobToJson(res).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      FitJobToText(std::cout, res);
    }
    return res.Positive() ? kExitOk : kExitNegative;
  };
}

}  // namespace gpuplan::cli
