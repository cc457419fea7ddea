#include "meter/render/meter_agent_text.h"

#include "read/time_text.h"

#include <fmt/format.h>

#include "format/text_lang.h"
#include "format/shown.h"

namespace gpuplan {

std::string UtcTimeText(UtcMillis time) { return FormatUtcIso(time); }

void MeterAgentText::OnStart(const std::string& source, const TraceHeader& machine) {
  err_ << "meter: "
       << SayFormat("cli.meter.agent.sampling", "sampling {} GPU{} from {}",
                    {std::to_string(machine.gpus.size()), machine.gpus.size() == 1 ? "" : "s", Shown(source)})
       << "\n";
  err_.flush();
}

void MeterAgentText::OnTick(const TraceStep& step, int64_t tick) {
  if (!verbose_) {
    return;
  }
  int busy = 0;
  for (const GpuSample& g : step.gpus) {
    if (g.utilization_gpu.value_or(0) > 0) {
      ++busy;
    }
  }
  // One line per tick, flushed: tests read the last tick sampled before a kill.
  out_ << "tick " << tick << " sampled " << UtcTimeText(step.time) << " time_ms " << UnixMillis(step.time) << " gpus "
       << step.gpus.size() << " busy " << busy << " processes " << step.processes.size() << std::endl;
}

void MeterAgentText::OnStoreBehind(const FlushStatus& status) {
  err_ << "meter: "
       << SayFormat("cli.meter.agent.behind", "the store is behind, samples wait in memory: {}",
                    {Shown(SayMessage(status.reason))})
       << std::endl;
}

void MeterAgentText::OnStoreCaughtUp(const FlushStatus& status) {
  err_ << "meter: "
       << SayFormat("cli.meter.agent.caught_up", "the store caught up ({} samples written in the last flush)",
                    {std::to_string(status.written)})
       << std::endl;
}

void MeterAgentText::OnMessage(const std::string& line) { err_ << "meter: " << Shown(SayMessage(line)) << std::endl; }

void MeterAgentText::OnStop(const MeterRunSummary& s) {
  const std::string ticks = std::to_string(s.ticks);
  out_ << (s.first && s.last ? SayFormat("cli.meter.agent.ticks_from_to", "{} ticks from {} to {}",
                                               {ticks, UtcTimeText(*s.first), UtcTimeText(*s.last)})
                                   : SayFormat("cli.meter.agent.ticks", "{} ticks", {ticks}))
       << SayFormat("cli.meter.agent.stop", ": {} rows written, {} lost at exit, {} dropped",
                    {std::to_string(s.store.written), std::to_string(s.buffered_at_exit),
                     std::to_string(s.store.dropped_overflow + s.store.dropped_too_old)})
       << (s.resumed_after_steps > 0
               ? SayFormat("cli.meter.agent.resumed", ", resumed: {} steps already in the store skipped",
                           {std::to_string(s.resumed_after_steps)})
               : "")
       << (s.stopped ? Say("cli.meter.agent.stopped", " (stopped)") : "") << std::endl;
}

}  // namespace gpuplan
