#include "core/time.h"

#include <date/tz.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace gpuplan {

Zone Zone::FixedOffset(std::chrono::minutes offset) {
  Zone z;
  z.offset_ = offset;
  return z;
}

std::optional<Zone> Zone::Named(std::string_view name) {
  try {
    Zone z;
    z.tz_ = date::locate_zone(name);
    return z;
  } catch (const std::exception&) {  // unknown name, or no database on this machine
    return std::nullopt;
  }
}

date::local_time<std::chrono::milliseconds> Zone::ToLocal(UtcMillis t) const {
  if (tz_ == nullptr) {
    return date::local_time<std::chrono::milliseconds>{t.time_since_epoch() + offset_};
  }
  return tz_->to_local(t);
}

UtcMillis Zone::ToUtc(date::local_time<std::chrono::milliseconds> t) const {
  if (tz_ == nullptr) {
    return UtcMillis{t.time_since_epoch() - offset_};
  }
  return tz_->to_sys(t, date::choose::earliest);
}

std::chrono::minutes Zone::OffsetAt(UtcMillis t) const {
  if (tz_ == nullptr) {
    return offset_;
  }
  return date::floor<std::chrono::minutes>(tz_->get_info(date::floor<std::chrono::seconds>(t)).offset);
}

std::string Zone::Name() const {
  if (tz_ != nullptr) {
    return std::string(tz_->name());
  }
  const long m = static_cast<long>(offset_.count());
  const long a = std::labs(m);
  char buf[32];  // room for any long, as the compiler counts it
  std::snprintf(buf, sizeof buf, "%c%02ld:%02ld", m < 0 ? '-' : '+', a / 60, a % 60);
  return buf;
}

}  // namespace gpuplan
