// Reading `nvidia-smi -q -x` (XML) and `nvidia-smi -q` (text) captures into the snapshot model
// (snapshot.h), so `gpuplan check --from-nvidia-smi FILE...` can judge what a provider sends.
//
// The mapping from elements/keys to GpuSnapshot fields, and the element names that changed
// between driver versions, are in docs/nvidia-smi-capture.md.
//
// Values "N/A", "[N/A]", "Not Supported", "[Not Supported]", "Unknown Error", ... leave the field
// absent with not_measured[field] = "nvidia-smi -q -x: <element path> = <text>" (or
// "nvidia-smi -q: <key path> = <text>"); an element that is missing entirely leaves it absent
// with "not in the capture". Malformed XML and values that do not parse are InputError
// (file, line, field = element path).
#pragma once

#include <cstdint>
#include <string>

#include "telemetry/snapshot.h"

namespace gpuplan {

// Parses the text of an `nvidia-smi -q -x` capture. `file` names it in errors.
SystemSnapshot ParseNvidiaSmiXml(const std::string& text, const std::string& file);

// Parses the text of an `nvidia-smi -q` capture (the human, indented "Key : Value" form).
SystemSnapshot ParseNvidiaSmiQueryText(const std::string& text, const std::string& file);

// The largest capture LoadNvidiaSmiCapture reads: 256 MiB. A real `nvidia-smi -q -x` is about
// 18 kB per GPU (150 kB for 8 GPUs), so this holds some 14,000 GPUs (the 10,000-GPU capture of
// bench/reader_bench.cc is 179 MB), and keeps /dev/zero or a runaway file from being read
// whole. Reasons and figures: docs/nvidia-smi-capture.md ("Size and depth").
inline constexpr std::uint64_t kMaxNvidiaSmiCaptureBytes = std::uint64_t{256} << 20;

// Reads `path` and parses it as XML (when it starts with "<?xml", "<!DOCTYPE nvidia_smi_log" or
// "<nvidia_smi_log", after leading white space) or else as `nvidia-smi -q` text. A missing or
// unreadable file is an InputError naming it; so is one larger than `max_bytes`, found from its
// size or, for a pipe or a device, after reading `max_bytes` + 1 bytes (never more).
SystemSnapshot LoadNvidiaSmiCapture(const std::string& path,
                                    std::uint64_t max_bytes = kMaxNvidiaSmiCaptureBytes);

}  // namespace gpuplan
