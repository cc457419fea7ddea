#include "cost/offer.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <set>

#include "catalog/json_source.h"
#include "core/error.h"
#include "core/names.h"

namespace gpuplan {
namespace {

int LineOf(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

template <typename E>
E ParseChoice(const YAML::Node& n, const std::string& field, const std::string& file,
              const std::vector<std::pair<const char*, E>>& choices) {
  const std::string v = n.IsScalar() ? NormalizeName(n.Scalar()) : "";
  std::vector<std::string> names;
  for (const auto& [k, e] : choices) {
    if (NormalizeName(k) == v) {
      return e;
    }
    names.emplace_back(k);
  }
  throw InputError("expected " + JoinOr(names) + ", got '" + (n.IsScalar() ? n.Scalar() : "a structure") + "'", file,
                   LineOf(n), field);
}

class Reader {
 public:
  Reader(const YAML::Node& map, std::string path, std::string file)
      : map_(map), path_(std::move(path)), file_(std::move(file)) {}

  [[noreturn]] void Fail(const std::string& key, const std::string& msg) const {
    YAML::Node n = map_[key];
    throw InputError(msg, file_, n ? LineOf(n) : LineOf(map_), path_ + key);
  }
  bool Has(const std::string& key) const { return map_[key] && !map_[key].IsNull(); }
  YAML::Node Node(const std::string& key) const { return map_[key]; }
  std::string Str(const std::string& key, bool required, const std::string& fallback = "") const {
    if (!Has(key)) {
      if (required) {
        Fail(key, "required field is missing");
      }
      return fallback;
    }
    if (!map_[key].IsScalar()) {
      Fail(key, "expected a text value");
    }
    return map_[key].Scalar();
  }
  double Num(const std::string& key, bool required, double fallback, double min, double max) const {
    if (!Has(key)) {
      if (required) {
        Fail(key, "required field is missing");
      }
      return fallback;
    }
    double d = 0;
    if (!map_[key].IsScalar() || !YAML::convert<double>::decode(map_[key], d) || !std::isfinite(d)) {
      Fail(key, "expected a number, got '" + (map_[key].IsScalar() ? map_[key].Scalar() : std::string("a structure")) +
                    "'");
    }
    if (d < min || d > max) {
      Fail(key, "must be between " + Fmt(min) + " and " + Fmt(max) + ", got " + map_[key].Scalar());
    }
    return d;
  }
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }

 private:
  static std::string Fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
  }
  const YAML::Node& map_;
  std::string path_;
  std::string file_;
};

int ParseClock(const YAML::Node& n, const std::string& field, const std::string& file) {
  int h = -1, m = -1;
  char colon = 0;
  if (n.IsScalar() && std::sscanf(n.Scalar().c_str(), "%d%c%d", &h, &colon, &m) == 3 && colon == ':' && h >= 0 &&
      h <= 24 && m >= 0 && m < 60 && !(h == 24 && m > 0)) {
    return h * 60 + m;
  }
  throw InputError("expected a time of day HH:MM", file, LineOf(n), field);
}

}  // namespace

const char* ToString(BillingMode m) {
  switch (m) {
    case BillingMode::kYearly: return "yearly";
    case BillingMode::kMonthly: return "monthly";
    case BillingMode::kWeekly: return "weekly";
    case BillingMode::kDaily: return "daily";
    case BillingMode::kOnDemand: return "on_demand";
    case BillingMode::kSpot: return "spot";
  }
  return "?";
}
const char* ToString(Granularity g) {
  switch (g) {
    case Granularity::kSecond: return "second";
    case Granularity::kMinute: return "minute";
    case Granularity::kHour: return "hour";
    case Granularity::kDay: return "day";
  }
  return "?";
}
const char* ToString(BillingStart b) {
  switch (b) {
    case BillingStart::kCreate: return "create";
    case BillingStart::kStart: return "start";
    case BillingStart::kTask: return "task";
  }
  return "?";
}

bool IsReserved(BillingMode m) { return m != BillingMode::kOnDemand && m != BillingMode::kSpot; }

double TermHours(BillingMode m) {
  switch (m) {
    case BillingMode::kYearly: return 8760;
    case BillingMode::kMonthly: return kHoursPerMonth;
    case BillingMode::kWeekly: return 168;
    case BillingMode::kDaily: return 24;
    default: return 1;
  }
}

double GranularityHours(Granularity g) {
  switch (g) {
    case Granularity::kSecond: return 1.0 / 3600;
    case Granularity::kMinute: return 1.0 / 60;
    case Granularity::kHour: return 1;
    case Granularity::kDay: return 24;
  }
  return 1;
}

bool NightDiscount::Contains(int hour_of_day) const {
  const int minute = hour_of_day * 60;
  if (from_minute <= to_minute) {
    return minute >= from_minute && minute < to_minute;
  }
  return minute >= from_minute || minute < to_minute;  // wraps midnight
}

double NightDiscount::HoursPerDay() const {
  int n = 0;
  for (int h = 0; h < 24; ++h) {
    n += Contains(h) ? 1 : 0;
  }
  return n;
}

double Offer::MonthlyFixedFees() const {
  return storage_gb * storage_price_per_gb_month + bandwidth_price_per_month;
}

double Offer::ReservedMonthly() const {
  return price * (kHoursPerMonth / TermHours(mode)) * (1.0 + addon_fee_ratio);
}

double Offer::HourlyPrice(int hour_of_day) const {
  double p = price * (1.0 + addon_fee_ratio);
  if (night && night->Contains(hour_of_day)) {
    p *= night->factor;
  }
  return p;
}

OfferSet ParseOffers(const std::string& yaml_text, const std::string& file, const GpuCatalog& catalog) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError("YAML error: " + e.msg, file, e.mark.line >= 0 ? e.mark.line + 1 : 0);
  }
  if (!root.IsMap()) {
    throw InputError("expected a mapping with 'currency' and an 'offers' list", file, 1);
  }
  OfferSet set;
  set.file = file;
  const Reader top(root, "", file);
  set.currency = top.Str("currency", false, "CNY");
  if (set.currency.size() != 3) {
    top.Fail("currency", "expected a 3-letter currency code such as CNY or USD");
  }
  YAML::Node list = root["offers"];
  if (!list || !list.IsSequence() || list.size() == 0) {
    throw InputError("expected a non-empty 'offers' list", file, list ? LineOf(list) : 1, "offers");
  }
  std::set<std::string> ids;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node n = list[i];
    if (!n.IsMap()) {
      throw InputError("expected a mapping", file, LineOf(n), "offers[" + std::to_string(i) + "]");
    }
    Offer o;
    o.line = LineOf(n);
    const Reader first(n, "offers[" + std::to_string(i) + "].", file);
    o.id = first.Str("id", true);
    const Reader r(n, "offers[" + o.id + "].", file);
    if (!ids.insert(o.id).second) {
      r.Fail("id", "duplicate offer id '" + o.id + "'");
    }
    o.provider = r.Str("provider", false);
    o.region = r.Str("region", false);
    const std::string gpu = r.Str("gpu", true);
    o.gpu = catalog.TryFind(gpu);
    if (o.gpu == nullptr) {
      try {
        catalog.Find(gpu);
      } catch (const InputError& e) {
        r.Fail("gpu", e.message());
      }
    }
    o.gpus_per_instance = static_cast<int>(r.Num("gpus_per_instance", false, 1, 1, 1024));
    if (!r.Has("mode")) {
      r.Fail("mode", "required field is missing");
    }
    o.mode = ParseChoice<BillingMode>(r.Node("mode"), r.path() + "mode", file,
                                      {{"yearly", BillingMode::kYearly},
                                       {"monthly", BillingMode::kMonthly},
                                       {"weekly", BillingMode::kWeekly},
                                       {"daily", BillingMode::kDaily},
                                       {"on_demand", BillingMode::kOnDemand},
                                       {"spot", BillingMode::kSpot}});
    o.price = r.Num("price", true, 0, 1e-9, 1e12);
    o.min_terms = static_cast<int>(r.Num("min_term", false, 1, 1, 1e6));
    if (r.Has("granularity")) {
      o.granularity = ParseChoice<Granularity>(r.Node("granularity"), r.path() + "granularity", file,
                                               {{"second", Granularity::kSecond},
                                                {"minute", Granularity::kMinute},
                                                {"hour", Granularity::kHour},
                                                {"day", Granularity::kDay}});
    }
    if (r.Has("billing_starts")) {
      o.billing_starts = ParseChoice<BillingStart>(r.Node("billing_starts"), r.path() + "billing_starts", file,
                                                   {{"create", BillingStart::kCreate},
                                                    {"start", BillingStart::kStart},
                                                    {"task", BillingStart::kTask}});
    }
    o.stopped_fee_ratio = r.Num("stopped_fee_ratio", false, 0, 0, 1);
    o.addon_fee_ratio = r.Num("addon_fee_ratio", false, 0, 0, 10);
    if (r.Has("storage")) {
      const YAML::Node s = r.Node("storage");
      if (!s.IsMap()) {
        r.Fail("storage", "expected {kind, gb, price_per_gb_month}");
      }
      const Reader sr(s, r.path() + "storage.", file);
      o.storage_kind = sr.Str("kind", false, "block");
      o.storage_gb = sr.Num("gb", true, 0, 0, 1e9);
      o.storage_price_per_gb_month = sr.Num("price_per_gb_month", true, 0, 0, 1e6);
    }
    if (r.Has("bandwidth")) {
      const YAML::Node b = r.Node("bandwidth");
      if (!b.IsMap()) {
        r.Fail("bandwidth", "expected {mbps, price_per_month, price_per_gb}");
      }
      const Reader br(b, r.path() + "bandwidth.", file);
      o.bandwidth_mbps = br.Num("mbps", false, 0, 0, 1e9);
      o.bandwidth_price_per_month = br.Num("price_per_month", false, 0, 0, 1e12);
      o.egress_price_per_gb = br.Num("price_per_gb", false, 0, 0, 1e6);
    }
    if (r.Has("night_discount")) {
      const YAML::Node nd = r.Node("night_discount");
      if (!nd.IsMap()) {
        r.Fail("night_discount", "expected {from: \"22:00\", to: \"08:00\", factor: 0.7}");
      }
      const Reader nr(nd, r.path() + "night_discount.", file);
      NightDiscount d;
      if (!nr.Has("from") || !nr.Has("to")) {
        nr.Fail(nr.Has("from") ? "to" : "from", "required field is missing");
      }
      d.from_minute = ParseClock(nd["from"], nr.path() + "from", file);
      d.to_minute = ParseClock(nd["to"], nr.path() + "to", file);
      d.factor = nr.Num("factor", true, 1, 0, 1);
      if (d.from_minute % 60 != 0 || d.to_minute % 60 != 0) {
        nr.Fail("from", "night windows are billed by the hour: use whole hours");
      }
      o.night = d;
    }
    if (r.Has("spot")) {
      const YAML::Node sp = r.Node("spot");
      if (!sp.IsMap()) {
        r.Fail("spot", "expected {interruptions_per_hour, restart_minutes}");
      }
      const Reader sr(sp, r.path() + "spot.", file);
      SpotTerms t;
      t.interruptions_per_hour = sr.Num("interruptions_per_hour", true, 0, 0, 60);
      t.restart_minutes = sr.Num("restart_minutes", false, 10, 0, 1440);
      t.checkpoint_minutes = sr.Num("checkpoint_minutes", false, 5, 0, 1440);
      o.spot = t;
    }
    if (o.mode == BillingMode::kSpot && !o.spot) {
      r.Fail("spot", "a spot offer needs spot: {interruptions_per_hour, restart_minutes}");
    }
    set.offers.push_back(std::move(o));
  }
  return set;
}

OfferSet LoadOffers(const std::string& path, const GpuCatalog& catalog) {
  return ParseOffers(ReadFileText(path), path, catalog);
}

}  // namespace gpuplan
