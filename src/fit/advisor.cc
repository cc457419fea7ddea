#include "fit/advisor.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "core/error.h"

namespace gpuplan {
namespace {

struct Change {
  std::string text;  // the flags to add to the user's command (a change of --gpus is appended once, after all)
  int disruption;
  std::function<bool(Workload&, Layout&, const Gpu*&)> apply;  // false: not applicable
  std::string family = {};  // changes of one family: only the mildest that fits is shown (default: text's flag)
};

// Candidates are listed mildest first within a family (e.g. micro-batch 8, 4, 2, 1), so the
// first one of a family that fits is the one to suggest.
std::vector<Change> CandidateChanges(const ModelSpec& m, const Workload& w0, const Layout& l0, const Gpu& gpu0,
                                     const GpuCatalog& cat, std::optional<int64_t> max_concurrency) {
  std::vector<Change> c;
  const bool train = IsTraining(w0.task);
  if (train) {
    if (w0.recompute == Recompute::kNone && !w0.flash_attn) {
      c.push_back({"--recompute selective", 1, [](Workload& w, Layout&, const Gpu*&) {
                     w.recompute = Recompute::kSelective;
                     return true;
                   }});
    }
    if (!w0.flash_attn) {
      c.push_back({"--flash-attn on", 1, [](Workload& w, Layout&, const Gpu*&) {
                     w.flash_attn = true;
                     return true;
                   }});
    }
    if (w0.recompute != Recompute::kFull) {
      c.push_back({"--recompute full", 2, [](Workload& w, Layout&, const Gpu*&) {
                     w.recompute = Recompute::kFull;
                     return true;
                   }});
    }
    for (int64_t mb = w0.micro_batch / 2; mb >= 1; mb /= 2) {
      c.push_back({"--micro-batch " + std::to_string(mb), 2, [mb](Workload& w, Layout&, const Gpu*&) {
                     w.micro_batch = mb;  // a given global batch still divides: mb halves
                     return true;
                   }});
    }
    for (int z = l0.zero + 1; z <= 3 && l0.dp() > 1; ++z) {
      c.push_back({"--zero " + std::to_string(z), 2, [z](Workload&, Layout& l, const Gpu*&) {
                     l.zero = z;
                     return true;
                   }});
    }
    // Context parallelism on the same GPUs: each sequence split over cp ranks (long sequences).
    for (int64_t cp = 2; l0.cp == 1 && w0.seq >= kCpFromSeq && cp <= kMaxCp && w0.seq % (2 * cp) == 0; cp *= 2) {
      if (l0.gpus % (l0.tp * l0.pp * cp) != 0) {
        continue;
      }
      c.push_back({"--cp " + std::to_string(cp), 3, [cp](Workload&, Layout& l, const Gpu*&) {
                     l.cp = cp;
                     return true;
                   }});
    }
    if (w0.optimizer == Optimizer::kAdamW) {
      c.push_back({"--optimizer adamw8bit", 3, [](Workload& w, Layout&, const Gpu*&) {
                     w.optimizer = Optimizer::kAdamW8bit;
                     return true;
                   }});
    }
    if (!l0.offload_optimizer) {
      c.push_back({"--offload-optimizer (ZeRO-Offload to CPU RAM)", 4, [](Workload&, Layout& l, const Gpu*&) {
                     l.offload_optimizer = true;
                     return true;
                   }});
    }
    // ZeRO-3 over a larger data-parallel group: more GPUs (the --gpus they need is appended).
    for (int64_t n = 2; n <= 64; n *= 2) {
      if (n <= l0.dp()) {
        continue;
      }
      c.push_back({"--zero 3 (sharded over " + std::to_string(n) + " data-parallel ranks)",
                   4 + static_cast<int>(n / 8),
                   [n](Workload&, Layout& l, const Gpu*&) {
                     l.gpus = n * l.tp * l.pp * l.cp;
                     l.zero = 3;
                     return true;
                   },
                   "--zero (more GPUs)"});
    }
    if (w0.task == Task::kFull || w0.task == Task::kPretrain) {
      c.push_back({"--task lora (rank " + std::to_string(w0.lora_rank) + ")", 6, [](Workload& w, Layout&, const Gpu*&) {
                     w.task = Task::kLora;
                     return true;
                   }});
    }
    if (w0.task != Task::kQlora) {
      c.push_back({"--task qlora", 7, [](Workload& w, Layout&, const Gpu*&) {
                     w.task = Task::kQlora;
                     w.paged_optimizer = true;
                     return true;
                   }});
    }
  } else {
    if (w0.kv_dtype != KvDtype::kFp8 && CardRuns(gpu0, KvDtype::kFp8)) {
      c.push_back({"--kv-dtype fp8", 2, [](Workload& w, Layout&, const Gpu*&) {
                     w.kv_dtype = KvDtype::kFp8;
                     return true;
                   }});
    }
    const std::vector<std::pair<WeightDtype, int>> dtypes = {
        {WeightDtype::kFp8, 3}, {WeightDtype::kInt8, 4}, {WeightDtype::kInt4, 5}};
    for (const auto& [d, cost] : dtypes) {
      if (static_cast<int>(d) > static_cast<int>(w0.weight_dtype) && CardRuns(gpu0, d)) {
        c.push_back({std::string("--weight-dtype ") + ToString(d), cost, [d = d](Workload& w, Layout&, const Gpu*&) {
                       w.weight_dtype = d;
                       return true;
                     }});
      }
    }
    if (max_concurrency && *max_concurrency >= 1 && *max_concurrency < w0.concurrency) {
      const int64_t n = *max_concurrency;
      c.push_back({"--concurrency " + std::to_string(n) + " (the most that fits)", 3,
                   [n](Workload& w, Layout&, const Gpu*&) {
                     w.concurrency = n;
                     return true;
                   }});
    }
    for (int64_t ctx = w0.context / 2; ctx >= 1024; ctx /= 2) {
      c.push_back({"--context " + std::to_string(ctx), 4, [ctx](Workload& w, Layout&, const Gpu*&) {
                     w.context = ctx;
                     return true;
                   }});
    }
  }
  // Tensor or pipeline parallelism on the same GPUs, the data-parallel group shrinking (what
  // `--tp N` added to the user's command does: dp = gpus / (tp x pp x cp)); no card is added.
  for (int64_t tp = l0.tp * 2; tp <= 8; tp *= 2) {
    if (m.heads % tp != 0 || l0.dp() % (tp / l0.tp) != 0) {
      continue;
    }
    c.push_back({"--tp " + std::to_string(tp), 3 + static_cast<int>(tp / 4), [tp](Workload&, Layout& l, const Gpu*&) {
                   l.tp = tp;
                   return true;
                 }});
  }
  for (int64_t pp = l0.pp * 2; pp <= 16 && pp <= m.layers; pp *= 2) {
    if (l0.dp() % (pp / l0.pp) != 0) {
      continue;
    }
    c.push_back({"--pp " + std::to_string(pp), 4 + static_cast<int>(pp / 4), [pp](Workload&, Layout& l, const Gpu*&) {
                   l.pp = pp;
                   return true;
                 }});
  }
  // The same, over more cards of the same kind: the data-parallel group kept.
  for (int64_t tp = l0.tp * 2; tp <= 8; tp *= 2) {
    if (m.heads % tp != 0) {
      continue;
    }
    c.push_back({"--tp " + std::to_string(tp), 5 + static_cast<int>(tp / 2),
                 [tp](Workload&, Layout& l, const Gpu*&) {
                   l.gpus = l.gpus / l.tp * tp;
                   l.tp = tp;
                   return true;
                 },
                 "--tp (more GPUs)"});
  }
  for (int64_t pp = l0.pp * 2; pp <= 16 && pp <= m.layers; pp *= 2) {
    c.push_back({"--pp " + std::to_string(pp), 6 + static_cast<int>(pp / 2),
                 [pp](Workload&, Layout& l, const Gpu*&) {
                   l.gpus = l.gpus / l.pp * pp;
                   l.pp = pp;
                   return true;
                 },
                 "--pp (more GPUs)"});
  }
  // A card with more memory, same layout.
  std::vector<const Gpu*> by_memory;
  for (const auto& g : cat.gpus()) {
    by_memory.push_back(&g);
  }
  std::stable_sort(by_memory.begin(), by_memory.end(),
                   [](const Gpu* a, const Gpu* b) { return a->memory_bytes < b->memory_bytes; });
  for (const Gpu* gp : by_memory) {
    const Gpu& g = *gp;
    c.push_back({"--gpu \"" + g.name + "\"", 5, [&g](Workload& w, Layout&, const Gpu*& gpu) {
                   if (g.memory_bytes <= gpu->memory_bytes) {
                     return false;
                   }
                   w = ForCard(w, g);
                   if (!CardRuns(g, w)) {
                     return false;  // e.g. fp8 weights on a card without fp8
                   }
                   gpu = &g;
                   return true;
                 }});
  }
  return c;
}

}  // namespace

std::string DescribeLayout(const Workload& w, const Layout& l, const Gpu& gpu) {
  std::string s = std::to_string(l.gpus) + " x " + gpu.name + " (tp=" + std::to_string(l.tp) +
                  " pp=" + std::to_string(l.pp) + (l.cp > 1 ? " cp=" + std::to_string(l.cp) : "") +
                  " dp=" + std::to_string(l.dp());
  if (IsTraining(w.task)) {
    s += " zero=" + std::to_string(l.zero) + "), " + ToString(w.task) + ", recompute " + ToString(w.recompute) +
         ", micro-batch " + std::to_string(w.micro_batch) + ", " + ToString(w.optimizer);
    if (l.offload_optimizer) {
      s += ", optimizer offloaded";
    }
  } else {
    s += "), weights " + std::string(ToString(w.weight_dtype)) + ", kv " + ToString(w.kv_dtype) + ", context " +
         std::to_string(w.context) + ", concurrency " + std::to_string(w.concurrency);
  }
  return s;
}

bool CardRuns(const Gpu& gpu, WeightDtype d) {
  switch (d) {
    case WeightDtype::kFp32: return true;
    case WeightDtype::kBf16: return gpu.Supports("bf16");
    case WeightDtype::kFp16: return gpu.Supports("fp16");
    case WeightDtype::kFp8: return gpu.Supports("fp8");
    case WeightDtype::kInt8:
    case WeightDtype::kInt4: return true;  // weight-only: dequantised to the card's 16-bit type
  }
  return false;
}

bool CardRuns(const Gpu& gpu, KvDtype d) {
  switch (d) {
    case KvDtype::kBf16: return gpu.Supports("bf16");
    case KvDtype::kFp16: return gpu.Supports("fp16");
    case KvDtype::kFp8: return gpu.Supports("fp8");
  }
  return false;
}

bool CardRuns(const Gpu& gpu, Precision p) {
  switch (p) {
    case Precision::kFp32: return true;
    case Precision::kMixed: return gpu.Supports("bf16") || gpu.Supports("fp16");
    case Precision::kBf16: return gpu.Supports("bf16");
  }
  return false;
}

const char* HalfDtype(const Gpu& gpu) { return gpu.Supports("bf16") ? "bf16" : "fp16"; }

Workload ForCard(const Workload& w0, const Gpu& gpu, std::vector<std::string>* notes) {
  Workload w = w0;
  auto note = [&](const std::string& n) {
    if (notes != nullptr) {
      notes->push_back(n);
    }
  };
  const bool bf16 = gpu.Supports("bf16");
  if (IsTraining(w.task)) {
    if (w.precision == Precision::kMixed && !bf16) {
      note(gpu.name + " has no bf16 (bf16 arrived with Ampere): mixed precision runs as fp16 autocast with loss "
                      "scaling; memory is the same");
    } else if (w.precision == Precision::kBf16 && !bf16) {
      note(gpu.name + " has no bf16 (bf16 arrived with Ampere): pure bf16 training does not run on it; use "
                      "--precision mixed (fp16 with loss scaling, fp32 master weights)");
    }
    return w;
  }
  if (w.weight_dtype == WeightDtype::kBf16 && !bf16 && gpu.Supports("fp16")) {
    w.weight_dtype = WeightDtype::kFp16;
    note(gpu.name + " has no bf16 (bf16 arrived with Ampere): weights in fp16, the same 2 bytes");
  }
  if (w.kv_dtype == KvDtype::kBf16 && !bf16 && gpu.Supports("fp16")) {
    w.kv_dtype = KvDtype::kFp16;
  }
  if (!CardRuns(gpu, w.weight_dtype)) {
    note(gpu.name + " has no " + ToString(w.weight_dtype) + " (fp8 arrived with Ada and Hopper): the card cannot "
                    "run " + ToString(w.weight_dtype) + " weights; the memory figures are for the bytes alone");
  }
  if (!CardRuns(gpu, w.kv_dtype)) {
    note(gpu.name + " has no " + ToString(w.kv_dtype) + " (fp8 arrived with Ada and Hopper): an fp8 KV cache needs "
                    "a card with fp8");
  }
  return w;
}

void FrameworkForCard(const Gpu& gpu, const ModelSpec& m, const Layout& l, Workload& w, OverheadConfig& o,
                      std::vector<std::string>* notes) {
  if (o.framework.IsGeneric() || IsTraining(w.task)) {
    return;
  }
  CardFramework cf = FrameworkOnCard(o.framework, gpu, m, l.tp, l.pp);
  o.framework = std::move(cf.profile);
  if (!w.batched_tokens_given && o.framework.batched_tokens > 0) {
    w.batched_tokens = o.framework.batched_tokens;
  }
  if (notes != nullptr && !cf.note.empty()) {
    notes->push_back(cf.note);
  }
}

bool CardRuns(const Gpu& gpu, const Workload& w) {
  if (IsTraining(w.task)) {
    // --fp8 runs the GEMMs on fp8 tensor cores (Ada, Hopper, Blackwell): RatesFor refuses others.
    return CardRuns(gpu, w.precision) && (!w.fp8 || gpu.Supports("fp8"));
  }
  return CardRuns(gpu, w.weight_dtype) && CardRuns(gpu, w.kv_dtype);
}

double UsableBytes(const Gpu& gpu, double margin) { return static_cast<double>(gpu.memory_bytes) * (1.0 - margin); }

bool Fits(const MemoryEstimate& e, const Gpu& gpu, double margin) {
  // nvidia_smi is the total of §1-7 plus what a framework profile adds (§8.4).
  const Bytes shown = e.nvidia_smi.value > 0 ? e.nvidia_smi : e.per_gpu.Total();
  return e.server_fits && shown.value <= UsableBytes(gpu, margin);
}

std::vector<Suggestion> SuggestFixes(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                     const GpuCatalog& catalog, const OverheadConfig& o, std::size_t limit) {
  std::optional<int64_t> max_concurrency;
  if (!IsTraining(w.task)) {
    Workload wc = w;
    OverheadConfig oc = o;
    FrameworkForCard(gpu, m, l, wc, oc);
    max_concurrency = EstimateMemory(m, wc, l, oc, gpu.memory_bytes).max_concurrency;
  }
  const std::vector<Change> changes = CandidateChanges(m, w, l, gpu, catalog, max_concurrency);
  std::vector<Suggestion> found;
  std::vector<std::string> families;
  auto try_apply = [&](const std::vector<const Change*>& chs) {
    Workload w2 = w;
    Layout l2 = l;
    const Gpu* g2 = &gpu;
    std::string text;
    std::string family;
    int disruption = 0;
    for (const Change* ch : chs) {
      if (!ch->apply(w2, l2, g2)) {
        return;
      }
      text += (text.empty() ? "" : " + ") + ch->text;
      family += (family.empty() ? "" : "+") + (ch->family.empty() ? ch->text.substr(0, ch->text.find(' ')) : ch->family);
      disruption += ch->disruption;
    }
    // The text is what to add to the user's command: a GPU count that changed is part of it
    // (dp = gpus / (tp x pp x cp)). A global batch the user gave that no longer divides into
    // micro-batch x dp is refused below by EstimateMemory's ValidateLayout, as the CLI would.
    if (l2.gpus != l.gpus) {
      text += " + --gpus " + std::to_string(l2.gpus);
    }
    if (std::find(families.begin(), families.end(), family) != families.end()) {
      return;  // a milder change of the same kind already fits
    }
    try {
      OverheadConfig o2 = o;
      FrameworkForCard(*g2, m, l2, w2, o2);
      MemoryEstimate e = EstimateMemory(m, w2, l2, o2, g2->memory_bytes);
      if (Fits(e, *g2)) {
        families.push_back(family);
        found.push_back({text, DescribeLayout(w2, l2, *g2), disruption, w2, l2, g2, std::move(e)});
      }
    } catch (const InputError&) {
      // An invalid combination (e.g. tp not dividing heads) is simply not a suggestion.
    }
  };
  for (const auto& ch : changes) {
    try_apply({&ch});
  }
  if (found.empty()) {
    for (std::size_t i = 0; i < changes.size(); ++i) {
      for (std::size_t j = i + 1; j < changes.size(); ++j) {
        try_apply({&changes[i], &changes[j]});
      }
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Suggestion& a, const Suggestion& b) {
    if (a.disruption != b.disruption) {
      return a.disruption < b.disruption;
    }
    return a.estimate.per_gpu.Total() < b.estimate.per_gpu.Total();
  });
  if (found.size() > limit) {
    found.resize(limit);
  }
  return found;
}

}  // namespace gpuplan
