#include "check/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "check/cells.h"
#include "check/verdict.h"
#include "core/error.h"
#include "core/names.h"

namespace gpuplan {
namespace {

// Tests where a higher number is worse (counts of errors, temperatures, steal); for the rest the
// weakest GPU is the lowest. Before issue 26, health_delta and burn_in_errors were missing: a
// machine whose one GPU raised a new error showed the minimum, "0 · FAIL".
bool LowerIsBetter(const std::string& test) {
  static const std::set<std::string> lower = {"cpu_steal",        "gpu_temperature", "ecc_errors",   "memory_remapping",
                                              "ecc_delta",        "remapped_rows_delta", "xid_events", "health_delta",
                                              "burn_in_errors", "net_rtt", "net_transfer"};
  return lower.count(test) > 0;
}


std::string LabelOf(const NamedReport& r) {
  if (r.report.net && r.report.nodes.empty()) {
    return "link to " + r.report.net->host;  // a link test names the far end, not the laptop it ran on
  }
  for (const auto& n : r.report.nodes) {
    if (n.hostname) {
      return *n.hostname;
    }
  }
  if (r.report.host.hostname) {
    return *r.report.host.hostname;
  }
  return std::filesystem::path(r.file).stem().string();
}

std::string CardOf(const CheckReport& r) {
  if (!r.expected_card.empty()) {
    return r.expected_card;
  }
  for (const auto& n : r.nodes) {
    for (const auto& g : n.gpus) {
      if (g.name) {
        return *g.name;
      }
    }
  }
  return {};
}

int GpuCount(const CheckReport& r) {
  int n = 0;
  for (const auto& node : r.nodes) {
    n += static_cast<int>(node.gpus.size());
  }
  return n;
}

// The sum over GPUs of a test's measured values, when every result of it was measured.
std::optional<double> SumOf(const CheckReport& r, const std::string& test) {
  std::optional<double> sum;
  for (const auto& t : r.tests) {
    if (t.name != test) {
      continue;
    }
    if (!t.measured || t.status == CheckStatus::kSkip || t.status == CheckStatus::kError) {
      return std::nullopt;
    }
    sum = sum.value_or(0) + *t.measured;
  }
  return sum;
}

}  // namespace

std::optional<IncompleteReport> IncompleteOf(const NamedReport& r, const std::string& label) {
  const bool unfinished = r.report.finished.empty();
  const bool empty = r.report.tests.empty();
  if (!unfinished && !empty) {
    return std::nullopt;
  }
  IncompleteReport out;
  out.file = r.file;
  out.label = label;
  out.environment_problem = r.report.environment_problem;
  if (unfinished) {
    out.reason = empty ? "the check did not finish (\"complete\": false, killed or still running) and the report holds "
                         "no result"
                       : fmt::format("the check did not finish (\"complete\": false, killed or still running): {} "
                                     "result{} of the tests that ran before, the rest missing",
                                     r.report.tests.size(), r.report.tests.size() == 1 ? "" : "s");
  } else {
    out.reason = "the report holds no result (an empty test list)";
  }
  if (out.environment_problem) {
    out.reason += "; the report says the driver or a device could not be read";
  }
  return out;
}

int IncompleteExitCode(const std::vector<IncompleteReport>& incomplete) {
  if (incomplete.empty()) {
    return kExitOk;
  }
  const bool env = std::any_of(incomplete.begin(), incomplete.end(),
                               [](const IncompleteReport& i) { return i.environment_problem; });
  return env ? kExitEnvironment : kExitNegative;
}

double Median(std::vector<double> v) {
  if (v.empty()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) {
    return hi;
  }
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2;
}

ComparisonResult CompareReports(const std::vector<NamedReport>& reports, const CompareReportsRequest& req,
                                const GpuCatalog& catalog) {
  if (reports.size() < 2) {
    throw InputError("compare needs at least two reports", "", 0, "reports");
  }
  ComparisonResult out;
  std::optional<OfferSet> offers;
  if (!req.offers.empty()) {
    offers = LoadOffers(req.offers, catalog);
    out.currency = offers->currency;
  }
  // --offer-of FILE=ID for reports that name no offer.
  std::map<std::string, std::string> offer_of;
  for (const auto& kv : req.offer_of) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size()) {
      throw InputError("expected REPORT=OFFER_ID, got '" + kv + "'", "", 0, "--offer-of");
    }
    const std::string file = kv.substr(0, eq);
    if (std::none_of(reports.begin(), reports.end(), [&](const NamedReport& r) { return r.file == file; })) {
      throw InputError("'" + file + "' is not one of the reports compared", "", 0, "--offer-of");
    }
    offer_of[file] = kv.substr(eq + 1);
  }
  if (!offer_of.empty() && !offers) {
    throw InputError("--offer-of needs the offers file (--offers FILE)", "", 0, "--offer-of");
  }

  for (const auto& nr : reports) {
    ComparedMachine m;
    m.file = nr.file;
    m.label = LabelOf(nr);
    m.card = CardOf(nr.report);
    m.gpus = GpuCount(nr.report);
    m.verdict = nr.report.verdict;
    if (auto inc = IncompleteOf(nr, m.label)) {
      m.incomplete = inc->reason;
      m.verdict = Worse(m.verdict, inc->environment_problem ? CheckStatus::kError : CheckStatus::kFail);
      out.notes.push_back(fmt::format("{} ({}): not a complete report: {}; its cells are only what it measured, its "
                                      "verdict is {} and it is not ranked",
                                      inc->label, inc->file, inc->reason, ToString(m.verdict)));
      out.incomplete.push_back(std::move(*inc));
    }
    m.offer_id = offer_of.count(nr.file) ? offer_of[nr.file] : nr.report.offer_id;
    if (offers && !m.offer_id.empty()) {
      const auto it = std::find_if(offers->offers.begin(), offers->offers.end(),
                                   [&](const Offer& o) { return o.id == m.offer_id; });
      if (it == offers->offers.end()) {
        std::vector<std::string> ids;
        for (const auto& o : offers->offers) {
          ids.push_back(o.id);
        }
        std::vector<std::string> close = ClosestNames(m.offer_id, ids);
        throw InputError("no offer '" + m.offer_id + "' (named by " + nr.file + ")" +
                             (close.empty() ? "" : "; did you mean " + JoinOr(close) + "?"),
                         req.offers, 0, offer_of.count(nr.file) ? "--offer-of" : "offer", close);
      }
      m.offer = *it;
      // Per instance-hour: reserved terms over the average month (730 h), hourly modes at the
      // daytime price; fixed monthly fees (storage, bandwidth) spread over the same 730 h.
      const double instance_hour = (IsReserved(it->mode) ? it->ReservedMonthly() / kHoursPerMonth : it->HourlyPrice(12)) +
                                   it->MonthlyFixedFees() / kHoursPerMonth;
      // The machine measured may hold several instances' GPUs (or part of one).
      const double instances = m.gpus > 0 ? static_cast<double>(m.gpus) / it->gpus_per_instance : 1.0;
      m.price_per_hour = instance_hour * instances;
    }
    m.bf16_tflops = SumOf(nr.report, "gemm_bf16");
    m.storage_gb_s = SumOf(nr.report, "storage_seq_read");
    if (m.price_per_hour && m.bf16_tflops && *m.bf16_tflops > 0) {
      m.per_bf16_pflop_hour = *m.price_per_hour / (*m.bf16_tflops / 1000);
    }
    if (m.price_per_hour && m.storage_gb_s && *m.storage_gb_s > 0) {
      m.per_storage_tb_s_hour = *m.price_per_hour / (*m.storage_gb_s / 1000);
    }
    out.machines.push_back(std::move(m));
  }

  // Rows: every test in the order first seen; a cell is the weakest of that report's results.
  std::vector<std::string> order;
  std::map<std::string, std::string> units;
  for (const auto& nr : reports) {
    for (const auto& t : nr.report.tests) {
      if (!units.count(t.name)) {
        order.push_back(t.name);
        units[t.name] = t.unit;
      }
    }
  }
  for (const auto& test : order) {
    ComparedRow row;
    row.test = test;
    row.unit = units[test];
    for (const auto& nr : reports) {
      std::optional<ComparedCell> cell;
      const CheckResult* weakest = nullptr;
      for (const auto& t : nr.report.tests) {
        if (t.name != test) {
          continue;
        }
        if (!cell) {
          cell.emplace();
        }
        ++cell->results;
        cell->failing += t.status == CheckStatus::kFail || t.status == CheckStatus::kError;
        cell->status = cell->results == 1 ? t.status : Worse(cell->status, t.status);
        // The weakest GPU's figure: the worst status first (its figure is why it failed), then
        // the figure in its direction.
        if (weakest == nullptr || StatusRank(t.status) > StatusRank(weakest->status)) {
          weakest = &t;
        } else if (StatusRank(t.status) < StatusRank(weakest->status)) {
          // a better result is never the weakest
        } else if (t.measured && weakest->measured) {
          if (LowerIsBetter(test) ? *t.measured > *weakest->measured : *t.measured < *weakest->measured) {
            weakest = &t;
          }
        } else if (t.measured && !weakest->measured) {
          weakest = &t;
        }
      }
      if (cell && weakest != nullptr) {
        cell->measured = weakest->measured;
        cell->text = weakest->measured_text;
      }
      row.cells.push_back(cell);
    }
    out.rows.push_back(std::move(row));
  }

  // Rank by money per measured unit: bf16 work when every priced machine measured it, else
  // storage throughput; lower is better.
  std::vector<ComparedMachine*> priced;
  for (auto& m : out.machines) {
    if (m.price_per_hour && m.incomplete.empty()) {
      priced.push_back(&m);
    }
  }
  auto rank_by = [&](std::optional<double> ComparedMachine::*field) {
    std::vector<ComparedMachine*> v = priced;
    std::stable_sort(v.begin(), v.end(), [&](auto* a, auto* b) { return *(a->*field) < *(b->*field); });
    for (std::size_t i = 0; i < v.size(); ++i) {
      v[i]->rank = static_cast<int>(i) + 1;
    }
  };
  if (!offers) {
    out.notes.push_back("no offers file: machines are compared by measurement only (--offers FILE adds prices)");
  } else if (priced.size() < 2) {
    out.notes.push_back("fewer than two reports have a known offer (the report's --offer, or --offer-of REPORT=ID): not ranked");
  } else if (std::all_of(priced.begin(), priced.end(), [](auto* m) { return m->per_bf16_pflop_hour.has_value(); })) {
    out.rank_basis = "price per measured bf16 PFLOP-hour";
    rank_by(&ComparedMachine::per_bf16_pflop_hour);
  } else if (std::all_of(priced.begin(), priced.end(), [](auto* m) { return m->per_storage_tb_s_hour.has_value(); })) {
    out.rank_basis = "price per measured storage TB/s-hour";
    rank_by(&ComparedMachine::per_storage_tb_s_hour);
    out.notes.push_back("not every machine measured bf16 GEMM (gemm_bf16, check part 2): ranked by storage throughput");
  } else {
    out.notes.push_back("no measurement common to every priced machine (gemm_bf16 or storage_seq_read): not ranked");
  }
  if (offers) {
    out.notes.push_back(
        "price per hour: reserved terms over the average month (730 h), hourly modes at the daytime price, fixed "
        "monthly fees spread over 730 h, scaled to the GPUs in the report");
  }
  return out;
}

MergeResult MergeReports(const std::vector<NamedReport>& reports, const MergeReportsRequest& req) {
  if (reports.empty()) {
    throw InputError("merge needs at least one report", "", 0, "reports");
  }
  if (!(req.outlier_z > 0)) {
    throw InputError("the outlier threshold must be above 0", "", 0, "--outlier-z");
  }
  MergeResult out;
  out.outlier_z = req.outlier_z;
  out.nodes = static_cast<int>(reports.size());
  CheckReport& m = out.merged;
  m.tool_version = reports.front().report.tool_version;
  m.mode = reports.front().report.mode;
  m.expect = reports.front().report.expect;
  m.expected_card = reports.front().report.expected_card;
  m.source = fmt::format("merge of {} node reports", reports.size());
  m.started = reports.front().report.started;
  std::set<std::string> labels;
  for (const auto& nr : reports) {
    const CheckReport& r = nr.report;
    std::string label = LabelOf(nr);
    if (!labels.insert(label).second) {  // two reports of one host name: tell them apart
      label += " (" + nr.file + ")";
      labels.insert(label);
    }
    if (r.mode != m.mode) {
      m.mode = "mixed";
    }
    if (!r.started.empty() && (m.started.empty() || r.started < m.started)) {
      m.started = r.started;
    }
    if (r.finished > m.finished) {
      m.finished = r.finished;
    }
    m.environment_problem = m.environment_problem || r.environment_problem;
    std::optional<IncompleteReport> inc = IncompleteOf(nr, label);
    for (auto node : r.nodes) {
      if (!node.hostname) {
        node.hostname = label;
      }
      m.nodes.push_back(std::move(node));
    }
    for (const auto& note : r.notes) {
      m.notes.push_back(label + ": " + note);
    }
    for (auto e : r.events) {
      m.events.push_back(std::move(e));
    }
    for (auto t : r.tests) {
      if (t.node.empty()) {
        t.node = label;
      }
      m.Add(std::move(t));
    }
    for (auto c : r.curves) {
      if (c.node.empty()) {
        c.node = label;
      }
      m.curves.push_back(std::move(c));
    }
    if (inc) {
      // The node's missing results must not read as a pass: a result of its own says so.
      CheckResult t = Make("node_report", -1, label);
      // ERROR when the node could not read its GPUs (an environment problem), else FAIL.
      SetStatus(t, inc->environment_problem ? CheckStatus::kError : CheckStatus::kFail);
      t.measured_text = r.finished.empty() ? "incomplete" : "no results";
      t.expected_text = "complete, with results";
      t.expectation_source = "an incomplete or empty node report makes the merge incomplete (docs/check.md §7)";
      t.evidence = nr.file + ": " + inc->reason;
      t.advice = inc->environment_problem
                     ? "the node's notes say what could not be read: mend that, run gpuplan check on the node to its "
                       "end and merge again"
                     : "run gpuplan check on the node to its end (not killed, not timed out) and merge again";
      m.Add(std::move(t));
      out.incomplete.push_back(std::move(*inc));
    }
  }
  if (!out.incomplete.empty()) {
    m.finished.clear();  // the merge is not complete while a node's report is not
  }
  if (!reports.front().report.host.hostname && reports.size() == 1) {
    m.host = reports.front().report.host;
  }

  // Outliers, test by test over every numeric result of every node (Iglewicz and Hoaglin 1993):
  // modified z = 0.6745 (x - median) / MAD; when the MAD is 0 (more than half the values
  // equal), the mean absolute deviation scaled by 1.253314 takes its place.
  std::map<std::pair<std::string, std::string>, std::vector<const CheckResult*>> groups;
  std::vector<std::pair<std::string, std::string>> group_order;
  for (const auto& t : m.tests) {
    if (!t.measured || !std::isfinite(*t.measured) || t.status == CheckStatus::kSkip || t.status == CheckStatus::kError) {
      continue;
    }
    auto key = std::make_pair(t.name, t.unit);
    auto& g = groups[key];
    if (g.empty()) {
      group_order.push_back(key);
    }
    g.push_back(&t);
  }
  std::vector<CheckResult> flagged;
  for (const auto& key : group_order) {
    const auto& g = groups[key];
    if (g.size() < 3) {
      continue;
    }
    std::vector<double> x;
    x.reserve(g.size());
    for (const auto* t : g) {
      x.push_back(*t->measured);
    }
    const double med = Median(x);
    std::vector<double> dev;
    dev.reserve(x.size());
    double mean_abs = 0;
    for (double v : x) {
      dev.push_back(std::fabs(v - med));
      mean_abs += std::fabs(v - med);
    }
    mean_abs /= static_cast<double>(x.size());
    const double mad = Median(dev);
    double scale = 0;  // z = (x - med) / scale
    double spread = 0;
    if (mad > 0) {
      scale = mad / 0.6745;
      spread = mad;
    } else if (mean_abs > 0) {
      scale = 1.253314 * mean_abs;
      spread = scale;
    } else {
      continue;  // every value equal
    }
    for (const auto* t : g) {
      const double z = (*t->measured - med) / scale;
      if (std::fabs(z) <= req.outlier_z) {
        continue;
      }
      Outlier o{t->name, t->node, t->gpu, *t->measured, med, spread, z, t->unit, static_cast<int>(g.size())};
      CheckResult r = Make("outlier_" + t->name, t->gpu, t->node);
      r.measured = *t->measured;
      r.expected = med;
      r.unit = t->unit;
      r.expected_text = fmt::format("median of {} results", g.size());
      r.expectation_source =
          fmt::format("modified z-score, |z| > {} (docs/check.md §7)", check_cells::Number(req.outlier_z, 6));
      r.evidence = fmt::format("{}{}: {} = {} {} against a median of {} over {} results ({} the peers, modified z = {:.1f})",
                               t->node, t->gpu >= 0 ? fmt::format(" GPU {}", t->gpu) : std::string(), t->name,
                               check_cells::Number(*t->measured), t->unit, check_cells::Number(med), g.size(),
                               z < 0 ? "below" : "above", z);
      Warn(r, "one slow or odd GPU or node holds back every synchronous job on the cluster: re-run check on it "
              "and ask the provider");
      out.outliers.push_back(o);
      flagged.push_back(std::move(r));
    }
  }
  for (auto& r : flagged) {
    m.Add(std::move(r));
  }
  return out;
}

}  // namespace gpuplan
