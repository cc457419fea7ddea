#include "meter/meter_options.h"

namespace gpuplan {

const OptionTable<MeterReportRequest>& MeterReportOptionTable() {
  using R = MeterReportRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--db", "db", "the meter database (SQLite) the agent writes", &R::db).Required());
    t.push_back(Option<R>("--from", "from", "start: 2026-03-01T09:00, 2026-03-01 or 2026-03 (the offers' time zone)",
                          &R::from)
                    .Unset("the 1st of the month of --to"));
    t.push_back(Option<R>("--to", "to", "end (exclusive), same forms as --from", &R::to).Unset("now"));
    t.push_back(Option<R>("--by", "by", "one row per GPU, user, job (Slurm) or pod", &R::by)
                    .Choices({"gpu", "user", "job", "pod"}, [](const std::string& s) { ParseMeterGroupBy(s); }));
    t.push_back(Option<R>("--offers", "offers", "offers file (docs/offers.md): bill the observed use", &R::offers)
                    .Unset("no money"));
    t.push_back(Option<R>("--offer", "offer", "the offer the machine is rented under", &R::offer)
                    .Unset("the file's only offer"));
    return t;
  }();
  return table;
}

const OptionTable<MeterExportRequest>& MeterExportOptionTable() {
  using R = MeterExportRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--db", "db", "the meter database (SQLite) the agent writes", &R::db).Required());
    t.push_back(Option<R>("--from", "from", "start, as meter report --from", &R::from).Unset("the first hour with data"));
    t.push_back(Option<R>("--to", "to", "end (exclusive)", &R::to).Unset("the last hour with data"));
    t.push_back(Option<R>("--offers", "offers", "offers file: only its time zone is used (the CSV's offset)", &R::offers)
                    .Unset("UTC"));
    t.push_back(Option<R>("--basis", "basis", "GPUs per hour counted when busy, or whenever allocated (observed)",
                          &R::basis)
                    .Choices({"busy", "allocated"}));
    return t;
  }();
  return table;
}

const OptionTable<MeterTimelineRequest>& MeterTimelineOptionTable() {
  using R = MeterTimelineRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--db", "db", "the meter database (SQLite) the agent writes", &R::db).Required());
    t.push_back(Option<R>("--from", "from", "start, as meter report --from", &R::from).Unset("the 1st of the month of --to"));
    t.push_back(Option<R>("--to", "to", "end (exclusive)", &R::to).Unset("now"));
    t.push_back(Option<R>("--step", "step", "one slot per hour or per day of the range (at most 744 slots)", &R::step)
                    .Choices({"hour", "day"}));
    t.push_back(Option<R>("--offers", "offers", "offers file (docs/offers.md): bill each slot", &R::offers)
                    .Unset("no money"));
    t.push_back(Option<R>("--offer", "offer", "the offer the machine is rented under", &R::offer)
                    .Unset("the file's only offer"));
    return t;
  }();
  return table;
}

const OptionTable<MeterAlertsRequest>& MeterAlertsOptionTable() {
  using R = MeterAlertsRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--db", "db", "the meter database (SQLite) the agent writes", &R::db).Required());
    t.push_back(Option<R>("--from", "from", "start, as meter report --from", &R::from).Unset("the 1st of the month of --to"));
    t.push_back(Option<R>("--to", "to", "end (exclusive)", &R::to).Unset("now"));
    t.push_back(Option<R>("--offers", "offers", "offers file: the GPU-hour price of idle time and the budget's projection",
                          &R::offers)
                    .Unset("no money"));
    t.push_back(Option<R>("--offer", "offer", "the offer the machine is rented under", &R::offer)
                    .Unset("the file's only offer"));
    t.push_back(Option<R>("--alerts", "alerts", "alerts file (docs/meter-alerts.md): its rules (webhooks are not sent)",
                          &R::alerts)
                    .Unset("the default rules"));
    return t;
  }();
  return table;
}

const OptionTable<MeterAgentRequest>& MeterRunOptionTable() {
  using R = MeterAgentRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--db", "db", "the meter database (SQLite, WAL) to write; created when missing", &R::db)
                    .Required());
    t.push_back(Option<R>("--replay", "replay", "replay a recorded trace (docs/meter-trace.md) instead of sampling NVML",
                          &R::replay)
                    .Unset("sample the GPUs through NVML"));
    t.push_back(Option<R>("--resume", "resume",
                          "continue a replay that was stopped or killed: skip the trace's steps the store already holds",
                          &R::resume));
    t.push_back(Option<R>("--speed", "speed", "replay X times faster than recorded (1e9: as fast as possible)",
                          &R::speed)
                    .Min(0, true)
                    .Max(1e9));
    t.push_back(Option<R>("--interval", "interval", "seconds between samples", &R::interval_seconds)
                    .Unit("s")
                    .Min(0, true)
                    .Max(3600)
                    .Unset("1 s live; every step of a replayed trace"));
    t.push_back(Option<R>("--duration", "duration", "stop after this long (replay: trace time)", &R::duration_seconds)
                    .Unit("s")
                    .Min(0)
                    .Max(1e9)
                    .Unset("until stopped (SIGINT/SIGTERM) or the trace ends"));
    t.push_back(Option<R>("--flush-seconds", "flush_seconds",
                          "seconds between writes to the database; a crash loses at most this", &R::flush_seconds)
                    .Unit("s")
                    .Min(0, true)
                    .Max(10));
    t.push_back(Option<R>("--offers", "offers", "offers file (docs/offers.md) the machine is rented under", &R::offers)
                    .Unset("none"));
    t.push_back(Option<R>("--offer", "offer", "the offer id in --offers", &R::offer).Unset("the file's only offer"));
    t.push_back(Option<R>("--proc-root", "proc_root", "where processes are looked up (a container sees the host's at /host/proc)",
                          &R::proc_root));
    t.push_back(Option<R>("--listen", "listen", "serve Prometheus /metrics on ADDR:PORT (docs/meter-metrics.md)", &R::listen)
                    .Unset("no endpoint"));
    t.push_back(Option<R>("--token-file", "token_file", "file with the bearer token /metrics requires (required off loopback)",
                          &R::token_file)
                    .Unset("no token (loopback only)"));
    t.push_back(Option<R>("--alerts", "alerts", "alerts file: rules and webhooks (docs/meter-alerts.md)", &R::alerts)
                    .Unset("default rules, log only"));
    t.push_back(Option<R>("--verbose", "verbose", "print one line per sample", &R::verbose));
    return t;
  }();
  return table;
}

const OptionTable<MeterRecordRequest>& MeterRecordOptionTable() {
  using R = MeterRecordRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--out", "out", "the trace file to write (JSON Lines, docs/meter-trace.md)", &R::out)
                    .Required());
    t.push_back(Option<R>("--duration", "duration", "how long to record", &R::duration_seconds)
                    .Unit("s")
                    .Min(0)
                    .Max(1e9)
                    .Unset("until stopped"));
    t.push_back(Option<R>("--interval", "interval", "seconds between samples", &R::interval_seconds)
                    .Unit("s")
                    .Min(0, true)
                    .Max(3600));
    t.push_back(Option<R>("--verbose", "verbose", "print one line per sample", &R::verbose));
    return t;
  }();
  return table;
}

const OptionTable<WatchRequest>& MeterWatchOptionTable() {
  using R = WatchRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Option<R>("--interval", "interval", "seconds between samples", &R::interval_seconds)
                    .Unit("s")
                    .Min(0.05)
                    .Max(3600));
    t.push_back(Option<R>("--json", "json", "also write the result with its sampled series as JSON (docs/meter-watch.md)",
                          &R::json_file)
                    .Unset("no file"));
    return t;
  }();
  return table;
}

}  // namespace gpuplan
