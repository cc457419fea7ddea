#include "check/check_options.h"

#include "check/net.h"

namespace gpuplan {

const OptionTable<CheckRequest>& CheckOptionTable() {
  using R = CheckRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--quick", "quick", "the short suite: under 2 minutes on one GPU", &R::quick));
    t.push_back(Option<R>("--full", "full", "the full suite, with the 30-minute burn-in of the GPU tests", &R::full));
    t.push_back(Option<R>("--expect", "expect",
                          "what was ordered: \"8x H100 SXM\", \"H100 SXM 80GB x8\", a card, or a count",
                          &R::expect)
                    .Unset("each card judged by its own device id"));
    t.push_back(Option<R>("--offers", "offers", "offers file (YAML, docs/offers.md), with --offer", &R::offers)
                    .Unset("none"));
    t.push_back(Option<R>("--offer", "offer", "the offer the machine was rented under: its card and count",
                          &R::offer)
                    .Unset("none"));
    t.push_back(Option<R>("--cpu-cores", "cpu_cores", "CPU cores the offer promises", &R::cpu_cores)
                    .Unit("cores")
                    .Min(1)
                    .Max(100000)
                    .Unset("the cores present"));
    t.push_back(Option<R>("--cuda", "cuda", "the CUDA version the software needs (the driver must support it)",
                          &R::cuda)
                    .Unset("PyTorch's, if installed"));
    t.push_back(Option<R>("--allow-mig", "allow_mig", "MIG slices were asked for (not a FAIL)", &R::allow_mig));
    t.push_back(Option<R>("--from-nvidia-smi", "from_nvidia_smi",
                          "judge nvidia-smi -q -x (or -q) captures, one per node, instead of this machine",
                          &R::from_nvidia_smi)
                    .Unset("this machine"));
    t.push_back(Option<R>("--replay", "replay", "read the GPUs from a recording (--record) instead of NVML",
                          &R::replay)
                    .Unset("NVML"));
    t.push_back(Option<R>("--record", "record", "record the NVML snapshots and events of this run to FILE",
                          &R::record)
                    .Unset("none"));
    t.push_back(Option<R>("--data", "data", "the dataset folder: storage read tests", &R::data).Unset("none"));
    t.push_back(Option<R>("--samples-per-second", "samples_per_second", "samples per second training will read",
                          &R::samples_per_second)
                    .Unit("samples/s")
                    .Min(0, true)
                    .Max(1e12)
                    .Unset("none"));
    t.push_back(Option<R>("--bytes-per-sample", "bytes_per_sample", "bytes read per sample", &R::bytes_per_sample)
                    .Unit("bytes")
                    .Min(0, true)
                    .Max(1e12)
                    .Unset("none"));
    t.push_back(Option<R>("--fit", "fit", "a gpuplan fit --json result: samples/s and checkpoint size", &R::fit)
                    .Unset("none"));
    t.push_back(Option<R>("--bytes-per-token", "bytes_per_token",
                          "with --fit: bytes of dataset per token (4: int32 token ids)", &R::bytes_per_token)
                    .Unit("bytes")
                    .Min(0, true)
                    .Max(1e6));
    t.push_back(Option<R>("--storage-threads", "storage_threads", "threads reading the dataset folder",
                          &R::storage_threads)
                    .Min(1)
                    .Max(256));
    t.push_back(Option<R>("--thresholds", "thresholds", "YAML file overriding the thresholds of docs/check.md",
                          &R::thresholds)
                    .Unset("docs/check.md"));
    t.push_back(Option<R>("--worker", "worker", "the gpu-worker binary that runs the GPU tests", &R::worker)
                    .Unset("gpu-worker next to gpuplan"));
    t.push_back(Option<R>("--duration", "duration", "length of the GPU burn-in", &R::duration)
                    .Unit("s")
                    .Min(1)
                    .Max(604800)
                    .Unset("300 s; 1800 s with --full; none with --quick"));
    t.push_back(Option<R>("--sample-interval", "sample_interval",
                          "how often NVML is sampled while the GPU tests run", &R::sample_interval)
                    .Unit("s")
                    .Min(0.05)
                    .Max(60));
    t.push_back(Option<R>("--test-timeout", "test_timeout",
                          "kill a GPU worker still running after this long (its GPU FAILs the test)",
                          &R::test_timeout)
                    .Unit("s")
                    .Min(1)
                    .Max(604800)
                    .Unset("the test's planned time + 120 s"));
    t.push_back(Option<R>("--no-gpu-tests", "no_gpu_tests", "skip the GPU worker tests (inventory, host and storage only)",
                          &R::no_gpu_tests));
    t.push_back(Option<R>("--net", "net",
                          "link test to a gpuplan check --net-listen on HOST (docs/check.md §12); runs alone, no GPU needed",
                          &R::net)
                    .Unset("none"));
    t.push_back(Option<R>("--net-listen", "net_listen",
                          "serve the other end of the link test on [ADDR:]PORT (127.0.0.1 without ADDR) until stopped",
                          &R::net_listen)
                    .Unset("none"));
    t.push_back(Option<R>("--net-tool", "net_tool",
                          "what measures the link: gpuplan (a gpuplan check --net-listen answers) or iperf3 (the installed "
                          "iperf3 client against an iperf3 -s)",
                          &R::net_tool)
                    .Choices({"gpuplan", "iperf3"}));
    t.push_back(Option<R>("--net-streams", "net_streams", "TCP connections at once in each direction of the link test",
                          &R::net_streams)
                    .Min(1)
                    .Max(kNetMaxStreams));
    t.push_back(Option<R>("--net-seconds", "net_seconds", "how long each direction of the link test runs", &R::net_seconds)
                    .Unit("s")
                    .Min(kNetMinSeconds)
                    .Max(kNetMaxSeconds));
    t.push_back(Option<R>("--net-bytes", "net_bytes",
                          "size of the checkpoint fetched from the listener (cut at 3 x --net-seconds, then extrapolated)",
                          &R::net_bytes)
                    .Unit("bytes")
                    .Min(static_cast<double>(kNetMinBytes))
                    .Max(static_cast<double>(kNetMaxBytes)));
    t.push_back(Option<R>("--net-rate-mbps", "net_rate_mbps",
                          "with --net-listen: pace reads and writes to this rate each way (a link of known speed, for tests); with "
                          "--net-tool iperf3: cap iperf3's senders to this in all (-b per stream)",
                          &R::net_rate_mbps)
                    .Unit("Mbit/s")
                    .Min(kNetMinRateMbps)
                    .Max(kNetMaxRateMbps)
                    .Unset("not paced"));
    t.push_back(Option<R>("--net-token", "net_token",
                          "shared secret of --net and --net-listen; a listener off loopback requires it (or GPUPLAN_TOKEN)",
                          &R::net_token)
                    .Unset("none"));
    t.push_back(Option<R>("--net-min-gbps", "net_min_gbps", "FAIL a direction of the link below this", &R::net_min_gbps)
                    .Unit("Gbit/s")
                    .Min(0, true)
                    .Max(100000)
                    .Unset("none (figures only)"));
    t.push_back(Option<R>("--net-max-rtt-ms", "net_max_rtt_ms", "FAIL a link whose round trip is above this",
                          &R::net_max_rtt_ms)
                    .Unit("ms")
                    .Min(0, true)
                    .Max(1e6)
                    .Unset("none (figures only)"));
    t.push_back(Option<R>("--json", "json", "write the JSON report to FILE, complete after every test (- : stdout)",
                          &R::json)
                    .Unset("none"));
    t.push_back(Option<R>("--markdown", "markdown", "write the Markdown report to FILE", &R::markdown).Unset("none"));
    t.push_back(Option<R>("--html", "html", "write the self-contained HTML report to FILE", &R::html).Unset("none"));
    return t;
  }();
  return table;
}

const OptionTable<CompareReportsRequest>& CompareReportsOptionTable() {
  using R = CompareReportsRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--offers", "offers",
                          "offers file: price each report's offer and rank by money per measured unit", &R::offers)
                    .Unset("none"));
    t.push_back(Option<R>("--offer-of", "offer_of",
                          "REPORT=OFFER pairs for reports that do not name their offer", &R::offer_of)
                    .Unset("the offer in each report"));
    t.push_back(Option<R>("--json", "json", "write the comparison as JSON to FILE (- : stdout)", &R::json)
                    .Unset("none"));
    t.push_back(Option<R>("--markdown", "markdown", "write the comparison as Markdown to FILE", &R::markdown)
                    .Unset("none"));
    t.push_back(Option<R>("--html", "html", "write the comparison as HTML to FILE", &R::html).Unset("none"));
    return t;
  }();
  return table;
}

const OptionTable<MergeReportsRequest>& MergeReportsOptionTable() {
  using R = MergeReportsRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--outlier-z", "outlier_z", "robust z-score beyond which a node or GPU is an outlier",
                          &R::outlier_z)
                    .Min(0, true)
                    .Max(1000));
    t.push_back(Option<R>("--json", "json", "write the merged report as JSON to FILE (- : stdout)", &R::json)
                    .Unset("none"));
    t.push_back(Option<R>("--markdown", "markdown", "write the merged report as Markdown to FILE", &R::markdown)
                    .Unset("none"));
    t.push_back(Option<R>("--html", "html", "write the merged report as HTML to FILE", &R::html).Unset("none"));
    return t;
  }();
  return table;
}

}  // namespace gpuplan
