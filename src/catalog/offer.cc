#include "catalog/offer.h"

#include <filesystem>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>

#include "core/enum_names.h"
#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/time_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {
namespace {

// One table per enum (core/enum_names.h): printing and parsing read the same names.
constexpr EnumName<BillingMode> kModes[] = {{"yearly", BillingMode::kYearly},   {"monthly", BillingMode::kMonthly},
                                            {"weekly", BillingMode::kWeekly},   {"daily", BillingMode::kDaily},
                                            {"on_demand", BillingMode::kOnDemand}, {"spot", BillingMode::kSpot}};
// The names Chinese providers' price lists and contracts use (issue 12): aliases of the modes.
struct ModeAlias {
  const char* zh;
  BillingMode mode;
};
constexpr ModeAlias kModeAliases[] = {{"包年", BillingMode::kYearly},   {"包月", BillingMode::kMonthly},
                                      {"包周", BillingMode::kWeekly},   {"包日", BillingMode::kDaily},
                                      {"包天", BillingMode::kDaily},    {"按量", BillingMode::kOnDemand},
                                      {"按量付费", BillingMode::kOnDemand}, {"竞价", BillingMode::kSpot},
                                      {"竞价实例", BillingMode::kSpot}};
constexpr EnumName<Granularity> kGranularities[] = {{"second", Granularity::kSecond},
                                                    {"minute", Granularity::kMinute},
                                                    {"hour", Granularity::kHour},
                                                    {"day", Granularity::kDay}};
constexpr EnumName<BillingStart> kBillingStarts[] = {
    {"create", BillingStart::kCreate}, {"start", BillingStart::kStart}, {"task", BillingStart::kTask}};

template <typename E, std::size_t N>
E ParseChoice(const YAML::Node& n, const std::string& field, const std::string& file, const EnumName<E> (&table)[N]) {
  return ParseEnumName(table, n.IsScalar() ? n.Scalar() : "", field, file, YamlLine(n),
                       n.IsScalar() ? n.Scalar() : "a structure");
}

std::chrono::minutes ParseClock(const YAML::Node& n, const std::string& field, const std::string& file) {
  if (const auto m = n.IsScalar() ? ParseTimeOfDay(n.Scalar()) : std::nullopt) {
    return *m;
  }
  throw InputError("expected a time of day HH:MM", file, YamlLine(n), field);
}

}  // namespace

const char* ToString(BillingMode m) { return NameOf(kModes, m); }
const char* ToString(Granularity g) { return NameOf(kGranularities, g); }
const char* ToString(BillingStart b) { return NameOf(kBillingStarts, b); }

bool IsReserved(BillingMode m) { return m != BillingMode::kOnDemand && m != BillingMode::kSpot; }

TermUnit TermUnitOf(BillingMode m) {
  switch (m) {
    case BillingMode::kYearly: return TermUnit::kYear;
    case BillingMode::kMonthly: return TermUnit::kMonth;
    case BillingMode::kWeekly: return TermUnit::kWeek;
    case BillingMode::kDaily: return TermUnit::kDay;
    default: return TermUnit::kHour;
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
  const std::chrono::minutes minute = std::chrono::hours{hour_of_day};
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
  return storage_gb * storage_price_per_gb_month + bandwidth_price_per_month +
         (link_upgrade_bought ? link_upgrade_bought->price_per_month : 0.0);
}

double Offer::ReservedMonthly() const {
  double per_month = price;
  switch (mode) {
    case BillingMode::kYearly: per_month = price / 12.0; break;
    case BillingMode::kWeekly: per_month = price * kHoursPerMonth / 168.0; break;
    case BillingMode::kDaily: per_month = price * kHoursPerMonth / 24.0; break;
    default: break;
  }
  return per_month * (1.0 + addon_fee_ratio);
}

bool ProviderTerms::Any() const {
  return sla_response_minutes || node_replacement_hours || resume_from_checkpoint || private_network ||
         disk_encryption || data_erasure_on_release || billing_transparency;
}

double Offer::HourlyPrice(int hour_of_day) const {
  double p = price * (1.0 + addon_fee_ratio);
  if (night && night->Contains(hour_of_day)) {
    p *= night->factor;
  }
  return p;
}

OfferSet ParseOffers(const std::string& yaml_text, const std::string& file, const GpuCatalog& catalog) {
  const YAML::Node root = ParseYamlText(yaml_text, file);
  if (!root.IsMap()) {
    throw InputError("expected a mapping with 'currency' and an 'offers' list", file, 1);
  }
  OfferSet set;
  set.file = file;
  const YamlMap top(root, "", file);
  top.Only({"currency", "timezone", "offers", "subsidies"});
  set.currency = top.Str("currency", false, "CNY");
  if (set.currency.size() != 3) {
    top.Fail("currency", "expected a 3-letter currency code such as CNY or USD");
  }
  if (top.Has("timezone")) {
    const std::string tz = top.Str("timezone", true);
    if (const auto z = ParseZone(tz)) {
      set.zone = *z;
    } else {
      top.Fail("timezone", "expected a UTC offset in whole hours such as +08:00, or a time zone such as "
                           "Asia/Shanghai (the tz database's names), got '" + tz + "'");
    }
  }
  YAML::Node list = root["offers"];
  if (!list || !list.IsSequence() || list.size() == 0) {
    throw InputError("expected a non-empty 'offers' list", file, list ? YamlLine(list) : 1, "offers");
  }
  std::set<std::string> ids;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node n = list[i];
    if (!n.IsMap()) {
      throw InputError("expected a mapping", file, YamlLine(n), "offers[" + std::to_string(i) + "]");
    }
    Offer o;
    o.line = YamlLine(n);
    const YamlMap first(n, "offers[" + std::to_string(i) + "].", file);
    o.id = first.Str("id", true);
    const YamlMap r(n, "offers[" + o.id + "].", file);
    r.Only({"id", "provider", "region", "gpu", "gpus_per_instance", "mode", "price", "min_term", "granularity",
            "billing_starts", "stopped_fee_ratio", "addon_fee_ratio", "releasable", "recreate_minutes", "storage",
            "bandwidth", "link", "night_discount", "spot", "cpu_cores", "stock", "terms"});
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
    o.gpus_per_instance = static_cast<int>(r.Count("gpus_per_instance", false, 1, 1, 1024));
    if (!r.Has("mode")) {
      r.Fail("mode", "required field is missing");
    }
    const YAML::Node mode = r.Node("mode");
    const auto alias = std::find_if(std::begin(kModeAliases), std::end(kModeAliases), [&mode](const ModeAlias& a) {
      return mode.IsScalar() && mode.Scalar() == a.zh;
    });
    o.mode = alias != std::end(kModeAliases) ? alias->mode : ParseChoice(mode, r.path() + "mode", file, kModes);
    o.price = r.Num("price", true, 0, 1e-9, kMaxMoney);
    o.min_terms = static_cast<int>(r.Count("min_term", false, 1, 1, 1000000));
    if (r.Has("granularity")) {
      o.granularity = ParseChoice(r.Node("granularity"), r.path() + "granularity", file, kGranularities);
    }
    if (r.Has("billing_starts")) {
      o.billing_starts = ParseChoice(r.Node("billing_starts"), r.path() + "billing_starts", file, kBillingStarts);
    }
    o.stopped_fee_ratio = r.Num("stopped_fee_ratio", false, 0, 0, 1);
    o.addon_fee_ratio = r.Num("addon_fee_ratio", false, 0, 0, 10);
    if (r.Has("releasable")) {
      const std::string v = NormalizeName(r.Str("releasable", true));
      if (v != "true" && v != "false") {
        r.Fail("releasable", "expected true or false");
      }
      o.releasable = v == "true";
    }
    o.recreate_minutes = r.Num("recreate_minutes", false, 0, 0, 1440);
    if (IsReserved(o.mode) && (r.Has("releasable") || r.Has("recreate_minutes"))) {
      r.Fail(r.Has("releasable") ? "releasable" : "recreate_minutes",
             "applies to on_demand and spot offers only (a reserved instance is paid per term)");
    }
    if (const auto sr = r.Map("storage", "{kind, gb, price_per_gb_month}")) {
      sr->Only({"kind", "gb", "price_per_gb_month"});
      o.storage_kind = sr->Str("kind", false, "block");
      o.storage_gb = sr->Num("gb", true, 0, 0, 1e9);
      o.storage_price_per_gb_month = sr->Num("price_per_gb_month", true, 0, 0, 1e6);
    }
    if (const auto br = r.Map("bandwidth", "{mbps, price_per_month, price_per_gb}")) {
      br->Only({"mbps", "price_per_month", "price_per_gb"});
      o.bandwidth_mbps = br->Num("mbps", false, 0, 0, 1e9);
      o.bandwidth_price_per_month = br->Num("price_per_month", false, 0, 0, kMaxMoney);
      o.egress_price_per_gb = br->Num("price_per_gb", false, 0, 0, 1e6);
    }
    if (const auto lr = r.Map("link", "{gbps: 1, upgrades: [{gbps: 10, price_per_month: 1500}]}")) {
      lr->Only({"gbps", "upgrades"});
      const YAML::Node ups = lr->Node("upgrades");
      o.link_gbps = lr->Num("gbps", true, 1, 0.001, 3200);
      if (ups) {
        if (!ups.IsSequence() || ups.size() > 16) {
          lr->Fail("upgrades", "expected a list of at most 16 {gbps, price_per_month}");
        }
        for (std::size_t k = 0; k < ups.size(); ++k) {
          if (!ups[k].IsMap()) {
            throw InputError("expected a mapping {gbps, price_per_month}", file, YamlLine(ups[k]),
                             lr->path() + "upgrades[" + std::to_string(k) + "]");
          }
          const YamlMap u(ups[k], lr->path() + "upgrades[" + std::to_string(k) + "].", file);
          u.Only({"gbps", "price_per_month"});
          LinkUpgrade up;
          up.gbps = u.Num("gbps", true, 0, 0.001, 3200);
          up.price_per_month = u.Num("price_per_month", true, 0, 0, 1e9);
          if (up.gbps <= *o.link_gbps) {
            u.Fail("gbps", "an upgrade must be faster than the link's " + std::to_string(*o.link_gbps) + " Gbit/s");
          }
          o.link_upgrades.push_back(up);
        }
        std::sort(o.link_upgrades.begin(), o.link_upgrades.end(),
                  [](const LinkUpgrade& a, const LinkUpgrade& b) { return a.gbps < b.gbps; });
      }
    }
    if (const auto nr = r.Map("night_discount", "{from: \"22:00\", to: \"08:00\", factor: 0.7}")) {
      nr->Only({"from", "to", "factor"});
      NightDiscount d;
      if (!nr->Has("from") || !nr->Has("to")) {
        nr->Fail(nr->Has("from") ? "to" : "from", "required field is missing");
      }
      d.from_minute = ParseClock(nr->Node("from"), nr->path() + "from", file);
      d.to_minute = ParseClock(nr->Node("to"), nr->path() + "to", file);
      // Above zero, as a price is: a factor of 0 made the night free without a word.
      d.factor = nr->Num("factor", true, 1, 1e-9, 1);
      if (d.from_minute % std::chrono::hours{1} != std::chrono::minutes{0} || d.to_minute % std::chrono::hours{1} != std::chrono::minutes{0}) {
        nr->Fail("from", "night windows are billed by the hour: use whole hours");
      }
      if (d.from_minute == d.to_minute) {
        // [from, to) with from = to holds no hour: the discount would silently never apply.
        nr->Fail("to", "the same time as `from`: an empty window (no hour is discounted)");
      }
      o.night = d;
    }
    if (const auto sp = r.Map("spot", "{interruptions_per_hour, restart_minutes}")) {
      const YamlMap& sr = *sp;
      sr.Only({"interruptions_per_hour", "restart_minutes", "checkpoint_minutes"});
      SpotTerms t;
      t.interruptions_per_hour = sr.Num("interruptions_per_hour", true, 0, 0, 60);
      t.restart_minutes = sr.Num("restart_minutes", false, 10, 0, 1440);
      t.checkpoint_minutes = sr.Num("checkpoint_minutes", false, 5, 0, 1440);
      o.spot = t;
    }
    if (r.Has("stock")) {
      o.stock = static_cast<int>(r.Count("stock", true, 0, 0, 1000000));
    }
    if (r.Has("cpu_cores")) {
      o.cpu_cores = static_cast<int>(r.Count("cpu_cores", true, 0, 1, 100000));
    }
    if (const auto tr = r.Map("terms", "{sla_response_minutes, node_replacement_hours, resume_from_checkpoint, ...}")) {
      tr->Only({"sla_response_minutes", "node_replacement_hours", "resume_from_checkpoint", "private_network",
                "disk_encryption", "data_erasure_on_release", "billing_transparency"});
      auto yes_no = [&tr](const char* key) -> std::optional<bool> {
        if (!tr->Has(key)) {
          return std::nullopt;
        }
        const std::string v = NormalizeName(tr->Str(key, true));
        if (v != "true" && v != "false") {
          tr->Fail(key, "expected true or false");
        }
        return v == "true";
      };
      o.terms.sla_response_minutes = tr->Number("sla_response_minutes", false, 0, 1e6);
      o.terms.node_replacement_hours = tr->Number("node_replacement_hours", false, 0, 1e6);
      o.terms.resume_from_checkpoint = yes_no("resume_from_checkpoint");
      o.terms.private_network = yes_no("private_network");
      o.terms.disk_encryption = yes_no("disk_encryption");
      o.terms.data_erasure_on_release = yes_no("data_erasure_on_release");
      o.terms.billing_transparency = yes_no("billing_transparency");
    }
    if (o.mode == BillingMode::kSpot && !o.spot) {
      r.Fail("spot", "a spot offer needs spot: {interruptions_per_hour, restart_minutes}");
    }
    set.offers.push_back(std::move(o));
  }
  if (top.Has("subsidies")) {
    const YAML::Node subs = root["subsidies"];
    if (!subs.IsSequence()) {
      top.Fail("subsidies", "expected a list of subsidies ({id, share, modes, covers, cap, from, to})");
    }
    std::set<std::string> sub_ids;
    for (std::size_t i = 0; i < subs.size(); ++i) {
      const YAML::Node n = subs[i];
      if (!n.IsMap()) {
        throw InputError("expected a mapping", file, YamlLine(n), "subsidies[" + std::to_string(i) + "]");
      }
      Subsidy s;
      s.line = YamlLine(n);
      s.id = YamlMap(n, "subsidies[" + std::to_string(i) + "].", file).Str("id", true);
      const YamlMap m(n, "subsidies[" + s.id + "].", file);
      m.Only({"id", "share", "modes", "offers", "providers", "covers", "cap", "from", "to"});
      if (!sub_ids.insert(s.id).second) {
        m.Fail("id", "duplicate subsidy id '" + s.id + "'");
      }
      s.share = *m.Number("share", true, 1e-9, 1);
      for (const auto& mode : m.Strings("modes")) {
        const auto alias = std::find_if(std::begin(kModeAliases), std::end(kModeAliases),
                                        [&mode](const ModeAlias& a) { return mode == a.zh; });
        s.modes.push_back(alias != std::end(kModeAliases)
                              ? alias->mode
                              : ParseEnumName(kModes, mode, m.path() + "modes", file, m.line(), mode));
      }
      s.offers = m.Strings("offers");
      for (const auto& id : s.offers) {
        if (ids.count(id) == 0) {
          m.Fail("offers", "no offer '" + id + "' in this file");
        }
      }
      s.providers = m.Strings("providers");
      const std::string covers = m.Str("covers", false, "compute");
      if (covers != "compute" && covers != "all") {
        m.Fail("covers", "expected compute (the GPU price only) or all (add-ons, storage and bandwidth too)");
      }
      s.covers_all = covers == "all";
      if (const auto cap = m.Map("cap", "{amount, per: month|year|total}")) {
        cap->Only({"amount", "per"});
        s.cap = *cap->Number("amount", true, 0, kMaxMoney);
        const std::string per = cap->Str("per", false, "total");
        if (per != "month" && per != "year" && per != "total") {
          cap->Fail("per", "expected month, year or total");
        }
        s.per = per == "month" ? CapPeriod::kMonth : per == "year" ? CapPeriod::kYear : CapPeriod::kTotal;
      }
      for (const char* key : {"from", "to"}) {
        if (!m.Has(key)) {
          continue;
        }
        const std::string text = m.Str(key, true);
        const auto day = ParseIsoDay(text);
        if (!day) {
          m.Fail(key, "expected a date YYYY-MM-DD, got '" + text + "'");
        }
        if (std::string(key) == "from") {
          s.from_hour = LocalHour{*day};
        } else {
          s.to_hour = LocalHour{*day + date::days{1}};  // the last day covered, whole
        }
      }
      if (s.from_hour && s.to_hour && *s.to_hour <= *s.from_hour) {
        m.Fail("to", "the last day covered is before the first");
      }
      if (std::none_of(set.offers.begin(), set.offers.end(), [&s](const Offer& o) { return s.Applies(o); })) {
        m.Fail("id", "applies to no offer of this file (check modes, offers and providers)");
      }
      set.subsidies.push_back(std::move(s));
    }
  }
  return set;
}

const char* ToString(CapPeriod p) {
  switch (p) {
    case CapPeriod::kMonth: return "month";
    case CapPeriod::kYear: return "year";
    case CapPeriod::kTotal: break;
  }
  return "total";
}

bool Subsidy::Applies(const Offer& o) const {
  return (modes.empty() || std::find(modes.begin(), modes.end(), o.mode) != modes.end()) &&
         (offers.empty() || std::find(offers.begin(), offers.end(), o.id) != offers.end()) &&
         (providers.empty() || std::find(providers.begin(), providers.end(), o.provider) != providers.end());
}

bool Subsidy::Covers(LocalHour h) const { return (!from_hour || h >= *from_hour) && (!to_hour || h < *to_hour); }

int64_t Subsidy::PeriodOf(LocalHour h) const {
  if (per == CapPeriod::kTotal) {
    return 0;
  }
  const date::year_month_day d = DateOf(h);
  const int64_t year = static_cast<int>(d.year());
  return per == CapPeriod::kYear ? year : year * 12 + static_cast<unsigned>(d.month()) - 1;
}

OfferSet LoadOffers(const std::string& path, const GpuCatalog& catalog) {
  return ParseOffers(ReadFileText(path), path, catalog);
}

std::vector<ShippedOffers> ListShippedOffers(const std::string& data_dir, const GpuCatalog& catalog) {
  namespace fs = std::filesystem;
  std::vector<ShippedOffers> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(data_dir) / "offers", ec)) {
    if (e.path().extension() != ".yaml" || !e.is_regular_file(ec)) {
      continue;
    }
    ShippedOffers o{e.path().stem().string(), ReadFileText(e.path().string())};
    ParseOffers(o.text, e.path().string(), catalog);  // a broken shipped file is an error, not a choice
    out.push_back(std::move(o));
  }
  std::sort(out.begin(), out.end(), [](const ShippedOffers& a, const ShippedOffers& b) { return a.name < b.name; });
  return out;
}

}  // namespace gpuplan
