// `gpuplan meter report` and `gpuplan meter export` as request -> result functions
// (docs/meter.md). A front end (the CLI, the serve API) fills a request, calls Run*, and renders
// the result (meter/render/meter_json.h, meter/render/meter_text.h; the export is CSV text already). Every default
// of these jobs is defined here, once.
//
// The report reads the store read-only: per group (a GPU, a user, a job or a pod) the busy,
// allocated-but-idle and billed card-hours, the utilisation distribution, energy and money under
// one offer; the idle money named per GPU; totals; the month's projection. The export writes
// the hourly usage CSV that `gpuplan cost` reads, so `cost optimize` runs on measured use.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "cost/usage.h"
#include "meter/observed.h"
#include "meter/rightsize.h"

namespace gpuplan {

enum class MeterGroupBy { kGpu, kUser, kJob, kPod };
// "gpu", "user", "job", "pod".
std::string_view ToString(MeterGroupBy by);
// Case-insensitive; InputError naming `field` otherwise.
MeterGroupBy ParseMeterGroupBy(const std::string& text, const std::string& field = "by");

// The group a process belongs to: its user, its pod ("namespace/name"), or its job ("slurm:ID",
// "pod:ns/name", "container:ID12", "pid:PID cmd").
std::string MeterGroupKey(MeterGroupBy by, const ProcessIdentity& p);
// The offer `id` of the set (empty: its only offer); InputError naming option `offer` otherwise.
const Offer& ChooseMeterOffer(const OfferSet& set, const std::string& id);

// A report or export bound: "2026-03-01T09:00" (an ISO 8601 hour; seconds and a Z or +08:00
// suffix accepted), "2026-03-01" (00:00 that day) or "2026-03" (00:00 on the 1st), on `zone`'s
// wall clock unless it carries an offset. InputError naming option `field`.
UtcMillis ParseMeterTime(const std::string& text, const Zone& zone, const std::string& field);

struct MeterReportRequest {
  std::string db;          // the meter database (SQLite, opened read-only); required
  std::string from;        // ParseMeterTime; empty: 00:00 on the 1st of the month holding `to`
  std::string to;          // ParseMeterTime; empty: now. Hours after now are not reported
  std::string by = "gpu";  // gpu | user | job | pod
  std::string offers;      // offers file (docs/offers.md); empty: no money. Its timezone is the report's
  std::string offer;       // offer id in it; empty: the file's only offer
  std::optional<UtcSeconds> now;  // tests; unset: the clock
  // The agent's sampling (StoreOptions: interval, longest gap still observed), for the samples
  // not rolled up yet (the last minute or so), whose observed time is computed when read; unset:
  // the store's defaults (1 s, 10 s). Rolled-up data does not depend on them.
  std::optional<double> sample_interval_seconds;
  std::optional<double> max_sample_gap_seconds;
};

// Observed hours by utilisation bucket (UtilisationBucketName), and hours with no reading.
struct UtilisationDistribution {
  std::array<double, kUtilisationBuckets> hours{};
  double unmeasured_hours = 0;
  double Total() const;
};

// One row of the report: a GPU (by gpu), or a user, job or pod with the GPU time attributed to
// it. By user/job/pod, the time no process held is the group "(no process)", and busy time with
// no process visible (utilisation > 0 from a process the agent could not see) "(unseen process)".
struct MeterGroup {
  std::string key;                  // "GPU 3", "alice", "slurm:81234", "ml/trainer-0", "(no process)"
  std::optional<int> gpu;           // by gpu
  std::optional<std::string> uuid;  // by gpu
  // Hours of GPU time. By gpu: observed = busy + idle. By user/job/pod: the group's share of
  // each GPU-hour's busy time (observed = busy), or for "(no process)" the idle time.
  double observed_hours = 0;
  double busy_hours = 0;    // a process on the GPU or utilisation > 0
  double active_hours = 0;  // of busy: utilisation > 0
  double idle_hours = 0;    // allocated but idle: observed, not busy
  UtilisationDistribution utilisation;
  std::optional<double> energy_kwh;  // absent when no sample had the energy counter
  int64_t processes = 0;             // distinct processes seen on the GPU, or attributed to the group
  // With an offer (MeterReport::priced), in MeterReport::currency:
  double billed_hours = 0;       // card-hours billed
  double idle_billed_hours = 0;  // of them, billed while the GPU was not busy
  double money = 0;              // everything billed to the group, stopped fees included
  double idle_money = 0;         // the idle share of the billed hours' money
  double stopped_money = 0;      // stopped-instance fees and re-creation between up periods
  // The money of the busy share of the billed hours: money - idle money - stopped fees.
  double UseMoney() const { return money - idle_money - stopped_money; }
};

// "GPU 3: 41 h billed with no process, 1,230 CNY": one per GPU with idle billed time.
struct IdleSpend {
  int gpu = 0;
  double hours = 0;  // billed card-hours with the GPU not busy (unpriced: observed idle hours)
  double money = 0;
  std::string line;
};

// The offer a report was priced with (copied: the report holds no pointers).
struct MeterOfferSummary {
  std::string id;
  std::string file;
  std::string gpu;
  std::string mode;            // ToString(BillingMode)
  std::string granularity;     // ToString(Granularity)
  std::string billing_starts;  // ToString(BillingStart)
  int gpus_per_instance = 1;
  double price = 0;
  // What an instance-hour is billed (hourly offers): by day and, with a night window, at night,
  // add-ons included; the window as "22:00-08:00". Reserved: the term's price with add-ons.
  double day_rate = 0;
  std::optional<double> night_rate;
  std::string night_window;
};

struct MeterReport {
  std::string db;
  UtcMillis from{};  // [from, to), whole hours
  UtcMillis to{};
  Zone zone;                     // the offers' zone, else UTC
  MeterGroupBy by = MeterGroupBy::kGpu;
  std::vector<int> gpus;          // GPUs seen in the range
  // What the store holds, whatever the range: its first sample's hour and the hour after its last
  // none for an empty store. The page opens on it (issue 26 req. 3).
  std::optional<UtcMillis> store_from;
  std::optional<UtcMillis> store_to;
  std::vector<MeterGroup> groups;
  MeterGroup total;               // every GPU together (key "total")
  bool priced = false;            // an offer was given: money fields are meaningful
  std::string currency;
  std::optional<MeterOfferSummary> offer;
  std::vector<IdleSpend> idle;    // by idle money (unpriced: idle hours), largest first
  std::optional<MonthProjection> projection;  // priced, and something observed in the month
  // Jobs that would fit a MIG slice or a cheaper card (priced reports; rightsize.h), most
  // money saved first.
  std::vector<RightSizing> right_sizing;
  // GPU-hours whose utilisation distribution rests on the hour roll-up's mean alone.
  int64_t utilisation_from_hour_means = 0;
  std::vector<std::string> notes;
};

// Throws InputError naming the option by its key (InputError::Option: db, from, to, by, offers,
// offer; each front end spells it) for a bad value, and the store's errors (a missing or foreign
// database).
MeterReport RunMeterReport(const MeterReportRequest& r, const GpuCatalog& catalog);

// A report's range from its --from and --to (ParseMeterTime in the zone): [from, to) in whole
// hours, `to` at most the hour after `now` (UTC seconds; unset: the clock), `from` empty: 00:00
// on the 1st of the month holding `to`. InputError naming option `from` or `to`.
TimeRange MeterReportRange(const std::string& from, const std::string& to, const Zone& zone,
                           std::optional<UtcSeconds> now);

// What every read command of the meter (report, timeline, alerts) starts from: the database
// required, the offers file read and its offer chosen (--offer needs --offers), and the range in
// the offers' zone (UTC without offers). `offer` points into `offers`.
struct MeterPricedRange {
  std::optional<OfferSet> offers;
  const Offer* offer = nullptr;
  Zone zone;  // the offers' zone, else UTC
  TimeRange range;
};
MeterPricedRange ResolveMeterPricedRange(const std::string& db, const std::string& offers, const std::string& offer,
                                         const std::string& from, const std::string& to, std::optional<UtcSeconds> now,
                                         const GpuCatalog& catalog);

// Money and hours over time (`gpuplan meter timeline`, the usage page's chart): the range cut
// into slots of one hour or one day from its start (the last one shorter when the range ends
// inside it), each slot's total exactly the `total` of `gpuplan meter report --from SLOT --to
// SLOT_END` (that slot billed as a report of it alone, so fees that span slots land where such
// a report puts them), from one read of the store over the range (SliceObservedUse).
struct MeterTimelineRequest {
  std::string db;            // required
  std::string from;          // as MeterReportRequest
  std::string to;
  std::string step = "hour";  // hour | day
  std::string offers;
  std::string offer;
  std::optional<UtcSeconds> now;
  std::optional<double> sample_interval_seconds;
  std::optional<double> max_sample_gap_seconds;
};

// The most slots one timeline holds: 31 days of hours.
inline constexpr std::size_t kMaxMeterTimelineSlots = 31 * 24;

struct MeterTimelineSlot {
  UtcMillis from{};
  UtcMillis to{};
  MeterGroup total;  // key "total"
};

struct MeterTimeline {
  std::string db;
  UtcMillis from{};
  UtcMillis to{};
  Zone zone;  // the offers' zone, else UTC
  std::string step;  // "hour" or "day"
  bool priced = false;
  std::string currency;
  std::vector<MeterTimelineSlot> slots;
};

// InputError naming option `step` for an unknown step or more than kMaxMeterTimelineSlots slots, and as
// RunMeterReport otherwise.
MeterTimeline RunMeterTimeline(const MeterTimelineRequest& r, const GpuCatalog& catalog);

struct MeterExportRequest {
  std::string db;              // required
  std::string from;            // ParseMeterTime; empty: the first hour with data
  std::string to;              // ParseMeterTime; empty: the end of the last hour with data (at most now)
  std::string offers;          // optional: only its timezone is used (the CSV's offset); else UTC
  std::string basis = "busy";  // busy | allocated (UsageBasis)
  std::optional<UtcSeconds> now;  // tests; unset: the clock
  std::optional<double> sample_interval_seconds;  // as in MeterReportRequest
  std::optional<double> max_sample_gap_seconds;
};

struct MeterExport {
  UsageTrace trace;  // what the CSV holds
  UsageBasis basis = UsageBasis::kBusy;
  std::string csv;   // header `timestamp,gpus`, one row per hour (UsageTraceToCsv)
};

MeterExport RunMeterExport(const MeterExportRequest& r, const GpuCatalog& catalog);

}  // namespace gpuplan
