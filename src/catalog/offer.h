// Rental offers (docs/offers.md): billing mode, price, terms and the fees that make the real
// cost, read from YAML with file:line:field errors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/calendar.h"

namespace gpuplan {

enum class BillingMode { kYearly, kMonthly, kWeekly, kDaily, kOnDemand, kSpot };
enum class Granularity { kSecond, kMinute, kHour, kDay };
enum class BillingStart { kCreate, kStart, kTask };

const char* ToString(BillingMode m);
const char* ToString(Granularity g);
const char* ToString(BillingStart b);
bool IsReserved(BillingMode m);          // paid per term whether used or not
TermUnit TermUnitOf(BillingMode m);      // calendar year, month, week, day; hour for hourly modes
// The average month (8760 / 12 h): only for steering estimates and multi-year averages (TCO
// power); billing itself follows the calendar (catalog/calendar.h).
inline constexpr double kHoursPerMonth = 730.0;
// The largest amount of money any input may state (a price, a fee, a card's price), in its
// currency: far above any real one, and small enough that sums over years of hours stay exact
// to the cent in a double.
inline constexpr double kMaxMoney = 1e12;
double GranularityHours(Granularity g);

struct NightDiscount {
  std::chrono::minutes from_minute{0};  // after midnight, local time
  std::chrono::minutes to_minute{0};    // window may wrap midnight (22:00-08:00)
  double factor = 1.0;  // price multiplier inside the window
  bool Contains(int hour_of_day) const;
  double HoursPerDay() const;
};

struct SpotTerms {
  double interruptions_per_hour = 0;
  double restart_minutes = 0;
  double checkpoint_minutes = 5;  // time to write one checkpoint (Young/Daly's C)
};

// The provider's terms an offers file may state (`terms:`), the hard indicators the articles
// ask about before signing; absent: not stated. `gpuplan check compare` shows them beside the
// measured health.
struct ProviderTerms {
  std::optional<double> sla_response_minutes;    // first response to a fault
  std::optional<double> node_replacement_hours;  // a failed node replaced within
  std::optional<bool> resume_from_checkpoint;    // jobs resume on a replacement from the last checkpoint
  std::optional<bool> private_network;           // a private (VPC) network between the lab and the nodes
  std::optional<bool> disk_encryption;           // data at rest encrypted
  std::optional<bool> data_erasure_on_release;   // disks wiped, with a record, when released
  std::optional<bool> billing_transparency;      // an itemised bill per instance and hour
  bool Any() const;
};

// A faster internal link an offer sells on top (`link.upgrades`), per instance and month.
struct LinkUpgrade {
  double gbps = 0;
  double price_per_month = 0;
};

struct Offer {
  std::string id;
  std::string provider;
  std::string region;
  const Gpu* gpu = nullptr;
  int gpus_per_instance = 1;
  BillingMode mode = BillingMode::kOnDemand;
  double price = 0;              // per instance per term; on-demand/spot: per instance-hour
  int min_terms = 1;             // minimum number of terms (reserved) or hours (hourly)
  Granularity granularity = Granularity::kSecond;
  BillingStart billing_starts = BillingStart::kCreate;
  double stopped_fee_ratio = 0;  // share of the hourly price billed while stopped
  bool releasable = true;        // an idle instance may be released (false: kept, stopped, to the end)
  double recreate_minutes = 0;   // billed set-up time when an instance is created again (images, data)
  double addon_fee_ratio = 0;    // images / add-ons, share of the compute price
  std::string storage_kind;
  double storage_gb = 0;
  double storage_price_per_gb_month = 0;
  double bandwidth_mbps = 0;
  double bandwidth_price_per_month = 0;
  double egress_price_per_gb = 0;
  // The instance's link to shared storage and other nodes (`link: {gbps, upgrades}`; absent: not
  // stated): the sync link of a job's checkpoints when fit is not given one (docs/data-movement.md).
  std::optional<double> link_gbps;
  std::vector<LinkUpgrade> link_upgrades;  // slowest first
  // The upgrade bought (cost's `link_gbps`: the link each instance needs): its price per instance
  // and month is one of MonthlyFixedFees; unset: none bought.
  std::optional<LinkUpgrade> link_upgrade_bought;
  std::optional<NightDiscount> night;
  std::optional<SpotTerms> spot;
  std::optional<int> cpu_cores;  // CPU cores per instance the offer promises
  std::optional<int> stock;      // instances the provider has (`stock:`): at most this many at once
  ProviderTerms terms;
  int line = 0;                  // where the offer starts in its file

  // Fixed monthly fees that do not depend on use (storage, bandwidth, a link upgrade bought), per
  // instance.
  double MonthlyFixedFees() const;
  // Reserved modes: the price per average month per instance, add-on fees included (steering
  // estimates only; bills follow the calendar terms of cost/billing.h).
  double ReservedMonthly() const;
  // Hourly modes: price per instance-hour with add-on fees, at an hour of the day (night discount).
  double HourlyPrice(int hour_of_day) const;
};

// A compute voucher or subsidy (`subsidies:`, docs/offers.md): a share of the eligible spend
// comes back, up to a cap per calendar month, calendar year or in total, within [from, to).
enum class CapPeriod { kMonth, kYear, kTotal };
struct Subsidy {
  std::string id;
  double share = 0;                      // of eligible spend, (0, 1]
  std::vector<BillingMode> modes;        // empty: every mode
  std::vector<std::string> offers;       // empty: every offer (of those modes)
  std::vector<std::string> providers;    // empty: every provider
  bool covers_all = false;               // false: compute (the price, no add-ons or fees); true: all billed
  std::optional<double> cap;             // per `per`, in the file's currency
  CapPeriod per = CapPeriod::kTotal;
  std::optional<LocalHour> from_hour;    // 00:00 of the first day covered
  std::optional<LocalHour> to_hour;      // 00:00 of the day after the last day covered
  int line = 0;
  bool Applies(const Offer& o) const;
  bool Covers(LocalHour h) const;  // within [from, to)
  // The period a local hour's spend counts against for the cap (month or year index, 0 in total).
  int64_t PeriodOf(LocalHour h) const;
};
const char* ToString(CapPeriod p);

struct OfferSet {
  std::string currency = "CNY";
  Zone zone = DefaultZone();  // `timezone:`; night windows and terms are in its wall clock
  std::vector<Offer> offers;
  std::vector<Subsidy> subsidies;
  std::string file;
};

OfferSet ParseOffers(const std::string& yaml_text, const std::string& file, const GpuCatalog& catalog);
OfferSet LoadOffers(const std::string& path, const GpuCatalog& catalog);

// The example offers files shipped in DATA_DIR/offers (*.yaml, by name without the extension),
// each read and checked by ParseOffers, for a front end to offer as choices (the page's lists).
struct ShippedOffers {
  std::string name;  // "nanjing-a100"
  std::string text;  // the YAML
};
std::vector<ShippedOffers> ListShippedOffers(const std::string& data_dir, const GpuCatalog& catalog);

}  // namespace gpuplan
