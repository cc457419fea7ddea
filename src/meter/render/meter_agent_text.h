// What `gpuplan meter run` and `meter record` print while they run (meter/agent.h observer):
// one line at start (the source and its GPUs), one per tick with --verbose, the store falling
// behind and catching up (once each), and a summary at the end. Progress and messages go to
// `err`, so standard output stays for the summary line only.
#pragma once

#include <ostream>

#include "meter/agent.h"

namespace gpuplan {

class MeterAgentText : public MeterObserver {
 public:
  MeterAgentText(std::ostream& out, std::ostream& err, bool verbose) : out_(out), err_(err), verbose_(verbose) {}
  void OnStart(const std::string& source, const TraceHeader& machine) override;
  void OnTick(const TraceStep& step, int64_t tick) override;
  void OnStoreBehind(const FlushStatus& status) override;
  void OnStoreCaughtUp(const FlushStatus& status) override;
  void OnMessage(const std::string& line) override;
  void OnStop(const MeterRunSummary& summary) override;

 private:
  std::ostream& out_;
  std::ostream& err_;
  bool verbose_;
};

// "2026-03-02T00:00:10Z" (UTC, whole seconds; milliseconds when not whole).
std::string UtcTimeText(UtcMillis time);

}  // namespace gpuplan
