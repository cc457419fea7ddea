// RunCheck: the orchestration of `gpuplan check`. It resolves what was ordered, opens the GPU
// source, runs the registered tests (check/suite.h) in order and tells the observer after each.
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <regex>

#include "check/check_request.h"
#include "check/net.h"
#include "check/sold_as.h"
#include "check/suite.h"
#include "check/verdict.h"
#include "read/time_text.h"
#include "core/error.h"
#include "catalog/offer.h"
#include "read/file_text.h"
#include "read/json_fields.h"
#include "telemetry/nvidia_smi.h"
#include "telemetry/nvml_source.h"
#include "telemetry/recorded_source.h"

namespace gpuplan {
namespace {


// Bytes a training checkpoint takes: `checkpoint.bytes` of the fit result, or for an older
// result (docs/check.md §5.3) the weights in bf16 (2 bytes per
// parameter; only the adapter for LoRA/QLoRA) and, for Adam-family optimisers, the fp32 master
// copy and two moments of every trainable parameter (12 bytes; ZeRO, Rajbhandari et al. 2020 §3).
uint64_t CheckpointBytes(const nlohmann::json& fit, const std::string& file) {
  // A fit result that states its checkpoint (docs/data-movement.md: what the framework saves).
  if (fit.contains("checkpoint") && fit["checkpoint"].is_object() && fit["checkpoint"].contains("bytes")) {
    const auto& c = fit["checkpoint"];
    if (!c.value("training", true)) {
      return 0;
    }
    const double b = c["bytes"].get<double>();
    if (!(b >= 0 && b <= 1e16)) {
      throw InputError("checkpoint.bytes must be between 0 and 1e16", file, 0, "checkpoint.bytes");
    }
    return static_cast<uint64_t>(b);
  }
  const auto& model = fit.at("model");
  const auto& w = fit.at("workload");
  const double total = model.at("params_total").get<double>();
  const double trainable = model.value("params_trainable", total);
  const std::string task = w.value("task", "full");
  if (task == "inference") {
    return 0;
  }
  const bool adapter = task == "lora" || task == "qlora";
  const std::string opt = w.value("optimizer", "adamw");
  const double state = opt == "sgd" ? 4.0 : 12.0;
  return static_cast<uint64_t>((adapter ? 2.0 * trainable : 2.0 * total) + state * trainable);
}

void ReadFitFile(const CheckRequest& req, CheckContext& ctx) {
  const nlohmann::json fit = ParseJsonText(ReadFileText(req.fit), req.fit);
  try {
    const double tokens_per_s = fit.at("time").at("tokens_per_second").get<double>();
    const double seq = fit.at("workload").at("seq").get<double>();
    if (!(tokens_per_s > 0) || !(seq > 0)) {
      throw InputError("the fit result has no positive tokens_per_second and seq", req.fit, 0, "time.tokens_per_second");
    }
    if (!ctx.storage_need) {
      StorageNeed need;
      need.samples_per_second = tokens_per_s / seq;
      need.bytes_per_sample = req.bytes_per_sample.value_or(seq * req.bytes_per_token);
      ctx.storage_need = need;
    }
    if (const uint64_t ck = CheckpointBytes(fit, req.fit); ck > 0) {
      ctx.checkpoint_bytes = ck;
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("not a gpuplan fit --json result: ") + e.what(), req.fit, 0, "--fit");
  }
}

CheckResult EnvironmentResult(const std::string& what) {
  CheckResult r = Make("gpu_driver", -1, {});
  Error(r, what, "install the NVIDIA driver (or run where it is), or judge a capture with --from-nvidia-smi FILE");
  return r;
}

}  // namespace

const char* ToString(CheckMode m) {
  switch (m) {
    case CheckMode::kQuick: return "quick";
    case CheckMode::kDefault: return "default";
    case CheckMode::kFull: return "full";
  }
  return "default";
}

CheckReport RunCheck(const CheckRequest& req, const GpuCatalog& catalog, CheckObserver* observer) {
  CheckObserver none;
  CheckObserver& obs = observer != nullptr ? *observer : none;
  CheckContext ctx(req, catalog);
  ctx.mode = req.Mode();
  CheckReport rep;
  rep.tool_version = req.tool_version;
  rep.mode = ToString(ctx.mode);
  rep.started = UtcNowIso();

  // Input first: nothing runs on a bad request.
  if (req.quick && req.full) {
    throw InputError("choose one of --quick and --full", "", 0, "--full");
  }
  if (!req.thresholds.empty()) {
    ctx.thresholds = LoadCheckThresholds(req.thresholds);
  }
  if (!req.expect.empty() && !req.offer.empty()) {
    throw InputError("give what was ordered once: --expect or --offer, not both", "", 0, "--offer");
  }
  if (!req.offer.empty()) {
    if (req.offers.empty()) {
      throw InputError("--offer needs the offers file (--offers FILE)", "", 0, "--offers");
    }
    const OfferSet set = LoadOffers(req.offers, catalog);
    ctx.expect = ExpectFromOffer(set, req.offer);
    rep.offer_id = req.offer;
  } else if (!req.expect.empty()) {
    ctx.expect = ParseExpect(req.expect, catalog);
  }
  ctx.expect.mig_allowed = req.allow_mig;
  if (req.cpu_cores) {
    ctx.expect.cpu_cores = req.cpu_cores;
  }
  static const std::regex kCuda(R"(^\d+\.\d+(\.\d+)?$)");
  if (!req.cuda.empty()) {
    if (!std::regex_match(req.cuda, kCuda)) {
      throw InputError("expected a CUDA version such as 12.4, got '" + req.cuda + "'", "", 0, "--cuda");
    }
    ctx.expect.cuda = req.cuda;
    ctx.expect.cuda_source = "--cuda " + req.cuda;
  }
  if (req.samples_per_second.has_value() != req.bytes_per_sample.has_value() && req.fit.empty()) {
    throw InputError("--samples-per-second and --bytes-per-sample go together (or give --fit FILE)", "", 0,
                     req.samples_per_second ? "--bytes-per-sample" : "--samples-per-second");
  }
  if (req.samples_per_second && req.bytes_per_sample) {
    ctx.storage_need = StorageNeed{*req.samples_per_second, *req.bytes_per_sample};
  }
  if (!req.fit.empty()) {
    ReadFitFile(req, ctx);
  }
  if (!req.data.empty() && !std::filesystem::is_directory(req.data)) {
    throw InputError("no such folder: " + req.data, "", 0, "--data");
  }
  if (!req.from_nvidia_smi.empty() && !req.replay.empty()) {
    throw InputError("judge captures (--from-nvidia-smi) or replay a recording (--replay), not both", "", 0, "--replay");
  }
  if (!req.from_nvidia_smi.empty() && !req.record.empty()) {
    throw InputError("--record records this machine's GPUs; it does not apply to captures", "", 0, "--record");
  }
  const bool net_only = !req.net.empty();
  if (!req.net_listen.empty()) {
    throw InputError::Option("net_listen", "a listener is not a check: run it on its own (NetListener, check/net_listen.h)");
  }
  if (net_only) {
    ParseNetEndpoint(req.net, "net", /*listen=*/false);  // a bad HOST:PORT before anything runs
    for (const auto& [given, key] : {std::pair{!req.from_nvidia_smi.empty(), "from_nvidia_smi"},
                                     std::pair{!req.replay.empty(), "replay"}, std::pair{!req.record.empty(), "record"},
                                     std::pair{!req.data.empty(), "data"}}) {
      if (given) {
        throw InputError::Option(key, "the link test (" + OptionRef("net") +
                                          ") runs on its own, from any machine: check the server in a run of its own");
      }
    }
    if (req.net_rate_mbps && req.net_tool != "iperf3") {
      throw InputError::Option("net_rate_mbps", "a gpuplan link is paced by its listener: give it to " +
                                                    OptionRef("net_listen") + " (or cap iperf3's senders with " +
                                                    OptionRef("net_tool") + " iperf3)");
    }
    rep.notes.emplace_back("link test only (--net " + req.net +
                           "): this run measures the network, not the GPUs, host or storage of either machine");
  }

  // The GPUs: captures, a recording, or NVML.
  std::unique_ptr<GpuSource> opened;  // NVML or the recording
  std::unique_ptr<GpuSource> source;  // what the tests read: `opened`, or a recorder around it
  if (!req.from_nvidia_smi.empty()) {
    ctx.captures = true;
    for (const auto& f : req.from_nvidia_smi) {
      ctx.start.push_back(LoadNvidiaSmiCapture(f));
      ctx.capture_files.push_back(f);
      if (!ctx.start.back().hostname) {
        ctx.start.back().hostname = std::filesystem::path(f).filename().string();
      }
    }
    ctx.gpu_origin = "nvidia-smi capture";
    rep.source = "nvidia-smi captures: ";
    for (std::size_t i = 0; i < req.from_nvidia_smi.size(); ++i) {
      rep.source += (i ? ", " : "") + req.from_nvidia_smi[i];
    }
  } else {
    if (!req.replay.empty()) {
      opened = RecordedSource::Open(req.replay);
    } else if (net_only) {
      rep.source = "none (link test)";
    } else {
      try {
        opened = NvmlSource::Open(req.nvml_library);
      } catch (const EnvironmentError& e) {
        rep.notes.emplace_back(e.what());
        rep.environment_problem = true;
        rep.source = "none";
      }
    }
    if (opened) {
      if (!req.record.empty()) {
        source = std::make_unique<RecordingWriter>(*opened, req.record);
      } else {
        source = std::move(opened);
      }
      ctx.gpu_origin = req.replay.empty() ? "NVML" : "recording " + req.replay;
      rep.source = source->Describe();
      ctx.start.push_back(source->Snapshot());
      ctx.gpus = source.get();
    }
    if (ctx.expect.cuda_source.empty() && !net_only) {
      if (auto torch = DetectTorchCuda()) {
        ctx.expect.cuda = torch->first;
        ctx.expect.cuda_source = torch->second;
      }
    }
  }
  rep.nodes = ctx.start;
  rep.expect = ctx.expect.text;
  if (ctx.expect.gpu != nullptr) {
    rep.expected_card = ctx.expect.gpu->name;
  }
  if (!ctx.captures) {
    rep.host = ReadHostInfo();
    ctx.cpu_start = ReadCpuTimes();
    if (!ctx.start.empty() && !ctx.start.front().hostname) {
      ctx.start.front().hostname = rep.host.hostname;
      rep.nodes.front().hostname = rep.host.hostname;
    }
  }

  std::vector<const CheckTest*> plan;
  for (const CheckTest& t : SuiteTests()) {
    if (!RunsIn(t, ctx.mode)) {
      continue;
    }
    if ((t.needs == CheckNeeds::kNetPeer) != net_only) {
      continue;  // the link test runs alone, and only when asked for
    }
    const bool runs = t.needs == CheckNeeds::kNetPeer || t.needs == CheckNeeds::kNothing || (t.needs == CheckNeeds::kGpus && !ctx.start.empty()) ||
                      (t.needs == CheckNeeds::kLiveGpus && ctx.gpus != nullptr) ||
                      (t.needs == CheckNeeds::kThisHost && !ctx.captures);
    if (runs) {
      plan.push_back(&t);
    }
  }
  std::vector<std::string> names;
  for (const CheckTest* t : plan) {
    names.push_back(t->name);
  }
  if (rep.environment_problem) {
    rep.Add(EnvironmentResult(rep.notes.back()));
  }
  obs.OnStart(rep, names);

  int index = 0;
  SystemSnapshot previous = ctx.start.empty() ? SystemSnapshot{} : ctx.start.front();
  for (const CheckTest* t : plan) {
    obs.OnTestStart(t->name, index, static_cast<int>(plan.size()));
    ctx.progress = [&obs, t](double f) { obs.OnProgress(t->name, f); };
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<CheckResult> results;
    try {
      results = t->run(ctx);
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      CheckResult r = Make(t->name, -1, {});
      Error(r, std::string("the test stopped: ") + e.what(), "");
      results = {r};
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (ctx.gpus != nullptr) {
      std::vector<GpuEvent> during = std::move(ctx.test_events);
      ctx.test_events.clear();
      std::vector<GpuEvent> after = ctx.gpus->Events(0);
      during.insert(during.end(), after.begin(), after.end());
      ctx.events.insert(ctx.events.end(), during.begin(), during.end());
      // ECC, remapped rows and XIDs that moved during this test are tied to it here; the
      // health_delta test at the end sums up the whole run.
      if (t->name != "health_delta") {
        SystemSnapshot now = ctx.gpus->Snapshot();
        for (auto& r : JudgeHealthDelta(previous, now, during, "the " + t->name + " test")) {
          if (r.status == CheckStatus::kFail || r.status == CheckStatus::kWarn) {
            results.push_back(std::move(r));
          }
        }
        previous = std::move(now);
      }
    }
    for (auto& r : results) {
      if (r.seconds == 0) {
        r.seconds = secs;
      }
      rep.Add(std::move(r));
    }
    rep.events = ctx.events;
    rep.curves = ctx.curves;
    rep.net = ctx.net;
    obs.OnTestDone(rep, t->name);
    ++index;
  }
  rep.finished = UtcNowIso();
  obs.OnFinish(rep);
  return rep;
}

}  // namespace gpuplan
