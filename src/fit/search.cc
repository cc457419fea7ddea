#include "fit/search.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "core/error.h"
#include "core/names.h"
#include "core/work_budget.h"
#include "fit/advisor.h"

namespace gpuplan {
namespace {

constexpr int64_t kPretrainTokensPerStep = 4 * 1024 * 1024;  // ~4M tokens, typical LLM pretraining
constexpr int64_t kFinetuneGlobalBatch = 64;
constexpr std::size_t kRunnersUp = 3;


std::vector<int64_t> GpuCounts(int64_t max_gpus, int64_t per_node) {
  std::vector<int64_t> counts;
  for (int64_t n = 1; n <= std::min(max_gpus, per_node); n *= 2) {
    counts.push_back(n);
  }
  for (int64_t n = 2 * per_node; n <= max_gpus; n += per_node) {
    counts.push_back(n);  // whole nodes beyond one node
  }
  return counts;
}

double Score(const Candidate& c, Objective o, double tokens) {
  const double t = tokens > 0 ? tokens : 1e6;  // per million tokens without a budget
  const double hours = t / c.time.tokens_per_second / 3600.0;
  switch (o) {
    case Objective::kTime: return hours;
    case Objective::kGpuHours: return hours * static_cast<double>(c.layout.gpus);
    case Objective::kCost: return c.cost.amount;
  }
  return hours;
}

void CheckPins(const SearchPins& p) {
  for (const auto& [v, field] : {std::pair{p.gpus, "gpus"}, std::pair{p.tp, "tp"}, std::pair{p.pp, "pp"},
                                 std::pair{p.ep, "ep"}, std::pair{p.vpp, "vpp"},
                                 std::pair{p.cp, "cp"}, std::pair{p.micro_batch, "micro_batch"}}) {
    if (v && *v <= 0) {
      throw InputError::Option(field, "must be a positive number, got " + std::to_string(*v));
    }
  }
  if (p.zero && (*p.zero < 0 || *p.zero > 3)) {
    throw InputError::Option("zero", "ZeRO stage must be 0, 1, 2 or 3");
  }
}

}  // namespace

Objective ParseObjective(const std::string& s) {
  const std::string n = NormalizeName(s);
  if (n == "time") return Objective::kTime;
  if (n == "gpuhours") return Objective::kGpuHours;
  if (n == "cost" || n == "money") return Objective::kCost;
  throw InputError::Option("objective", "unknown objective '" + s + "'; expected time, gpu-hours or cost");
}

const char* ToString(Objective o) {
  switch (o) {
    case Objective::kTime: return "time";
    case Objective::kGpuHours: return "gpu-hours";
    case Objective::kCost: return "cost";
  }
  return "?";
}

std::string SearchPins::Describe() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : " ") + part; };
  if (gpus) add("gpus=" + std::to_string(*gpus));
  if (tp) add("tp=" + std::to_string(*tp));
  if (pp) add("pp=" + std::to_string(*pp));
  if (ep) add("ep=" + std::to_string(*ep));
  if (vpp) add("vpp=" + std::to_string(*vpp));
  if (cp) add("cp=" + std::to_string(*cp));
  if (zero) add("zero=" + std::to_string(*zero));
  if (micro_batch) add("micro-batch=" + std::to_string(*micro_batch));
  if (recompute) add(std::string("recompute=") + ToString(*recompute));
  if (sp) add(std::string("sp=") + (*sp ? "on" : "off"));
  if (offload_optimizer && *offload_optimizer) add("offload-optimizer");
  if (offload_params && *offload_params) add("offload-params");
  return s;
}

SearchResult SearchTraining(const ModelSpec& m, const Workload& base, const SearchOptions& o) {
  if (o.max_gpus <= 0) {
    throw InputError::Option("max_gpus", "must be positive");
  }
  if (o.margin < 0 || o.margin >= 1) {
    throw InputError::Option("margin", "must be in [0, 1)");
  }
  const SearchPins& pin = o.pinned;
  CheckPins(pin);
  SearchResult r;
  const ModelSummary sum = Summarize(m, base.lora_targets);
  const int64_t per_node = o.time.gpus_per_node;
  const std::vector<int64_t> counts = pin.gpus ? std::vector<int64_t>{*pin.gpus} : GpuCounts(o.max_gpus, per_node);
  const int64_t gb_base = base.global_batch > 0 ? base.global_batch
                          : base.task == Task::kPretrain
                              ? std::max<int64_t>(1, kPretrainTokensPerStep / std::max<int64_t>(base.seq, 1))
                              : kFinetuneGlobalBatch;
  std::vector<Recompute> recomputes =
      pin.recompute ? std::vector<Recompute>{*pin.recompute}
                    : std::vector<Recompute>{Recompute::kFull, Recompute::kSelective, Recompute::kNone};
  // A framework that offers op-level selective recomputation (torchtitan) has it tried as well.
  if (!pin.recompute && std::any_of(o.overhead.framework.recompute.begin(), o.overhead.framework.recompute.end(),
                                    [](const std::string& v) { return FindRecompute(v) == Recompute::kOp; })) {
    recomputes.insert(recomputes.begin() + 1, Recompute::kOp);
  }
  // Context parallelism is tried for long sequences (kCpFromSeq tokens and more: docs/time-model.md
  // §6), in powers of 2 whose chunks split each sequence into 2 x cp equal parts (Megatron-Core's
  // load-balanced causal split).
  std::vector<int64_t> cps{pin.cp.value_or(1)};
  if (!pin.cp && base.seq >= kCpFromSeq) {
    for (int64_t cp = 2; cp <= kMaxCp && base.seq % (2 * cp) == 0; cp *= 2) {
      cps.push_back(cp);
    }
  }
  const std::size_t keep = o.top + kRunnersUp + o.keep_extra;
  std::vector<Candidate> best;  // sorted, at most `keep`, one per structural layout (card, tp, pp, cp)
  // The best `keep` layouts without that rule: they fill the table when pins leave fewer shapes
  // than rows asked for (--top N shows N rows whatever is pinned).
  std::vector<Candidate> any_shape;
  std::map<std::pair<std::size_t, int64_t>, Candidate> fastest;  // (card, count) -> fastest layout
  const auto by_score = [](const Candidate& a, const Candidate& b) { return a.score < b.score; };
  std::vector<std::optional<Candidate>> per_gpu(o.gpus.size());
  double closest_ratio = 1e300;
  std::size_t done = 0;
  const std::size_t total = o.gpus.size() * counts.size();

  for (std::size_t gi = 0; gi < o.gpus.size(); ++gi) {
    const Gpu* gpu = o.gpus[gi];
    if (!CardRuns(*gpu, base)) {
      r.notes.push_back(gpu->name + ": not searched, it cannot run " + ToString(base.precision) + " training" +
                        (base.fp8 && CardRuns(*gpu, base.precision) ? " with fp8 GEMMs" : ""));
      continue;  // e.g. pure bf16 training on a card without bf16, or --fp8 on one without fp8
    }
    if (!HasPeakFlops(*gpu, base.precision)) {
      r.notes.push_back(gpu->name + ": not searched, the catalog has no " +
                        (base.precision == Precision::kFp32 ? "fp32" : "bf16/fp16") + " TFLOPS figure for it");
      continue;
    }
    const double capacity = UsableBytes(*gpu, o.margin);  // the Fits test, hoisted per card
    for (int64_t count : counts) {
      CheckWorkBudget();  // a server's per-request deadline (core/work_budget.h)
      if (o.progress && (++done % 16 == 0)) {
        o.progress(static_cast<double>(done) / static_cast<double>(total));
      }
      std::vector<int64_t> tps;
      if (pin.tp) {
        tps.push_back(*pin.tp);
      } else {
        for (int64_t tp = 1; tp <= std::min(count, per_node); tp *= 2) {
          tps.push_back(tp);
        }
      }
      for (int64_t tp : tps) {
        if (tp <= 0 || m.heads % tp != 0 || count % tp != 0) {
          continue;
        }
        std::vector<int64_t> pps;
        if (pin.pp) {
          pps.push_back(*pin.pp);
        } else {
          for (int64_t pp = 1; tp * pp <= count && pp <= m.layers; pp *= 2) {
            pps.push_back(pp);
          }
        }
        for (int64_t pp : pps) {
         for (int64_t cp : cps) {
          if (pp <= 0 || pp > m.layers || count % (tp * pp * cp) != 0) {
            continue;
          }
          const int64_t dp = count / (tp * pp * cp);
          std::vector<int64_t> eps;
          if (pin.ep) {
            const int64_t ep = *pin.ep;
            if (ep == 1 || (m.moe && ep > 1 && dp % ep == 0 && m.moe->experts % ep == 0)) {
              eps.push_back(ep);
            }
          } else {
            eps.push_back(1);
            if (m.moe) {
              for (int64_t ep = 2; ep <= dp; ep *= 2) {
                if (dp % ep == 0 && m.moe->experts % ep == 0) {
                  eps.push_back(ep);
                }
              }
            }
          }
          std::vector<int> zeros;
          if (pin.zero) {
            zeros.push_back(*pin.zero);
          } else {
            for (int zero = dp > 1 ? 3 : 0; zero >= 0; --zero) {
              zeros.push_back(zero);
            }
          }
          const bool sp = pin.sp.value_or(tp > 1);
          if (sp && tp == 1) {
            continue;  // sequence parallelism pinned on needs tp > 1
          }
          for (int64_t ep : eps) {
            for (int zero : zeros) {
              if (pin.offload_params.value_or(false) && zero != 3) {
                continue;  // parameter offload needs ZeRO-3
              }
              // The interleaved schedule (vpp virtual stages a GPU) where the framework runs it and --vpp is
              // not given: VppCandidates (docs/time-model.md §10). A pinned vpp the framework would refuse
              // for this pp (Megatron's even split) rules the pp out.
              std::vector<int64_t> vpps{pp > 1 ? pin.vpp.value_or(1) : 1};
              if (!pin.vpp) {
                vpps = VppCandidates(o.overhead.framework, m.layers, pp);
              } else if (pp > 1 && !VppRefusal(o.overhead.framework, m.layers, pp, *pin.vpp).empty()) {
                continue;
              }
              for (Recompute rc : recomputes) {
                if (rc == Recompute::kSelective && base.flash_attn && !pin.recompute) {
                  continue;  // with flash attention, selective recomputation is what already happens
                }
                // The first vpp's result per micro-batch: more virtual stages only shorten the bubble
                // and hide the pipeline transfers (and hold more in flight), so a later vpp is
                // estimated only when that bound could still rank (docs/time-model.md §10).
                struct FirstVpp {
                  bool fits = false;
                  double score = 0, tokens_per_second = 0, factor = 1;
                };
                std::array<FirstVpp, 4> first{};
               for (int64_t vpp : vpps) {
                for (int64_t mb = pin.micro_batch.value_or(1); mb <= pin.micro_batch.value_or(8); mb *= 2) {
                  if (mb * dp > gb_base && mb > 1 && !pin.micro_batch) {
                    break;
                  }
                  const std::size_t mi = pin.micro_batch ? 0 : static_cast<std::size_t>(std::countr_zero(static_cast<uint64_t>(mb)));
                  if (vpp != vpps.front()) {
                    const FirstVpp& b = first[mi];
                    if (!b.fits) {
                      break;  // it did not fit with fewer virtual stages: more hold more in flight
                    }
                    const double lb = b.score * b.factor;
                    bool could = best.size() < keep || lb < best.back().score || any_shape.size() < keep ||
                                 lb < any_shape.back().score || !per_gpu[gi] || lb < per_gpu[gi]->score;
                    if (!could && o.keep_extra > 0) {
                      const auto f = fastest.find({gi, count});
                      could = f == fastest.end() || b.tokens_per_second / b.factor > f->second.time.tokens_per_second;
                    }
                    if (!could) {
                      continue;  // even with no bubble and no pipeline transfers it would not rank
                    }
                  }
                  Workload w = base;
                  w.recompute = rc;
                  w.micro_batch = mb;
                  const int64_t unit = mb * dp;
                  w.global_batch = (gb_base + unit - 1) / unit * unit;
                  Layout l;
                  l.gpus = count;
                  l.tp = tp;
                  l.pp = pp;
                  l.ep = ep;
                  l.vpp = vpp;
                  l.cp = cp;
                  l.zero = zero;
                  l.sp = sp;
                  l.offload_optimizer = pin.offload_optimizer.value_or(false);
                  l.offload_params = pin.offload_params.value_or(false);
                  MemoryEstimate mem = EstimateMemory(sum, w, l, o.overhead, std::nullopt);
                  ++r.evaluated;
                  const double used = mem.per_gpu.Total().value;
                  if (used > capacity) {
                    closest_ratio = std::min(closest_ratio, used / capacity);
                    if (closest_ratio == used / capacity) {
                      r.closest = std::to_string(count) + " x " + gpu->name + " (tp=" + std::to_string(tp) +
                                  " pp=" + std::to_string(pp) + " zero=" + std::to_string(zero) + ", recompute " +
                                  ToString(rc) + ", micro-batch " + std::to_string(mb) + ") needs " +
                                  std::to_string(static_cast<int>(std::lround(100.0 * used / static_cast<double>(gpu->memory_bytes)))) +
                                  "% of the card's memory";
                    }
                    break;  // larger micro-batches need more memory still
                  }
                  ++r.fitting;
                  Candidate c;
                  c.gpu = gpu;
                  c.workload = w;
                  c.layout = l;
                  c.time = EstimateTrainingTime(sum, mem, w, l, *gpu, o.time, o.tokens);
                  const double tokens = o.tokens > 0 ? o.tokens : 1e6;
                  const auto price = o.price_per_card_hour.find(gpu);
                  c.cost.amount = tokens / c.time.tokens_per_second / 3600.0 * static_cast<double>(count) *
                               (price != o.price_per_card_hour.end() ? price->second : gpu->price_cny_per_card_hour);
                  c.cost_per = o.tokens > 0 ? "job" : "1M tokens";
                  c.score = Score(c, o.objective, o.tokens);
                  if (vpp == vpps.front()) {
                    const double step = c.time.step_seconds;
                    first[mi] = {true, c.score, c.time.tokens_per_second,
                                 step > 0 ? std::max(0.0, step - c.time.bubble_seconds - c.time.pp_seconds) / step : 1.0};
                  }
                  if (!per_gpu[gi] || c.score < per_gpu[gi]->score) {
                    per_gpu[gi] = c;
                    per_gpu[gi]->memory = mem;
                  }
                  if (o.keep_extra > 0) {
                    auto f = fastest.find({gi, count});
                    if (f == fastest.end() || c.time.tokens_per_second > f->second.time.tokens_per_second) {
                      Candidate& slot = fastest[{gi, count}];
                      slot = c;
                      slot.memory = mem;
                    }
                  }
                  if (any_shape.size() < keep || c.score < any_shape.back().score) {
                    Candidate copy = c;
                    copy.memory = mem;
                    any_shape.insert(std::upper_bound(any_shape.begin(), any_shape.end(), copy, by_score),
                                     std::move(copy));
                    if (any_shape.size() > keep) {
                      any_shape.pop_back();
                    }
                  }
                  if (best.size() < keep || c.score < best.back().score) {
                    // One entry per structural layout (card, tp, pp): the best of its counts,
                    // ZeRO stages, micro-batches and recomputation settings.
                    auto same = std::find_if(best.begin(), best.end(), [&](const Candidate& b) {
                      return b.gpu == gpu && b.layout.tp == tp && b.layout.pp == pp && b.layout.cp == cp;
                    });
                    if (same != best.end()) {
                      if (same->score <= c.score) {
                        continue;
                      }
                      best.erase(same);
                    }
                    c.memory = std::move(mem);
                    best.insert(std::upper_bound(best.begin(), best.end(), c,
                                                 [](const Candidate& a, const Candidate& b) { return a.score < b.score; }),
                                std::move(c));
                    if (best.size() > keep) {
                      best.pop_back();
                    }
                  }
                }
               }
              }
            }
          }
         }
        }
      }
    }
  }
  if (o.progress) {
    o.progress(1.0);
  }
  if (r.evaluated == 0) {
    r.closest = "no layout of " + std::to_string(counts.empty() ? 0 : counts.back()) +
                " GPUs or fewer satisfies the given options (" + pin.Describe() + ") for " + m.name +
                " (tp must divide the " + std::to_string(m.heads) + " heads and the GPU count, pp at most " +
                std::to_string(m.layers) + " layers)";
  }
  // Fewer shapes than rows (tp and pp pinned, one card): the next layouts of the same shapes.
  for (auto& c : any_shape) {
    if (best.size() >= keep) {
      break;
    }
    if (std::none_of(best.begin(), best.end(), [&](const Candidate& b) { return SameLayout(b, c); })) {
      best.insert(std::upper_bound(best.begin(), best.end(), c, by_score), std::move(c));
    }
  }
  r.ranked = std::move(best);
  for (auto& c : per_gpu) {
    if (c) {
      r.best_per_gpu.push_back(std::move(*c));
    }
  }
  for (auto& [key, c] : fastest) {
    r.fastest_per_count.push_back(std::move(c));
  }
  std::stable_sort(r.best_per_gpu.begin(), r.best_per_gpu.end(), by_score);
  if (o.each_card) {
    for (const Candidate& c : r.best_per_gpu) {
      if (std::none_of(r.ranked.begin(), r.ranked.end(), [&](const Candidate& x) { return x.gpu == c.gpu; })) {
        r.ranked.insert(std::upper_bound(r.ranked.begin(), r.ranked.end(), c, by_score), c);
      }
    }
  }
  return r;
}

bool SameLayout(const Candidate& a, const Candidate& b) {
  const Layout& x = a.layout;
  const Layout& y = b.layout;
  return a.gpu == b.gpu && x.gpus == y.gpus && x.tp == y.tp && x.pp == y.pp && x.cp == y.cp && x.ep == y.ep &&
         x.vpp == y.vpp && x.zero == y.zero && x.sp == y.sp && a.workload.micro_batch == b.workload.micro_batch &&
         a.workload.recompute == b.workload.recompute;
}

std::string WhyLost(const Candidate& c, const Candidate& best, Objective objective) {
  const double worse = 100.0 * (c.score / best.score - 1.0);
  char buf[256];
  std::string what;
  switch (objective) {
    case Objective::kTime: what = "slower"; break;
    case Objective::kGpuHours: what = "more GPU-hours"; break;
    case Objective::kCost: what = "more expensive"; break;
  }
  const TrainingTime& a = c.time;
  const TrainingTime& b = best.time;
  // Name the component that grew most per token.
  const double scale_a = 1.0 / (a.tokens_per_second * a.step_seconds);  // per token
  const double scale_b = 1.0 / (b.tokens_per_second * b.step_seconds);
  struct Part {
    const char* name;
    double mine;  // seconds per step of this candidate
    double best;  // and of the best one
    double diff;  // per token
  };
  auto part = [&](const char* name, double mine, double theirs) {
    return Part{name, mine, theirs, mine * scale_a - theirs * scale_b};
  };
  const Part parts[] = {
      part("compute", a.compute_seconds, b.compute_seconds),
      part("communication", a.communication_seconds, b.communication_seconds),
      part("pipeline bubble", a.bubble_seconds, b.bubble_seconds),
  };
  const Part* top = &parts[0];
  for (const auto& p : parts) {
    if (p.diff > top->diff) {
      top = &p;
    }
  }
  if (objective == Objective::kTime && c.layout.gpus < best.layout.gpus) {
    std::snprintf(buf, sizeof buf, "%.0f%% %s: %lld GPUs instead of %lld", worse, what.c_str(),
                  static_cast<long long>(c.layout.gpus), static_cast<long long>(best.layout.gpus));
  } else if (top->diff > 0) {
    std::snprintf(buf, sizeof buf, "%.0f%% %s: more %s (%.2f s vs %.2f s per step)", worse, what.c_str(), top->name,
                  top->mine, top->best);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f%% %s on %lld x %s", worse, what.c_str(),
                  static_cast<long long>(c.layout.gpus), c.gpu->name.c_str());
  }
  return buf;
}

}  // namespace gpuplan

namespace gpuplan {

InferencePlan PlanInference(const ModelSpec& m, const Workload& base, const Layout& replica, const Gpu& gpu,
                            const TimeConfig& t, const OverheadConfig& o_in, int64_t prompt_tokens, int64_t output_tokens,
                            double qps, double latency_ms) {
  InferencePlan p;
  p.gpu = &gpu;
  p.layout = replica;
  Workload probe = base;
  OverheadConfig o = o_in;
  std::vector<std::string> card_notes;
  FrameworkForCard(gpu, m, replica, probe, o, &card_notes);
  p.workload = probe;
  probe.context = std::max<int64_t>(base.context, prompt_tokens + output_tokens);
  const MemoryEstimate first = EstimateMemory(m, probe, replica, o, gpu.memory_bytes);
  int64_t max_c = first.max_concurrency.value_or(0);
  // §5.2 a server whose engine preempts when its KV pool runs short admits on the tokens a
  // sequence holds now: with requests at every stage of their output it keeps more in flight
  // than hold their full length at once (a reserving engine, exactly those).
  if (first.kv_cache_tokens && o.framework.kv_overflow != KvOverflow::kUnlimited && max_c >= 1) {
    KvPool pool;
    pool.tokens = static_cast<double>(*first.kv_cache_tokens);
    pool.block_tokens = first.server_block_tokens.value_or(1);
    pool.policy = o.framework.kv_overflow;
    p.kv_overflow = ToString(pool.policy);
    p.kv_in_flight = static_cast<int64_t>(SteadyInFlight(pool, prompt_tokens, output_tokens));
    KvPool whole = pool;
    whole.policy = KvOverflow::kReserve;
    p.kv_full_length = static_cast<int64_t>(SteadyInFlight(whole, prompt_tokens, output_tokens));
    max_c = std::max(max_c, p.kv_in_flight);
  }
  // §5 a server whose scheduler runs at most max_num_seqs sequences (vLLM) never has more in
  // flight, however many the KV space would hold.
  bool scheduler_capped = false;
  if (o.framework.max_num_seqs_runs && o.framework.max_num_seqs > 0 && max_c > o.framework.max_num_seqs) {
    max_c = o.framework.max_num_seqs;
    scheduler_capped = true;
  }
  p.fits = max_c >= 1;
  if (!p.fits) {
    p.memory = first;
    p.memory.notes.insert(p.memory.notes.begin(), card_notes.begin(), card_notes.end());
    p.meets_latency = false;
    return p;
  }
  // §5.3 an engine that runs prompt tokens inside its decode steps (vLLM V1), within the step's
  // token budget (max_num_batched_tokens, the profile's or --batched-tokens).
  TimeConfig tm = t;
  if (o.framework.mixed_batches) {
    tm.mixed_step_tokens = probe.batched_tokens;
  }
  auto step_at = [&](int64_t c) {
    Workload w = probe;
    w.concurrency = c;
    return EstimateInferenceTime(m, w, replica, gpu, tm, prompt_tokens, output_tokens);
  };
  // The per-token latency: the step the engine runs (with its prompt tokens where it mixes them).
  auto token_seconds = [](const InferenceTime& it) { return it.mixed ? it.mixed_step_seconds : it.decode_step_seconds; };
  int64_t c = std::min(base.concurrency, max_c);
  if (qps > 0) {
    c = max_c;  // the most sequences in flight amortise the weight reads over the most tokens
  }
  p.max_concurrency = max_c;
  p.scheduler_cap = scheduler_capped ? max_c : 0;
  bool latency_capped = false;
  if (latency_ms > 0) {
    const double target = latency_ms / 1000.0;
    if (token_seconds(step_at(1)) > target) {
      p.meets_latency = false;
      c = 1;
    } else if (token_seconds(step_at(c)) > target) {
      int64_t lo = 1;  // meets
      int64_t hi = c;  // does not
      while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (token_seconds(step_at(mid)) <= target ? lo : hi) = mid;
      }
      c = lo;
      latency_capped = true;
    }
  }
  p.workload = probe;
  p.workload.concurrency = c;
  p.memory = EstimateMemory(m, p.workload, replica, o, gpu.memory_bytes);
  p.memory.notes.insert(p.memory.notes.begin(), card_notes.begin(), card_notes.end());
  p.time = step_at(c);
  // §5 continuous batching: a replica spends prefill + O x step / c seconds of its GPUs on each
  // request, so it serves 1 / that requests per second (InferenceTime::requests_per_second).
  // (1e-9: a rate that is an exact multiple of one replica's must not round up to one more)
  p.replicas = qps > 0 ? static_cast<int64_t>(std::ceil(qps / p.time.requests_per_second - 1e-9)) : 1;
  p.replicas = std::max<int64_t>(p.replicas, 1);
  p.gpus_total = p.replicas * replica.tp * replica.pp;
  p.cost_per_hour.amount = static_cast<double>(p.gpus_total) * gpu.price_cny_per_card_hour;
  if (qps > 0) {
    // §5.4 the offered load, spread over the replicas: the least fixed point of Little's law
    // L = lambda x (prefill + O x t(L)), from L = 1 up (t grows with L, so the iteration climbs
    // to it); at most the concurrency sized for. t is the time between a sequence's tokens: the
    // step, divided by the share of the replica's time left to decoding, 1 - lambda x prefill,
    // where the engine runs prefills as passes of their own.
    const double lambda = qps / static_cast<double>(p.replicas);
    const double out = static_cast<double>(std::max<int64_t>(output_tokens, 1));
    const auto between_tokens = [&](const InferenceTime& at) {
      const double prefilling = at.mixed ? 0.0 : std::min(lambda * at.prefill_seconds, 0.99);
      return token_seconds(at) / (1.0 - prefilling);
    };
    double in_flight = 1;
    InferenceTime at = step_at(1);
    for (int i = 0; i < 64; ++i) {
      const double next = lambda * (at.prefill_seconds + out * between_tokens(at));
      if (next >= static_cast<double>(c)) {
        in_flight = static_cast<double>(c);
        at = p.time;
        break;
      }
      const bool settled = std::fabs(next - in_flight) < 1e-3;
      in_flight = next;
      const int64_t whole = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(in_flight - 1e-9)));
      at = step_at(whole);
      if (settled) {
        break;
      }
    }
    p.load_in_flight = in_flight;
    p.at_load = at;
    p.load_token_seconds = between_tokens(at);
  }
  // §5 the bound: what a replica's time per request is made of, and what stops it shrinking.
  const InferenceTime& it = p.time;
  const double per_seq = static_cast<double>(output_tokens) / static_cast<double>(c);
  const double decode = it.decode_step_seconds * per_seq;
  p.prefill_share = it.prefill_seconds / it.replica_seconds_per_request;
  double compute = it.prefill_seconds + (it.memory_bound ? 0.0 : decode);
  double memory = it.memory_bound ? decode : 0.0;
  if (it.mixed) {
    // §5.3 one pass a step: its matmuls (decode and prompt tokens) against its reads.
    p.prefill_share = it.mixed_prefill_seconds / it.mixed_step_seconds;
    compute = it.decode_compute_seconds + it.mixed_prefill_seconds;
    memory = it.decode_weight_seconds + it.decode_kv_seconds;
  }
  if (!p.meets_latency) {
    p.bound = "latency";
  } else if (compute >= memory) {
    p.bound = "compute";
  } else if (it.decode_kv_seconds >= it.decode_weight_seconds) {
    p.bound = "memory bandwidth";  // the KV reads grow with the concurrency: more would not help
  } else if (latency_capped) {
    p.bound = "latency";
  } else if (c == max_c) {
    p.bound = scheduler_capped ? "scheduler (max_num_seqs)" : "KV capacity";
  } else {
    p.bound = "memory bandwidth";  // at the concurrency asked for (--concurrency)
  }
  return p;
}

InferenceSearch SearchInference(const ModelSpec& m, const Workload& base, const SearchOptions& o,
                                int64_t prompt_tokens, int64_t output_tokens, double qps, double latency_ms) {
  InferenceSearch r;
  std::vector<InferencePlan> ok;
  double closest = 1e300;
  const SearchPins& pin = o.pinned;
  CheckPins(pin);
  const int64_t pp = pin.pp.value_or(1);
  std::vector<int64_t> tps;
  if (pin.tp) {
    tps.push_back(*pin.tp);
  } else if (pin.gpus) {
    if (*pin.gpus % pp == 0) {
      tps.push_back(*pin.gpus / pp);
    }
  } else {
    for (int64_t tp = 1; tp * pp <= std::min<int64_t>(o.time.gpus_per_node, o.max_gpus); tp *= 2) {
      tps.push_back(tp);
    }
  }
  for (const Gpu* gpu : o.gpus) {
    if (!HasPeakFlops(*gpu, Precision::kBf16)) {
      r.notes.push_back(gpu->name + ": not searched, the catalog has no bf16/fp16 TFLOPS figure for it");
      continue;
    }
    for (int64_t tp : tps) {
      CheckWorkBudget();
      if (tp <= 0 || m.heads % tp != 0 || pp > m.layers || (pin.gpus && tp * pp != *pin.gpus)) {
        continue;
      }
      const Workload wc = ForCard(base, *gpu);
      if (!CardRuns(*gpu, wc)) {
        continue;  // e.g. fp8 weights on a card without fp8
      }
      Layout l;
      l.gpus = tp * pp;
      l.tp = tp;
      l.pp = pp;
      ++r.evaluated;
      InferencePlan p = PlanInference(m, wc, l, *gpu, o.time, o.overhead, prompt_tokens, output_tokens, qps, latency_ms);
      if (!p.fits || !p.meets_latency || p.gpus_total > o.max_gpus) {
        const double ratio = p.memory.per_gpu.Total().value / static_cast<double>(gpu->memory_bytes);
        if (ratio < closest) {
          closest = ratio;
          r.closest = std::to_string(l.gpus) + " x " + gpu->name + ": " +
                      (!p.fits ? "one sequence does not fit next to the weights"
                               : !p.meets_latency ? "per-token latency above the target even at concurrency 1"
                                                  : "needs " + std::to_string(p.gpus_total) +
                                                        " GPUs, more than --max-gpus");
        }
        continue;
      }
      ok.push_back(std::move(p));
    }
  }
  if (r.evaluated == 0) {
    r.closest = "no replica layout satisfies the given options (" + pin.Describe() + ") for " + m.name;
  }
  auto score = [&](const InferencePlan& p) {
    switch (o.objective) {
      // The per-token latency a request sees: at the offered load when a QPS is given (§5.4).
      case Objective::kTime: return qps > 0 ? p.load_token_seconds : p.time.decode_step_seconds;
      case Objective::kGpuHours: return static_cast<double>(p.gpus_total);
      case Objective::kCost: return p.cost_per_hour.amount;
    }
    return p.cost_per_hour.amount;
  };
  std::stable_sort(ok.begin(), ok.end(), [&](const auto& a, const auto& b) { return score(a) < score(b); });
  for (const auto& p : ok) {
    if (std::none_of(r.best_per_gpu.begin(), r.best_per_gpu.end(),
                     [&](const InferencePlan& b) { return b.gpu == p.gpu; })) {
      r.best_per_gpu.push_back(p);
    }
  }
  if (ok.size() > o.top + kRunnersUp) {
    ok.resize(o.top + kRunnersUp);
  }
  if (o.each_card) {
    for (const InferencePlan& p : r.best_per_gpu) {
      if (std::none_of(ok.begin(), ok.end(), [&](const InferencePlan& x) { return x.gpu == p.gpu; })) {
        ok.push_back(p);  // best_per_gpu is in score order, so ok stays sorted
      }
    }
  }
  r.ranked = std::move(ok);
  return r;
}

}  // namespace gpuplan
