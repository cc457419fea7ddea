// Markdown rendering of `gpuplan check` reports, comparisons and merges, and the plain-text
// cells the HTML form shares (check_cells).
#include "check/render/check_markdown.h"

#include <fmt/format.h>

#include <array>
#include <map>
#include <string_view>
#include <tuple>

namespace gpuplan {
namespace check_cells {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string OnOff(const std::optional<bool>& current, const std::optional<bool>& pending) {
  if (!current) {
    return kNoValue;
  }
  std::string s = *current ? "on" : "off";
  if (pending && *pending != *current) {
    s += *pending ? " (pending on)" : " (pending off)";
  }
  return s;
}

std::string YesNo(const std::optional<bool>& v) {
  if (!v) {
    return "not stated";
  }
  return *v ? "yes" : "no";
}

std::string GiB(uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / kGiB); }

// "4/5", "-/5": a current and a maximum, either possibly missing; "-" when both are.
std::string Pair(const std::optional<int>& cur, const std::optional<int>& max, const char* prefix) {
  if (!cur && !max) {
    return kNoValue;
  }
  auto one = [&](const std::optional<int>& v) {
    return OptionalText(v, [&](int x) { return fmt::format("{}{}", prefix, x); });
  };
  return one(cur) + "/" + one(max);
}

// "3350 GB/s", "12.5 CNY" (a money figure to 4 significant digits, as the comparison's other
// figures), "-" when there is none.
std::string OptUnit(const std::optional<double>& v, const std::string& unit) {
  return OptionalText(v, [&](double x) { return WithUnit(x, unit); });
}

}  // namespace

std::string Counts(const std::vector<CheckResult>& tests) {
  constexpr std::array<CheckStatus, 5> kOrder = {CheckStatus::kPass, CheckStatus::kWarn, CheckStatus::kFail,
                                                 CheckStatus::kError, CheckStatus::kSkip};
  std::array<int, 5> n{};
  for (const auto& t : tests) {
    for (std::size_t i = 0; i < kOrder.size(); ++i) {
      n[i] += t.status == kOrder[i];
    }
  }
  std::string s;
  for (std::size_t i = 0; i < kOrder.size(); ++i) {
    if (n[i] > 0) {
      s += fmt::format("{}{} {}", s.empty() ? "" : ", ", n[i], ToString(kOrder[i]));
    }
  }
  return s.empty() ? "no results" : s;
}

std::vector<Fact> Summary(const CheckReport& r) {
  std::vector<Fact> f;
  auto add = [&](const char* label, const std::string& value) {
    if (!value.empty()) {
      f.emplace_back(label, value);
    }
  };
  add("mode", r.mode);
  add("source", r.source);
  add("ordered", r.expect);
  add("judged against", r.expected_card);
  add("offer", r.offer_id);
  add("started", r.started);
  add("finished", r.finished.empty() ? "(running)" : r.finished);
  add("tool", r.tool_version.empty() ? "" : "gpuplan " + r.tool_version);
  add("results", fmt::format("{} ({})", r.tests.size(), Counts(r.tests)));
  if (r.environment_problem) {
    add("environment", "the driver or a device could not be read (exit code 3)");
  }
  return f;
}

std::vector<Fact> Host(const HostInfo& h) {
  return {{"hostname", OptionalText(h.hostname)},
          {"OS", OptionalText(h.os)},
          {"kernel", OptionalText(h.kernel)},
          {"CPU", OptionalText(h.cpu_model)},
          {"CPU sockets", OptionalText(h.cpu_sockets)},
          {"CPU cores", OptionalText(h.cpu_cores)},
          {"CPU threads", OptionalText(h.cpu_threads)},
          {"memory", OptionalText(h.memory_bytes, GiB)},
          {"virtual machine", h.virtual_machine ? (*h.virtual_machine ? "yes" : "no") : kNoValue}};
}

const std::vector<InventoryColumn>& InventoryColumns() {
  using N = const SystemSnapshot&;
  using G = const GpuSnapshot&;
  static const std::vector<InventoryColumn> columns = {
      {"GPU", [](N, G g) { return std::to_string(g.index); }},
      {"name", [](N, G g) { return OptionalText(g.name); }},
      {"serial", [](N, G g) { return OptionalText(g.serial); }},
      {"PCI bus", [](N, G g) { return OptionalText(g.pci_bus_id); }},
      {"device id",
       [](N, G g) {
         if (!g.pci_device_id) {
           return std::string(kNoValue);
         }
         const uint32_t vendor = *g.pci_device_id & 0xffffu;
         const uint32_t device = *g.pci_device_id >> 16;
         // NVIDIA's vendor id (0x10de) goes without saying; another one is shown as vendor:device.
         return vendor == 0x10de ? fmt::format("0x{:04x}", device) : fmt::format("{:04x}:{:04x}", vendor, device);
       }},
      {"memory", [](N, G g) { return OptionalText(g.memory_total, GiB); }},
      {"PCIe gen", [](N, G g) { return Pair(g.pcie_gen_current, g.pcie_gen_max, ""); }},
      {"PCIe width", [](N, G g) { return Pair(g.pcie_width_current, g.pcie_width_max, "x"); }},
      {"NVLink up", [](N, G g) { return Pair(g.nvlink_up, g.nvlink_links, ""); }},
      {"power limit", [](N, G g) { return OptUnit(g.power_limit, "W"); }},
      {"driver", [](N n, G) { return OptionalText(n.driver_version); }},
      {"ECC", [](N, G g) { return OnOff(g.ecc_enabled, g.ecc_pending); }},
      {"MIG", [](N, G g) { return OnOff(g.mig_enabled, g.mig_pending); }},
      {"temp", [](N, G g) { return OptionalText(g.temperature_c, [](auto c) { return fmt::format("{} C", c); }); }},
      {"NUMA (CPUs)",
       [](N, G g) {
         if (!g.numa_node && !g.cpu_affinity) {
           return std::string(kNoValue);
         }
         return OptionalText(g.numa_node) +
                (g.cpu_affinity ? " (" + *g.cpu_affinity + ")" : std::string());
       }},
  };
  return columns;
}

std::string NodeName(const SystemSnapshot& node, std::size_t i) {
  return node.hostname && !node.hostname->empty() ? *node.hostname : fmt::format("node {}", i + 1);
}

std::vector<std::string> NotMeasured(const CheckReport& r) {
  constexpr std::size_t kNamed = 8;  // places named on a line; beyond, only counted
  struct Places {
    std::vector<std::string> named;
    std::size_t count = 0;
    const char* noun = "GPUs";
  };
  // (scope order, field, reason) -> places; scope 0 host, 1 node, 2 GPU.
  std::map<std::tuple<int, std::string, std::string>, Places> groups;
  auto add = [&](int scope, const std::string& field, const std::string& reason, std::string place, const char* noun) {
    Places& p = groups[{scope, field, reason}];
    p.noun = noun;
    if (p.named.size() < kNamed) {
      p.named.push_back(std::move(place));
    }
    ++p.count;
  };
  for (const auto& [field, reason] : r.host.not_measured) {
    add(0, "host " + field, reason, "", "");
  }
  const bool several = r.nodes.size() > 1;
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    const SystemSnapshot& n = r.nodes[i];
    const std::string prefix = several ? NodeName(n, i) + " " : "";
    for (const auto& [field, reason] : n.not_measured) {
      add(1, field, reason, several ? NodeName(n, i) : "", "nodes");
    }
    for (const auto& g : n.gpus) {
      for (const auto& [field, reason] : g.not_measured) {
        add(2, field, reason, fmt::format("{}GPU {}", prefix, g.index), "GPUs");
      }
    }
  }
  std::vector<std::string> lines;
  for (const auto& [key, p] : groups) {
    std::string line = std::get<1>(key) + ": " + std::get<2>(key);
    if (p.count > p.named.size()) {
      line += fmt::format(" ({} {})", p.count, p.noun);
    } else if (!p.named.front().empty()) {
      line += " (";
      for (std::size_t i = 0; i < p.named.size(); ++i) {
        line += (i > 0 ? ", " : "") + p.named[i];
      }
      line += ")";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string Event(const GpuEvent& e) {
  const std::string gpu = e.gpu >= 0 ? fmt::format("GPU {}", e.gpu) : "unmatched GPU";
  const std::string what = e.type == kGpuEventXid ? fmt::format("XID {}", e.data)
                                         : fmt::format("event type 0x{:x}, data {}", e.type, e.data);
  return fmt::format("{}: {} at {:.1f} s", gpu, what, e.at_seconds);
}

const std::vector<MachineRow>& MachineRows() {
  using M = const ComparedMachine&;
  using C = const std::string&;
  static const std::vector<MachineRow> rows = {
      {"card", [](M m, C) { return m.card.empty() ? std::string(kNoValue) : m.card; }},
      {"GPUs", [](M m, C) { return std::to_string(m.gpus); }},
      {"report", [](M m, C) { return m.file.empty() ? std::string(kNoValue) : m.file; }},
      {"complete", [](M m, C) { return m.incomplete.empty() ? std::string("yes") : "no: " + m.incomplete; }},
      {"offer", [](M m, C) { return m.offer_id.empty() ? std::string(kNoValue) : m.offer_id; }},
      {"provider",
       [](M m, C) { return m.offer && !m.offer->provider.empty() ? m.offer->provider : std::string(kNoValue); }},
      {"price per hour", [](M m, C cur) { return OptUnit(m.price_per_hour, cur); }},
      {"bf16 measured", [](M m, C) { return OptUnit(m.bf16_tflops, "TFLOP/s"); }},
      {"storage read measured", [](M m, C) { return OptUnit(m.storage_gb_s, "GB/s"); }},
      {"per bf16 PFLOP-hour", [](M m, C cur) { return OptUnit(m.per_bf16_pflop_hour, cur); }},
      {"per storage TB/s-hour", [](M m, C cur) { return OptUnit(m.per_storage_tb_s_hour, cur); }},
      {"rank", [](M m, C) { return m.rank > 0 ? std::to_string(m.rank) : std::string(kNoValue); }},
  };
  return rows;
}

const std::vector<TermRow>& TermRows() {
  using T = const ProviderTerms&;
  static const std::vector<TermRow> rows = {
      {"first response to a fault (SLA)",
       [](T t) { return t.sla_response_minutes ? WithUnit(*t.sla_response_minutes, "min") : "not stated"; }},
      {"failed node replaced within",
       [](T t) { return t.node_replacement_hours ? WithUnit(*t.node_replacement_hours, "h") : "not stated"; }},
      {"resume from checkpoint on a replacement", [](T t) { return YesNo(t.resume_from_checkpoint); }},
      {"private network", [](T t) { return YesNo(t.private_network); }},
      {"disk encryption", [](T t) { return YesNo(t.disk_encryption); }},
      {"data erasure on release", [](T t) { return YesNo(t.data_erasure_on_release); }},
      {"itemised billing", [](T t) { return YesNo(t.billing_transparency); }},
  };
  return rows;
}

std::string Term(const ComparedMachine& m, const TermRow& row) { return m.offer ? row.cell(m.offer->terms) : "no offer"; }

std::string ComparedValue(const ComparedCell& cell, const std::string& unit) {
  std::string s = cell.measured ? WithUnit(*cell.measured, unit) : cell.text.empty() ? kNoValue : cell.text;
  if (cell.failing > 0 && cell.results > 1) {
    s += fmt::format(" ({} of {} failing)", cell.failing, cell.results);
  }
  return s;
}

bool AnyOffer(const ComparisonResult& c) {
  for (const auto& m : c.machines) {
    if (m.offer) {
      return true;
    }
  }
  return false;
}

const std::vector<std::string>& OutlierHeader() {
  static const std::vector<std::string> h = {"test", "node", "GPU", "value", "unit", "median", "modified z", "peers"};
  return h;
}

std::vector<std::string> IncompleteLines(const std::vector<IncompleteReport>& incomplete) {
  std::vector<std::string> lines;
  lines.reserve(incomplete.size());
  for (const auto& i : incomplete) {
    lines.push_back(i.label + " (" + i.file + "): " + i.reason);
  }
  return lines;
}

std::vector<std::string> OutlierCells(const Outlier& o) {
  return {o.test,
          o.node.empty() ? kNoValue : o.node,
          o.gpu >= 0 ? std::to_string(o.gpu) : kNoValue,
          Number(o.value),
          o.unit.empty() ? kNoValue : o.unit,
          Number(o.median),
          Number(o.z),
          std::to_string(o.peers)};
}

}  // namespace check_cells

namespace {

namespace cc = check_cells;

// Model text for Markdown: '\' '|' and '<' escaped with a backslash (a '|' would split a table
// cell, a '<' could open raw HTML), line breaks as <br>, other control characters as spaces.
void Md(std::ostream& out, std::string_view s) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const char* rep = nullptr;
    switch (ch) {
      case '\\': rep = "\\\\"; break;
      case '|': rep = "\\|"; break;
      case '<': rep = "\\<"; break;
      case '\n': rep = "<br>"; break;
      case '\r':
        rep = "<br>";
        if (i + 1 < s.size() && s[i + 1] == '\n') {
          out.write(s.data() + start, static_cast<std::streamsize>(i - start));
          out << rep;
          start = i + 2;
          ++i;
          continue;
        }
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
          rep = " ";
        }
    }
    if (rep != nullptr) {
      out.write(s.data() + start, static_cast<std::streamsize>(i - start));
      out << rep;
      start = i + 1;
    }
  }
  out.write(s.data() + start, static_cast<std::streamsize>(s.size() - start));
}

// "| a | b |" with every cell escaped.
void Row(std::ostream& out, const std::vector<std::string>& cells) {
  out << '|';
  for (const auto& c : cells) {
    out << ' ';
    Md(out, c);
    out << " |";
  }
  out << '\n';
}

void Header(std::ostream& out, const std::vector<std::string>& cells) {
  Row(out, cells);
  out << '|';
  for (std::size_t i = 0; i < cells.size(); ++i) {
    out << " --- |";
  }
  out << '\n';
}

void Bullets(std::ostream& out, const std::vector<std::string>& lines) {
  for (const auto& l : lines) {
    out << "- ";
    Md(out, l);
    out << '\n';
  }
}

bool IsProblem(CheckStatus s, bool warn) {
  return warn ? s == CheckStatus::kWarn : s == CheckStatus::kFail || s == CheckStatus::kError;
}

// Everything of a report below its title: the facts line and the "##" sections.
void ReportBody(const CheckReport& r, std::ostream& out) {
  const bool several = r.nodes.size() > 1;
  bool first = true;
  for (const auto& [label, value] : cc::Summary(r)) {
    out << (first ? "" : " · ") << label << ": ";
    Md(out, value);
    first = false;
  }
  out << "\n\n";

  if (!r.notes.empty()) {
    out << "## Notes\n\n";
    Bullets(out, r.notes);
    out << '\n';
  }

  out << "## Problems\n\n";
  bool any = false;
  for (bool warn : {false, true}) {  // FAIL and ERROR first, then WARN, each in report order
    for (const auto& t : r.tests) {
      if (!IsProblem(t.status, warn)) {
        continue;
      }
      any = true;
      out << "- **" << ToString(t.status) << "** ";
      Md(out, t.name);
      out << " (";
      Md(out, cc::Where(t, several));
      out << "): ";
      Md(out, cc::Problem(t));
      out << '\n';
    }
  }
  out << (any ? "\n" : "None: no result is FAIL, ERROR or WARN.\n\n");

  out << "## Host\n\n";
  Header(out, {"field", "value"});
  for (const auto& [label, value] : cc::Host(r.host)) {
    Row(out, {label, value});
  }
  out << '\n';

  out << "## GPUs\n\n";
  const auto& columns = cc::InventoryColumns();
  std::vector<std::string> cells;
  if (several) {
    cells.emplace_back("node");
  }
  for (const auto& c : columns) {
    cells.emplace_back(c.header);
  }
  std::size_t gpus = 0;
  for (const auto& n : r.nodes) {
    gpus += n.gpus.size();
  }
  if (gpus == 0) {
    out << "No GPU in the inventory.\n\n";
  } else {
    Header(out, cells);
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
      for (const auto& g : r.nodes[i].gpus) {
        cells.clear();
        if (several) {
          cells.push_back(cc::NodeName(r.nodes[i], i));
        }
        for (const auto& c : columns) {
          cells.push_back(c.cell(r.nodes[i], g));
        }
        Row(out, cells);
      }
    }
    out << '\n';
  }
  const auto not_measured = cc::NotMeasured(r);
  if (!not_measured.empty()) {
    out << "Not measured:\n\n";
    Bullets(out, not_measured);
    out << '\n';
  }

  if (!r.events.empty()) {
    out << "## Events\n\n";
    for (const auto& e : r.events) {
      out << "- ";
      Md(out, cc::Event(e));
      out << '\n';
    }
    out << '\n';
  }

  out << "## Results\n\n";
  if (r.tests.empty()) {
    out << "No results.\n";
    return;
  }
  cells = {"status", "test", "GPU"};
  if (several) {
    cells.emplace_back("node");
  }
  for (const char* h : {"measured", "expected", "evidence", "advice"}) {
    cells.emplace_back(h);
  }
  Header(out, cells);
  for (const auto& t : r.tests) {
    const cc::ResultCells c = cc::CellsOf(t);
    cells = {c.status, c.test, c.gpu};
    if (several) {
      cells.push_back(c.node.empty() ? "-" : c.node);
    }
    cells.push_back(c.MeasuredCell());
    cells.push_back(c.ExpectedCell());
    cells.push_back(c.evidence);
    cells.push_back(c.advice);
    Row(out, cells);
  }
}

}  // namespace

void CheckReportToMarkdown(const CheckReport& r, std::ostream& out) {
  out << "# GPU check: " << ToString(r.verdict) << "\n\n";
  ReportBody(r, out);
}

void ComparisonToMarkdown(const ComparisonResult& c, std::ostream& out) {
  out << "# GPU check comparison of " << c.machines.size() << " machines\n\n";

  out << "## Machines\n\n";
  std::vector<std::string> cells = {""};
  for (const auto& m : c.machines) {
    cells.push_back(m.label);
  }
  Header(out, cells);
  cells = {"verdict"};
  for (const auto& m : c.machines) {
    cells.emplace_back(ToString(m.verdict));
  }
  Row(out, cells);
  for (const auto& row : cc::MachineRows()) {
    cells = {row.name};
    for (const auto& m : c.machines) {
      cells.push_back(row.cell(m, c.currency));
    }
    Row(out, cells);
  }
  out << '\n';
  if (!c.rank_basis.empty()) {
    out << "Ranked by ";
    Md(out, c.rank_basis);
    out << " (1 = the least money per measured unit).\n\n";
  }

  if (cc::AnyOffer(c)) {
    out << "## Provider terms\n\n";
    cells = {"term"};
    for (const auto& m : c.machines) {
      cells.push_back(m.label);
    }
    Header(out, cells);
    for (const auto& row : cc::TermRows()) {
      cells = {row.name};
      for (const auto& m : c.machines) {
        cells.push_back(cc::Term(m, row));
      }
      Row(out, cells);
    }
    out << '\n';
  }

  out << "## Tests\n\n";
  if (c.rows.empty()) {
    out << "No results.\n\n";
  } else {
    cells = {"test"};
    for (const auto& m : c.machines) {
      cells.push_back(m.label);
    }
    Header(out, cells);
    for (const auto& row : c.rows) {
      cells = {row.test};
      for (const auto& cell : row.cells) {
        cells.push_back(cell ? std::string(ToString(cell->status)) + " " + cc::ComparedValue(*cell, row.unit)
                             : "not run");
      }
      Row(out, cells);
    }
    out << '\n';
  }

  if (!c.notes.empty()) {
    out << "## Notes\n\n";
    Bullets(out, c.notes);
  }
}

void MergeToMarkdown(const MergeResult& m, std::ostream& out) {
  out << "# GPU check of " << m.nodes << " nodes: " << ToString(m.merged.verdict) << "\n\n";
  if (!m.incomplete.empty()) {
    out << "## Incomplete node reports\n\n";
    out << "The merge is incomplete: these nodes' reports did not finish or hold no result.\n\n";
    Bullets(out, cc::IncompleteLines(m.incomplete));
    out << '\n';
  }
  out << "## Outliers\n\n";
  out << "Outliers: |modified z| > " << cc::Number(m.outlier_z) << " against the median of every node's result";
  out << " (Iglewicz and Hoaglin), " << m.outliers.size() << " found.\n\n";
  if (!m.outliers.empty()) {
    Header(out, cc::OutlierHeader());
    for (const auto& o : m.outliers) {
      Row(out, cc::OutlierCells(o));
    }
    out << '\n';
  }
  out << "## Merged report\n\n";
  ReportBody(m.merged, out);
}

}  // namespace gpuplan
