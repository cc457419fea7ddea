// Readers for `nvidia-smi -q -x` and `nvidia-smi -q` captures. Both are first turned into one
// small tree (Node: name, value, line, children), then a single mapping table fills
// GpuSnapshot from it; each field lists its XML element path(s) and its text key path(s).
// The mapping and the element names by driver version: docs/nvidia-smi-capture.md.
#include "telemetry/nvidia_smi.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <pugixml.hpp>

#include "core/error.h"
#include "read/file_text.h"

namespace gpuplan {
namespace {

// A node does not own its children: every node of a capture lives in Capture::nodes, so that
// neither building nor destroying the tree recurses on the input's depth (a 50,000-deep file
// would otherwise overflow the stack in a recursive copy or in nested unique_ptr destructors).
struct Node {
  std::string name;
  std::string value;  // trimmed text; empty for a section
  int line = 0;
  const Node* parent = nullptr;
  bool is_gpu = false;  // a <gpu> element or a "GPU 0000:..." section
  std::vector<const Node*> children;
  // The first child of each name (by_name) and the second of each name given twice
  // (second_by_name), built only for nodes with many children (Capture::Index), so a lookup in a
  // hostile node with a million children is not a linear scan per field. Held by pointer: two
  // empty maps in every node were 112 of its 216 bytes, and a capture of 4 million `<a/>` has
  // 4 million nodes.
  struct NameIndex {
    std::unordered_map<std::string_view, const Node*> by_name;
    std::unordered_map<std::string_view, const Node*> second_by_name;
  };
  std::unique_ptr<NameIndex> index;

  const Node* Child(std::string_view n) const { return FirstTwo(n).first; }

  // The first child named `n` and the second one (nullptr when `n` is there once): nvidia-smi
  // writes a field once per section, so a reader refuses a second one it would read.
  std::pair<const Node*, const Node*> FirstTwo(std::string_view n) const {
    if (index != nullptr) {
      const auto it = index->by_name.find(n);
      if (it == index->by_name.end()) return {nullptr, nullptr};
      const auto second = index->second_by_name.find(n);
      return {it->second, second == index->second_by_name.end() ? nullptr : second->second};
    }
    const Node* first = nullptr;
    for (const Node* c : children) {
      if (c->name != n) continue;
      if (first != nullptr) return {first, c};
      first = c;
    }
    return {first, nullptr};
  }
};

// Bounds on the numbers a capture may hold (docs/nvidia-smi-capture.md, "Bounds").
// 16 TiB per GPU: 50 times the largest GPU memory today (288 GB), and 2^44 bytes, so a size
// (and a sum of sizes over a machine) stays far from 2^64 and exact in a double.
constexpr uint64_t kMaxGpuMemoryBytes = 1ULL << 44;
constexpr uint64_t kMaxCount = 1ULL << 53;  // error and replay counters
constexpr double kMaxWatts = 100000;
constexpr int kMaxAttachedGpus = 65536;  // a capture of 10,000 GPUs is read (bench/reader_bench.cc)

// Children beyond which a node gets a name index (a real GPU section has about 60).
constexpr size_t kIndexChildren = 64;

std::string Trim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])) != 0) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])) != 0) --e;
  return std::string(s.substr(b, e - b));
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// True for the values nvidia-smi prints where it has no number: "N/A", "[N/A]",
// "Not Supported", "[Not Supported]", "Unknown Error", "Insufficient Permissions",
// "Requested functionality has been deprecated", ... (any text in square brackets too).
bool IsNotMeasured(const std::string& v) {
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') return true;
  static const char* const kWords[] = {"n/a",
                                       "not supported",
                                       "unknown error",
                                       "insufficient permissions",
                                       "not available",
                                       "requested functionality has been deprecated",
                                       "gpu requires reset",
                                       "gpu is lost"};
  const std::string l = Lower(v);
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [&](const char* w) { return l == w; });
}

// One capture, as a tree, with how to name it in reasons and errors.
struct Capture {
  std::string file;
  std::string origin;  // "nvidia-smi -q -x" or "nvidia-smi -q"
  Node root;           // children: top-level values and one node per GPU
  std::deque<Node> nodes;  // every node below root (a deque: adding keeps their addresses)
  std::vector<const Node*> gpus;

  Node& Add(Node* parent, int line) {
    Node& n = nodes.emplace_back();
    n.parent = parent;
    n.line = line;
    parent->children.push_back(&n);
    return n;
  }

  // Builds Node::by_name where a node has many children; after the tree is complete.
  void Index() {
    const auto index = [](Node& n) {
      if (n.children.size() <= kIndexChildren) return;
      n.index = std::make_unique<Node::NameIndex>();
      for (const Node* c : n.children) {
        if (!n.index->by_name.try_emplace(c->name, c).second) n.index->second_by_name.try_emplace(c->name, c);
      }
    };
    index(root);
    for (Node& n : nodes) index(n);
  }
};

// "temperature/gpu_temp": the path below the GPU (or below the root for system values).
std::string PathOf(const Node* n) {
  std::string path;
  for (; n != nullptr && n->parent != nullptr && !n->is_gpu; n = n->parent) {
    path = path.empty() ? n->name : n->name + "/" + path;
  }
  return path;
}

// The child `name` of `parent`; a second child of that name is an InputError at its line.
const Node* ChildOnce(const Capture& cap, const Node* parent, std::string_view name) {
  const auto [first, second] = parent->FirstTwo(name);
  if (second != nullptr) {
    throw InputError(fmt::format("{}: '{}' is given twice in one section (first at line {}); "
                                 "nvidia-smi writes each field once",
                                 cap.origin, second->name, first->line),
                     cap.file, second->line, PathOf(second));
  }
  return first;
}

enum class Status { kValue, kNotMeasured, kMissing };

struct Lookup {
  Status status = Status::kMissing;
  const Node* node = nullptr;
  std::string path;  // the path as written in the capture's names, '/'-separated
};

std::vector<std::string> SplitPath(std::string_view p) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    if (slash == std::string_view::npos) slash = p.size();
    out.emplace_back(p.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

// Follows `path` below `base`. An ancestor with a "N/A"-like value and no children (e.g.
// `<remapped_rows>N/A</remapped_rows>`) makes the whole path not measured.
Lookup Find(const Capture& cap, const Node* base, std::string_view path) {
  Lookup r;
  const Node* cur = base;
  std::string walked;
  for (const std::string& part : SplitPath(path)) {
    if (cur != base && cur->children.empty() && IsNotMeasured(cur->value)) {
      r.status = Status::kNotMeasured;
      r.node = cur;
      r.path = walked;
      return r;
    }
    const Node* next = ChildOnce(cap, cur, part);
    if (next == nullptr) return r;
    walked += walked.empty() ? part : "/" + part;
    cur = next;
  }
  r.node = cur;
  r.path = walked;
  r.status = IsNotMeasured(cur->value) ? Status::kNotMeasured : Status::kValue;
  return r;
}

// The first of `paths` present in the capture (a measured value beats a "N/A" one).
Lookup FindAny(const Capture& cap, const Node* base, std::initializer_list<std::string_view> paths) {
  Lookup best;
  for (std::string_view p : paths) {
    Lookup l = Find(cap, base, p);
    if (l.status == Status::kValue) return l;
    if (l.status == Status::kNotMeasured && best.status == Status::kMissing) best = l;
  }
  return best;
}

class Filler {
 public:
  Filler(const Capture& cap, const Node* gpu, std::map<std::string, std::string>* not_measured)
      : cap_(cap), gpu_(gpu), nm_(not_measured) {}

  // Returns the node when the field has a value; otherwise records why it is absent.
  const Node* Get(const std::string& field, std::initializer_list<std::string_view> paths) {
    Lookup l = FindAny(cap_, gpu_, paths);
    if (l.status == Status::kValue) return l.node;
    if (l.status == Status::kNotMeasured) {
      (*nm_)[field] = fmt::format("{}: {} = {}", cap_.origin, l.path, l.node->value);
    } else {
      (*nm_)[field] = "not in the capture";
    }
    return nullptr;
  }

  [[noreturn]] void Bad(const Node* n, const std::string& what) const {
    throw InputError(fmt::format("{}: cannot read '{}' as {}", cap_.origin, n->value, what),
                     cap_.file, n->line, PathOf(n));
  }

  // "81559 MiB", " 37 C ", "16x", "66.92 W", "100.00%": the number before the unit, which must
  // be one of `units`, the ones nvidia-smi writes for this field ("" for a bare number): a
  // "81559 W" memory total or a "700 GiB" power limit is an error, not read in another unit.
  double Number(const Node* n, std::string_view what, std::initializer_list<std::string_view> units) const {
    std::string v = n->value;
    size_t end = 0;
    while (end < v.size() && (std::isdigit(static_cast<unsigned char>(v[end])) != 0 ||
                              v[end] == '.' || (end == 0 && (v[end] == '-' || v[end] == '+')))) {
      ++end;
    }
    double d = 0;
    const char* first = v.data();
    if (end == 0) Bad(n, std::string(what));
    auto [ptr, ec] = std::from_chars(first, first + end, d);
    if (ec != std::errc() || ptr != first + end) Bad(n, std::string(what));
    const std::string unit = Trim(std::string_view(v).substr(end));
    if (std::find(units.begin(), units.end(), unit) == units.end()) {
      std::string list;
      for (std::string_view u : units) {
        list += (list.empty() ? "" : ", ") + (u.empty() ? std::string("no unit") : std::string(u));
      }
      Bad(n, fmt::format("{} (unit: {})", what, list));
    }
    return d;
  }

  // A count (ECC errors, retired pages, replays) up to kMaxCount, so sums of a few cannot wrap.
  uint64_t Unsigned(const Node* n) const {
    const std::string& v = n->value;
    uint64_t u = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), u);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && u > kMaxCount)) {
      OutOfRange(n, "a count from 0 to 2^53 (9007199254740992)");
    }
    if (ec != std::errc() || ptr != v.data() + v.size()) Bad(n, "a whole number");
    return u;
  }

  uint32_t Hex32(const Node* n) const {
    std::string_view v = n->value;
    if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) v.remove_prefix(2);
    uint32_t u = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), u, 16);
    if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) {
      Bad(n, "a 32-bit hexadecimal id");
    }
    return u;
  }

  bool Flag(const Node* n) const {
    const std::string l = Lower(n->value);
    if (l == "enabled" || l == "yes" || l == "active") return true;
    if (l == "disabled" || l == "no" || l == "not active" || l == "none") return false;
    Bad(n, "Enabled/Disabled or Yes/No");
  }

  [[noreturn]] void OutOfRange(const Node* n, const std::string& range) const {
    throw InputError(fmt::format("{}: '{}' is out of range (expected {})", cap_.origin, n->value,
                                 range),
                     cap_.file, n->line, PathOf(n));
  }

  // A whole number in [min, max] (range errors name the range: "1 to 6").
  int Int(const Node* n, std::string_view what, std::initializer_list<std::string_view> units, int min,
          int max) const {
    const double d = Number(n, what, units);
    if (d < min || d > max) OutOfRange(n, fmt::format("{} from {} to {}", what, min, max));
    if (d != std::floor(d)) Bad(n, std::string(what));
    return static_cast<int>(d);
  }

  // A memory size ("81559 MiB", "40 GiB", "512 KiB") in bytes, at most kMaxGpuMemoryBytes: the
  // check is on the value before it becomes an integer, so a huge count of MiB cannot wrap.
  uint64_t Bytes(const Node* n) const {
    const double d = Number(n, "a memory size", {"MiB", "GiB", "KiB"});
    if (d < 0) Bad(n, "a memory size");
    const std::string& unit = n->value;
    uint64_t scale = 1048576ULL;
    if (unit.find("GiB") != std::string::npos) scale = 1073741824ULL;
    if (unit.find("KiB") != std::string::npos) scale = 1024ULL;
    if (std::floor(d) * static_cast<double>(scale) > static_cast<double>(kMaxGpuMemoryBytes)) {
      OutOfRange(n, "a memory size of at most 16 TiB (16777216 MiB) per GPU");
    }
    return static_cast<uint64_t>(d) * scale;
  }

  void Str(std::optional<std::string>& out, const std::string& field,
           std::initializer_list<std::string_view> paths) {
    if (const Node* n = Get(field, paths)) out = n->value;
  }
  void IntField(std::optional<int>& out, const std::string& field,
                std::initializer_list<std::string_view> paths, std::string_view what,
                std::initializer_list<std::string_view> units, int min, int max) {
    if (const Node* n = Get(field, paths)) out = Int(n, what, units, min, max);
  }
  void UField(std::optional<uint64_t>& out, const std::string& field,
              std::initializer_list<std::string_view> paths) {
    if (const Node* n = Get(field, paths)) out = Unsigned(n);
  }
  void FlagField(std::optional<bool>& out, const std::string& field,
                 std::initializer_list<std::string_view> paths) {
    if (const Node* n = Get(field, paths)) out = Flag(n);
  }
  void Watts(std::optional<double>& out, const std::string& field,
             std::initializer_list<std::string_view> paths) {
    if (const Node* n = Get(field, paths)) {
      out = Number(n, "watts", {"W"});
      if (*out < 0 || *out > kMaxWatts) OutOfRange(n, "watts from 0 to 100000");
    }
  }

  // Sum of the counters found under `section` among `names`; absent when none is a number.
  void EccSum(std::optional<uint64_t>& out, const std::string& field, const Node* section,
              const std::string& section_path, std::initializer_list<std::string_view> names) {
    if (section == nullptr) {
      (*nm_)[field] = "not in the capture";
      return;
    }
    uint64_t sum = 0;
    bool any = false;
    std::string na;
    for (std::string_view nm : names) {
      Lookup l = Find(cap_, section, nm);
      if (l.status == Status::kValue) {
        sum += Unsigned(l.node);
        any = true;
      } else if (l.status == Status::kNotMeasured && na.empty()) {
        na = fmt::format("{}: {}/{} = {}", cap_.origin, section_path, l.path, l.node->value);
      }
    }
    if (any) {
      out = sum;
    } else {
      (*nm_)[field] = na.empty() ? "not in the capture" : na;
    }
  }

 private:
  const Capture& cap_;
  const Node* gpu_;
  std::map<std::string, std::string>* nm_;
};

struct ClockBit {
  uint64_t bit;
  std::string_view xml;   // suffix after clocks_{throttle,event}_reason_
  std::string_view text;  // key in "Clocks Event Reasons" / "Clocks Throttle Reasons"
};

constexpr ClockBit kClockBits[] = {
    {kClockEventGpuIdle, "gpu_idle", "Idle"},
    {kClockEventApplicationsClocks, "applications_clocks_setting", "Applications Clocks Setting"},
    {kClockEventSwPowerCap, "sw_power_cap", "SW Power Cap"},
    {kClockEventHwSlowdown, "hw_slowdown", "HW Slowdown"},
    {kClockEventSyncBoost, "sync_boost", "Sync Boost"},
    {kClockEventSwThermal, "sw_thermal_slowdown", "SW Thermal Slowdown"},
    {kClockEventHwThermal, "hw_thermal_slowdown", "HW Slowdown/HW Thermal Slowdown"},
    {kClockEventHwPowerBrake, "hw_power_brake_slowdown", "HW Slowdown/HW Power Brake Slowdown"},
    {kClockEventDisplayClock, "display_clocks_setting", "Display Clock Setting"},
};

void FillClockEvents(const Capture& cap, const Node* gpu, GpuSnapshot& g) {
  const bool xml = cap.origin == "nvidia-smi -q -x";
  const Node* sec = nullptr;
  std::string prefix;
  std::string sec_name;
  for (auto [name, pre] : {std::pair<std::string_view, std::string_view>{
                               "clocks_event_reasons", "clocks_event_reason_"},
                           {"clocks_throttle_reasons", "clocks_throttle_reason_"},
                           {"Clocks Event Reasons", ""},
                           {"Clocks Throttle Reasons", ""}}) {
    if ((sec = ChildOnce(cap, gpu, name)) != nullptr) {
      prefix = std::string(pre);
      sec_name = std::string(name);
      break;
    }
  }
  if (sec == nullptr) {
    g.not_measured["clock_event_reasons"] = "not in the capture";
    return;
  }
  if (sec->children.empty() && IsNotMeasured(sec->value)) {
    g.not_measured["clock_event_reasons"] =
        fmt::format("{}: {} = {}", cap.origin, sec_name, sec->value);
    return;
  }
  Filler f(cap, gpu, &g.not_measured);
  uint64_t mask = 0;
  bool any = false;
  for (const ClockBit& b : kClockBits) {
    const std::string key = xml ? prefix + std::string(b.xml) : std::string(b.text);
    Lookup l = Find(cap, sec, key);
    if (l.status != Status::kValue) continue;
    any = true;
    if (f.Flag(l.node)) mask |= b.bit;
  }
  if (any) {
    g.clock_event_reasons = mask;
  } else {
    g.not_measured["clock_event_reasons"] =
        fmt::format("{}: {} has no readable reason", cap.origin, sec_name);
  }
}

void FillEcc(const Capture& cap, const Node* gpu, GpuSnapshot& g) {
  Filler f(cap, gpu, &g.not_measured);
  // XML: ecc_errors/{volatile,aggregate}; text: ECC Errors/{Volatile,Aggregate}.
  const Node* errs = ChildOnce(cap, gpu, "ecc_errors");
  std::string errs_name = "ecc_errors";
  if (errs == nullptr) {
    errs = ChildOnce(cap, gpu, "ECC Errors");
    errs_name = "ECC Errors";
  }
  struct Part {
    std::optional<uint64_t>* corrected;
    std::optional<uint64_t>* uncorrected;
    std::string_view xml;
    std::string_view text;
    std::string_view what;
  };
  const Part parts[] = {
      {&g.ecc_volatile_corrected, &g.ecc_volatile_uncorrected, "volatile", "Volatile",
       "volatile"},
      {&g.ecc_aggregate_corrected, &g.ecc_aggregate_uncorrected, "aggregate", "Aggregate",
       "aggregate"},
  };
  for (const Part& p : parts) {
    const std::string fc = fmt::format("ecc_{}_corrected", p.what);
    const std::string fu = fmt::format("ecc_{}_uncorrected", p.what);
    if (errs == nullptr) {
      g.not_measured[fc] = g.not_measured[fu] = "not in the capture";
      continue;
    }
    if (errs->children.empty() && IsNotMeasured(errs->value)) {
      g.not_measured[fc] = g.not_measured[fu] =
          fmt::format("{}: {} = {}", cap.origin, errs_name, errs->value);
      continue;
    }
    const Node* sec = ChildOnce(cap, errs, p.xml);
    std::string sec_path = errs_name + "/" + std::string(p.xml);
    if (sec == nullptr) {
      sec = ChildOnce(cap, errs, p.text);
      sec_path = errs_name + "/" + std::string(p.text);
    }
    if (sec != nullptr && sec->Child("single_bit") != nullptr) {
      // Pre-Ampere layout: single_bit/total and double_bit/total.
      f.EccSum(*p.corrected, fc, sec, sec_path, {"single_bit/total"});
      f.EccSum(*p.uncorrected, fu, sec, sec_path, {"double_bit/total"});
    } else if (sec != nullptr && sec->Child("Single Bit") != nullptr) {
      f.EccSum(*p.corrected, fc, sec, sec_path, {"Single Bit/Total"});
      f.EccSum(*p.uncorrected, fu, sec, sec_path, {"Double Bit/Total"});
    } else {
      // Ampere and later: SRAM + DRAM; from about driver 550 the SRAM uncorrectable count is
      // split into parity and SEC-DED (the sum of the two is the old single count).
      f.EccSum(*p.corrected, fc, sec, sec_path,
               {"sram_correctable", "dram_correctable", "SRAM Correctable", "DRAM Correctable"});
      f.EccSum(*p.uncorrected, fu, sec, sec_path,
               {"sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded",
                "dram_uncorrectable", "SRAM Uncorrectable", "SRAM Uncorrectable Parity",
                "SRAM Uncorrectable SEC-DED", "DRAM Uncorrectable"});
    }
  }
}

void FillGpu(const Capture& cap, const Node* gpu, GpuSnapshot& g) {
  constexpr std::string_view kPcieGen = "a PCIe generation";
  constexpr std::string_view kPcieWidth = "a PCIe link width";
  constexpr std::string_view kCelsius = "degrees C";
  constexpr std::string_view kMhz = "MHz";
  constexpr std::string_view kPercent = "a percentage";
  // The units nvidia-smi writes for each (docs/nvidia-smi-capture.md, "Units").
  const std::initializer_list<std::string_view> kNoUnit = {""};
  const std::initializer_list<std::string_view> kLanes = {"x"};
  const std::initializer_list<std::string_view> kDegrees = {"C"};
  const std::initializer_list<std::string_view> kMhzUnit = {"MHz"};
  const std::initializer_list<std::string_view> kPercentUnit = {"%"};
  Filler f(cap, gpu, &g.not_measured);
  f.Str(g.name, "name", {"product_name", "Product Name"});
  f.Str(g.uuid, "uuid", {"uuid", "GPU UUID"});
  f.Str(g.serial, "serial", {"serial", "Serial Number"});
  // Driver 510 has no <board_part_number>; its <gpu_part_number> holds the board number
  // ("692-..."). From 535 both exist and gpu_part_number is the chip's ("2684-300-A1"), so it
  // stands in only when board_part_number is missing, not when it is N/A.
  if (FindAny(cap, gpu, {"board_part_number", "Board Part Number"}).status != Status::kMissing) {
    f.Str(g.board_part_number, "board_part_number", {"board_part_number", "Board Part Number"});
  } else {
    f.Str(g.board_part_number, "board_part_number", {"gpu_part_number", "GPU Part Number"});
  }
  f.Str(g.vbios, "vbios", {"vbios_version", "VBIOS Version"});
  f.Str(g.pci_bus_id, "pci_bus_id", {"pci/pci_bus_id", "PCI/Bus Id"});
  if (const Node* n = f.Get("pci_device_id", {"pci/pci_device_id", "PCI/Device Id"})) {
    g.pci_device_id = f.Hex32(n);
  }
  if (const Node* n =
          f.Get("pci_subsystem_id", {"pci/pci_sub_system_id", "PCI/Sub System Id"})) {
    g.pci_subsystem_id = f.Hex32(n);
  }
  f.Str(g.compute_capability, "compute_capability",
        {"compute_cap", "cuda_compute_capability", "Compute Capability", "CUDA Compute Capability"});

  if (const Node* n = f.Get("memory_total", {"fb_memory_usage/total", "FB Memory Usage/Total"})) {
    g.memory_total = f.Bytes(n);
  }
  if (const Node* n =
          f.Get("memory_reserved", {"fb_memory_usage/reserved", "FB Memory Usage/Reserved"})) {
    g.memory_reserved = f.Bytes(n);
  }
  if (const Node* n = f.Get("memory_used", {"fb_memory_usage/used", "FB Memory Usage/Used"})) {
    g.memory_used = f.Bytes(n);
  }

  constexpr std::string_view kGen = "pci/pci_gpu_link_info/pcie_gen/";
  constexpr std::string_view kTGen = "PCI/GPU Link Info/PCIe Generation/";
  const auto gen = [&](std::string_view a, std::string_view b) {
    return std::string(a) + std::string(b);
  };
  const std::string x_cur = gen(kGen, "current_link_gen"), t_cur = gen(kTGen, "Current");
  const std::string x_max = gen(kGen, "max_link_gen"), t_max = gen(kTGen, "Max");
  const std::string x_dmax1 = gen(kGen, "device_max_link_gen"),
                    x_dmax2 = gen(kGen, "max_device_link_gen"), t_dmax = gen(kTGen, "Device Max");
  const std::string x_hmax1 = gen(kGen, "host_max_link_gen"),
                    x_hmax2 = gen(kGen, "max_host_link_gen"), t_hmax = gen(kTGen, "Host Max");
  f.IntField(g.pcie_gen_current, "pcie_gen_current", {x_cur, t_cur}, kPcieGen, kNoUnit, 1, 6);
  f.IntField(g.pcie_gen_max, "pcie_gen_max", {x_max, t_max}, kPcieGen, kNoUnit, 1, 6);
  f.IntField(g.pcie_gen_gpu_max, "pcie_gen_gpu_max", {x_dmax1, x_dmax2, t_dmax}, kPcieGen, kNoUnit, 1, 6);
  f.IntField(g.pcie_gen_host_max, "pcie_gen_host_max", {x_hmax1, x_hmax2, t_hmax}, kPcieGen, kNoUnit, 1, 6);
  f.IntField(g.pcie_width_current, "pcie_width_current",
             {"pci/pci_gpu_link_info/link_widths/current_link_width",
              "PCI/GPU Link Info/Link Width/Current"},
             kPcieWidth, kLanes, 1, 32);
  f.IntField(g.pcie_width_max, "pcie_width_max",
             {"pci/pci_gpu_link_info/link_widths/max_link_width",
              "PCI/GPU Link Info/Link Width/Max"},
             kPcieWidth, kLanes, 1, 32);
  f.UField(g.pcie_replays, "pcie_replays", {"pci/replay_counter", "PCI/Replays Since Reset"});

  g.not_measured["nvlink_links"] = "not in the capture";
  g.not_measured["nvlink_up"] = "not in the capture";

  f.FlagField(g.mig_enabled, "mig_enabled", {"mig_mode/current_mig", "MIG Mode/Current"});
  f.FlagField(g.mig_pending, "mig_pending", {"mig_mode/pending_mig", "MIG Mode/Pending"});
  f.FlagField(g.persistence_mode, "persistence_mode", {"persistence_mode", "Persistence Mode"});

  f.Watts(g.power_draw, "power_draw",
          {"power_readings/power_draw", "gpu_power_readings/power_draw",
           "gpu_power_readings/instant_power_draw", "gpu_power_readings/average_power_draw",
           "Power Readings/Power Draw", "GPU Power Readings/Power Draw",
           "GPU Power Readings/Instantaneous Power Draw",
           "GPU Power Readings/Average Power Draw"});
  f.Watts(g.power_limit, "power_limit",
          {"power_readings/enforced_power_limit", "gpu_power_readings/current_power_limit",
           "gpu_power_readings/enforced_power_limit", "power_readings/power_limit",
           "Power Readings/Enforced Power Limit", "GPU Power Readings/Current Power Limit",
           "GPU Power Readings/Enforced Power Limit", "Power Readings/Power Limit"});
  f.Watts(g.power_default_limit, "power_default_limit",
          {"power_readings/default_power_limit", "gpu_power_readings/default_power_limit",
           "Power Readings/Default Power Limit", "GPU Power Readings/Default Power Limit"});
  f.Watts(g.power_max_limit, "power_max_limit",
          {"power_readings/max_power_limit", "gpu_power_readings/max_power_limit",
           "Power Readings/Max Power Limit", "GPU Power Readings/Max Power Limit"});
  g.not_measured["energy_mj"] = "not in the capture";

  f.FlagField(g.ecc_enabled, "ecc_enabled", {"ecc_mode/current_ecc", "ECC Mode/Current"});
  f.FlagField(g.ecc_pending, "ecc_pending", {"ecc_mode/pending_ecc", "ECC Mode/Pending"});
  FillEcc(cap, gpu, g);

  f.UField(g.retired_pages_sbe, "retired_pages_sbe",
           {"retired_pages/multiple_single_bit_retirement/retired_count",
            "Retired Pages/Single Bit ECC"});
  f.UField(g.retired_pages_dbe, "retired_pages_dbe",
           {"retired_pages/double_bit_retirement/retired_count", "Retired Pages/Double Bit ECC"});
  f.FlagField(g.retired_pages_pending, "retired_pages_pending",
              {"retired_pages/pending_retirement", "retired_pages/pending_blacklist",
               "Retired Pages/Pending Page Blacklist", "Retired Pages/Pending Page Retirement"});
  f.UField(g.remapped_rows_correctable, "remapped_rows_correctable",
           {"remapped_rows/remapped_row_corr", "Remapped Rows/Correctable Error"});
  f.UField(g.remapped_rows_uncorrectable, "remapped_rows_uncorrectable",
           {"remapped_rows/remapped_row_unc", "Remapped Rows/Uncorrectable Error"});
  f.FlagField(g.remapped_rows_pending, "remapped_rows_pending",
              {"remapped_rows/remapped_row_pending", "Remapped Rows/Pending"});
  f.FlagField(g.remapped_rows_failure, "remapped_rows_failure",
              {"remapped_rows/remapped_row_failure", "Remapped Rows/Remapping Failure Occurred"});

  f.IntField(g.temperature_c, "temperature_c",
             {"temperature/gpu_temp", "Temperature/GPU Current Temp"}, kCelsius, kDegrees, -100, 300);
  f.IntField(g.temperature_slowdown_c, "temperature_slowdown_c",
             {"temperature/gpu_temp_slow_threshold", "Temperature/GPU Slowdown Temp"}, kCelsius, kDegrees, -100,
             300);
  f.IntField(g.sm_clock_mhz, "sm_clock_mhz", {"clocks/sm_clock", "Clocks/SM"}, kMhz, kMhzUnit, 0,
             100000);
  f.IntField(g.sm_clock_max_mhz, "sm_clock_max_mhz", {"max_clocks/sm_clock", "Max Clocks/SM"},
             kMhz, kMhzUnit, 0, 100000);
  f.IntField(g.mem_clock_mhz, "mem_clock_mhz", {"clocks/mem_clock", "Clocks/Memory"}, kMhz, kMhzUnit, 0,
             100000);
  FillClockEvents(cap, gpu, g);
  f.IntField(g.utilization_gpu, "utilization_gpu", {"utilization/gpu_util", "Utilization/GPU"},
             kPercent, kPercentUnit, 0, 100);
  f.IntField(g.utilization_memory, "utilization_memory",
             {"utilization/memory_util", "Utilization/Memory"}, kPercent, kPercentUnit, 0, 100);

  f.IntField(g.numa_node, "numa_node", {"numa_node", "NUMA Node", "GPU NUMA ID"},
             "a NUMA node id (-1: none)", kNoUnit, -1, 1023);
  f.Str(g.cpu_affinity, "cpu_affinity", {"cpu_affinity", "CPU Affinity"});
}

SystemSnapshot ToSnapshot(const Capture& cap) {
  SystemSnapshot s;
  Filler f(cap, &cap.root, &s.not_measured);
  f.Str(s.driver_version, "driver_version", {"driver_version", "Driver Version"});
  // Driver 610 appends a note: "610.57.04 [Deprecated; will be removed in CUDA 14.0. ...]".
  if (s.driver_version && !s.driver_version->empty() && s.driver_version->back() == ']') {
    if (const size_t open = s.driver_version->find(" ["); open != std::string::npos && open > 0) {
      s.driver_version = Trim(std::string_view(*s.driver_version).substr(0, open));
    }
  }
  f.Str(s.cuda_driver_version, "cuda_driver_version", {"cuda_version", "CUDA Version"});
  if (const Node* n = FindAny(cap, &cap.root, {"hostname", "Hostname", "Host Name"}).node;
      n != nullptr && !IsNotMeasured(n->value)) {
    s.hostname = n->value;
  }
  s.not_measured["nvml_version"] = "not in the capture";
  int index = 0;
  for (const Node* gpu : cap.gpus) {
    GpuSnapshot g;
    g.index = index++;
    FillGpu(cap, gpu, g);
    s.gpus.push_back(std::move(g));
  }
  return s;
}

// Line numbers of byte offsets in one text: the offsets of its line breaks, found once, then a
// binary search per node (counting from the start for each node was quadratic in the size).
class LineIndex {
 public:
  explicit LineIndex(const std::string& text) {
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) {
      breaks_.push_back(at);
    }
  }
  // Line (1-based) of byte `offset`; 0 when unknown (a negative offset).
  int LineOf(ptrdiff_t offset) const {
    if (offset < 0) return 0;
    const auto before = std::lower_bound(breaks_.begin(), breaks_.end(),
                                         static_cast<size_t>(offset)) -
                        breaks_.begin();
    return 1 + static_cast<int>(before);
  }

 private:
  std::vector<size_t> breaks_;
};

// A capture's names, serials and versions go into check reports and recordings (JSON), which
// cannot hold bytes that are not UTF-8: such a capture is refused here, naming the line, rather
// than failing when the report is written. nvidia-smi writes UTF-8 (its XML declares no other
// encoding).
void RequireUtf8(const std::string& text, const std::string& file, const char* origin, const char* field) {
  if (const auto at = FirstNonUtf8(text)) {
    throw InputError(fmt::format("{}: not UTF-8 text (byte 0x{:02X} at offset {})", origin,
                                 static_cast<unsigned char>(text[*at]), *at),
                     file, LineIndex(text).LineOf(static_cast<ptrdiff_t>(*at)), field);
  }
}

// A GPU index is 0-65,535 (snapshot.h): the 65,537th GPU section is refused at its line.
void AddGpu(Capture& cap, const Node* gpu) {
  if (cap.gpus.size() >= static_cast<size_t>(kMaxAttachedGpus)) {
    throw InputError(fmt::format("{}: more than {} GPUs listed (GPU indices are 0-{})", cap.origin,
                                 kMaxAttachedGpus, kMaxAttachedGpus - 1),
                     cap.file, gpu->line, gpu->name);
  }
  cap.gpus.push_back(gpu);
}

// Copies the element tree below `log` into the capture, breadth by breadth with an explicit
// list of pending elements, never recursing: the stack use does not depend on the depth.
void CopyXml(const pugi::xml_node& log, Capture& cap, const LineIndex& lines) {
  std::vector<std::pair<pugi::xml_node, Node*>> pending{{log, &cap.root}};
  while (!pending.empty()) {
    const auto [from, to] = pending.back();
    pending.pop_back();
    for (pugi::xml_node c = from.first_child(); c; c = c.next_sibling()) {
      if (c.type() != pugi::node_element) continue;
      Node& n = cap.Add(to, lines.LineOf(c.offset_debug()));
      n.name = c.name();
      n.value = Trim(c.child_value());
      n.is_gpu = to == &cap.root && n.name == "gpu";
      // The root's children come first (the root is the first element taken), so the 65,537th
      // <gpu> is refused before any GPU's elements are copied.
      if (n.is_gpu) AddGpu(cap, &n);
      if (c.first_child()) pending.emplace_back(c, &n);
    }
  }
}

// `attached_gpus` / "Attached GPUs" says how many GPUs the machine has. A capture that lists
// none of them, or more than it has, is not what nvidia-smi writes (fewer is: `nvidia-smi -q
// -i 0` lists one of 8). A capture listing no GPU at all has nothing to check (nvidia-smi on a
// machine without one prints "No devices were found" instead of a log).
void CheckAttached(const Capture& cap) {
  const Lookup l = FindAny(cap, &cap.root, {"attached_gpus", "Attached GPUs"});
  if (l.status != Status::kValue) {
    if (cap.gpus.empty()) {
      throw InputError(fmt::format("{}: the capture lists no GPU: nothing to check", cap.origin),
                       cap.file, 1,
                       cap.origin == "nvidia-smi -q -x" ? "attached_gpus" : "Attached GPUs");
    }
    return;
  }
  std::map<std::string, std::string> unused;
  const Filler f(cap, &cap.root, &unused);
  const int attached = f.Int(l.node, "a GPU count", {""}, 0, kMaxAttachedGpus);
  const size_t listed = cap.gpus.size();
  if (attached > 0 && listed == 0) {
    throw InputError(fmt::format("{}: the capture says {} GPU(s) are attached but lists none",
                                 cap.origin, attached),
                     cap.file, l.node->line, l.path);
  }
  if (listed == 0) {
    throw InputError(fmt::format("{}: the capture lists no GPU ({} attached): nothing to check",
                                 cap.origin, attached),
                     cap.file, l.node->line, l.path);
  }
  if (listed > static_cast<size_t>(attached)) {
    throw InputError(fmt::format("{}: the capture lists {} GPUs but says {} are attached",
                                 cap.origin, listed, attached),
                     cap.file, l.node->line, l.path);
  }
}

// Real nvidia-smi lists each GPU once: a PCI bus id or a UUID seen twice is a section pasted
// again (8 copies of one GPU would otherwise pass as 8 GPUs). The error is at the second one.
void CheckUnique(const Capture& cap) {
  struct Id {
    std::initializer_list<std::string_view> paths;
    std::string_view what;
  };
  const Id ids[] = {{{"pci/pci_bus_id", "PCI/Bus Id"}, "PCI bus id"}, {{"uuid", "GPU UUID"}, "UUID"}};
  for (const Id& id : ids) {
    std::unordered_map<std::string, const Node*> seen;
    seen.reserve(cap.gpus.size());
    for (const Node* gpu : cap.gpus) {
      const Lookup l = FindAny(cap, gpu, id.paths);
      if (l.status != Status::kValue) continue;
      const auto [it, added] = seen.try_emplace(Lower(l.node->value), l.node);
      if (added) continue;
      throw InputError(fmt::format("{}: {} {} is listed twice (first at line {}); nvidia-smi lists "
                                   "each GPU once",
                                   cap.origin, id.what, l.node->value, it->second->line),
                       cap.file, l.node->line, l.path);
    }
  }
}

}  // namespace

SystemSnapshot ParseNvidiaSmiXml(const std::string& text, const std::string& file) {
  RequireUtf8(text, file, "nvidia-smi -q -x", "nvidia_smi_log");
  pugi::xml_document doc;
  const pugi::xml_parse_result res =
      doc.load_buffer(text.data(), text.size(), pugi::parse_default | pugi::parse_doctype);
  if (!res) {
    throw InputError(fmt::format("nvidia-smi -q -x: malformed XML: {}", res.description()), file,
                     LineIndex(text).LineOf(res.offset), "nvidia_smi_log");
  }
  const pugi::xml_node log = doc.child("nvidia_smi_log");
  if (!log) {
    throw InputError("nvidia-smi -q -x: no <nvidia_smi_log> element", file,
                     LineIndex(text).LineOf(doc.document_element().offset_debug()),
                     "nvidia_smi_log");
  }
  Capture cap;
  cap.file = file;
  cap.origin = "nvidia-smi -q -x";
  cap.root.name = "nvidia_smi_log";
  CopyXml(log, cap, LineIndex(text));
  cap.Index();
  CheckAttached(cap);
  CheckUnique(cap);
  return ToSnapshot(cap);
}

SystemSnapshot ParseNvidiaSmiQueryText(const std::string& text, const std::string& file) {
  RequireUtf8(text, file, "nvidia-smi -q", "");
  Capture cap;
  cap.file = file;
  cap.origin = "nvidia-smi -q";
  cap.root.name = "nvidia-smi -q";
  // Stack of (indent, node): a line belongs under the nearest earlier line with less indent.
  std::vector<std::pair<int, Node*>> stack{{-1, &cap.root}};
  // A file holding more than the -q output (e.g. an nvidia_gpu_exporter capture with one
  // "####"-ruled section per command): read from the first "==...NVSMI LOG...==" banner up to
  // the next "####" rule or banner. Line numbers stay those of the file.
  const bool has_banner = text.find("NVSMI LOG") != std::string::npos;
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  bool seen_log = false;
  while (std::getline(in, raw)) {
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string t = Trim(raw);
    if (t.empty()) continue;
    if (t.rfind("====", 0) == 0 && t.find("NVSMI LOG") != std::string::npos) {
      if (seen_log) break;
      seen_log = true;
      continue;
    }
    if (has_banner && !seen_log) continue;
    if (seen_log && t.rfind("####", 0) == 0) break;
    int indent = 0;
    while (static_cast<size_t>(indent) < raw.size() &&
           (raw[static_cast<size_t>(indent)] == ' ' || raw[static_cast<size_t>(indent)] == '\t')) {
      ++indent;
    }
    while (stack.back().first >= indent) stack.pop_back();
    Node* parent = stack.back().second;
    Node* raw_node = &cap.Add(parent, line_no);
    // "Key<spaces>: Value" (the key never holds " : "; a value may hold ':').
    const size_t colon = t.find(" :");
    if (colon != std::string::npos) {
      raw_node->name = Trim(std::string_view(t).substr(0, colon));
      raw_node->value = Trim(std::string_view(t).substr(colon + 2));
    } else {
      raw_node->name = t;
    }
    stack.emplace_back(indent, raw_node);
    if (parent == &cap.root && indent == 0 && raw_node->value.empty() &&
        raw_node->name.rfind("GPU ", 0) == 0) {
      raw_node->is_gpu = true;
      AddGpu(cap, raw_node);
    }
  }
  if (!seen_log && cap.gpus.empty()) {
    throw InputError("nvidia-smi -q: not an nvidia-smi -q capture (no NVSMI LOG, no GPU section)",
                     file, 1, "");
  }
  cap.Index();
  CheckAttached(cap);
  CheckUnique(cap);
  return ToSnapshot(cap);
}

namespace {

// A capture over the limit: `size` when the file says it (a regular file), else none (a pipe or
// a device, whose reading stopped at the limit).
[[noreturn]] void TooLarge(const std::string& path, std::uint64_t max_bytes, std::optional<std::uintmax_t> size) {
  throw InputError(fmt::format("the nvidia-smi capture is {}, more than the {} bytes ({} MiB) a capture may have (a "
                               "real `nvidia-smi -q -x` is about 18 kB per GPU)",
                               size ? fmt::format("{} bytes", *size) : std::string("not done after that many"),
                               max_bytes, max_bytes >> 20),
                   path, 0, "");
}

// The file's text, at most `max_bytes` of it: a regular file's size is known before reading;
// anything else (a pipe, /dev/zero) is read in pieces until it ends or passes the limit.
std::string ReadCapture(const std::string& path, std::uint64_t max_bytes) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_regular_file(st)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > max_bytes) TooLarge(path, max_bytes, size);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read the nvidia-smi capture", path, 0, "");
  std::string text;
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  while (text.size() < max_bytes) {
    const std::size_t at = text.size();
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, max_bytes - at));
    if (at + want > text.capacity()) {
      // Doubling up to the limit exactly, so /dev/zero holds 256 MiB at the end, not 512.
      text.reserve(static_cast<std::size_t>(
          std::min<std::uint64_t>(max_bytes, std::max<std::uint64_t>(2 * text.capacity(), at + want))));
    }
    text.resize(at + want);
    in.read(text.data() + at, static_cast<std::streamsize>(want));
    text.resize(at + static_cast<std::size_t>(in.gcount()));
    if (in.bad()) throw InputError("cannot read the nvidia-smi capture", path, 0, "");
    if (!in) return text;  // the end of the file
  }
  // At the limit: one more byte makes it too large.
  if (in.peek() != std::ifstream::traits_type::eof()) TooLarge(path, max_bytes, std::nullopt);
  return text;
}

}  // namespace

SystemSnapshot LoadNvidiaSmiCapture(const std::string& path, std::uint64_t max_bytes) {
  const std::string text = ReadCapture(path, max_bytes);
  size_t b = 0;
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF) {
    b = 3;
  }
  while (b < text.size() && std::isspace(static_cast<unsigned char>(text[b])) != 0) ++b;
  const std::string_view head = std::string_view(text).substr(b);
  const bool xml = head.rfind("<?xml", 0) == 0 || head.rfind("<!DOCTYPE nvidia_smi_log", 0) == 0 ||
                   head.rfind("<nvidia_smi_log", 0) == 0;
  return xml ? ParseNvidiaSmiXml(text, path) : ParseNvidiaSmiQueryText(text, path);
}

}  // namespace gpuplan
