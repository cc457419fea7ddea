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

}  // namespace gpuplan
