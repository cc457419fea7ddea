#include "fit/workload.h"

#include <map>

#include "catalog/model.h"
#include "core/error.h"
#include "core/names.h"

namespace gpuplan {
namespace {

template <typename E>
E ParseEnum(const std::string& s, const std::vector<std::pair<std::string, E>>& table, const std::string& field) {
  const std::string n = NormalizeName(s);
  std::vector<std::string> names;
  for (const auto& [k, v] : table) {
    if (NormalizeName(k) == n) {
      return v;
    }
    names.push_back(k);
  }
  throw InputError("unknown value '" + s + "'; expected " + JoinOr(names), "", 0, field);
}

}  // namespace

bool IsTraining(Task t) { return t != Task::kInfer; }

const char* ToString(Task t) {
  switch (t) {
    case Task::kPretrain: return "pretrain";
    case Task::kFull: return "full";
    case Task::kLora: return "lora";
    case Task::kQlora: return "qlora";
    case Task::kInfer: return "infer";
  }
  return "?";
}
const char* ToString(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kMixed: return "mixed";
    case Precision::kBf16: return "bf16";
  }
  return "?";
}
const char* ToString(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW: return "adamw";
    case Optimizer::kAdamW8bit: return "adamw8bit";
    case Optimizer::kSgd: return "sgd";
    case Optimizer::kAdafactor: return "adafactor";
  }
  return "?";
}
const char* ToString(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}
const char* ToString(WeightDtype d) {
  switch (d) {
    case WeightDtype::kFp32: return "fp32";
    case WeightDtype::kBf16: return "bf16";
    case WeightDtype::kFp16: return "fp16";
    case WeightDtype::kFp8: return "fp8";
    case WeightDtype::kInt8: return "int8";
    case WeightDtype::kInt4: return "int4";
  }
  return "?";
}
const char* ToString(KvDtype d) {
  switch (d) {
    case KvDtype::kBf16: return "bf16";
    case KvDtype::kFp16: return "fp16";
    case KvDtype::kFp8: return "fp8";
  }
  return "?";
}

Task ParseTask(const std::string& s) {
  return ParseEnum<Task>(s,
                         {{"pretrain", Task::kPretrain}, {"full", Task::kFull}, {"lora", Task::kLora},
                          {"qlora", Task::kQlora}, {"infer", Task::kInfer}, {"inference", Task::kInfer},
                          {"finetune", Task::kFull}},
                         "--task");
}
Precision ParsePrecision(const std::string& s) {
  return ParseEnum<Precision>(s,
                              {{"mixed", Precision::kMixed}, {"amp", Precision::kMixed}, {"fp16", Precision::kMixed},
                               {"bf16-mixed", Precision::kMixed}, {"bf16", Precision::kBf16},
                               {"fp32", Precision::kFp32}},
                              "--precision");
}
Optimizer ParseOptimizer(const std::string& s) {
  return ParseEnum<Optimizer>(s,
                              {{"adamw", Optimizer::kAdamW}, {"adam", Optimizer::kAdamW},
                               {"adamw8bit", Optimizer::kAdamW8bit}, {"adamw-8bit", Optimizer::kAdamW8bit},
                               {"sgd", Optimizer::kSgd}, {"adafactor", Optimizer::kAdafactor}},
                              "--optimizer");
}
Recompute ParseRecompute(const std::string& s) {
  return ParseEnum<Recompute>(
      s, {{"none", Recompute::kNone}, {"selective", Recompute::kSelective}, {"full", Recompute::kFull}},
      "--recompute");
}
WeightDtype ParseWeightDtype(const std::string& s) {
  return ParseEnum<WeightDtype>(s,
                                {{"bf16", WeightDtype::kBf16}, {"fp16", WeightDtype::kFp16},
                                 {"fp8", WeightDtype::kFp8}, {"int8", WeightDtype::kInt8},
                                 {"int4", WeightDtype::kInt4}, {"fp32", WeightDtype::kFp32}},
                                "--weight-dtype");
}
KvDtype ParseKvDtype(const std::string& s) {
  return ParseEnum<KvDtype>(s, {{"bf16", KvDtype::kBf16}, {"fp16", KvDtype::kFp16}, {"fp8", KvDtype::kFp8}},
                            "--kv-dtype");
}

void ValidateLayout(const ModelSpec& model, const Workload& w, const Layout& l) {
  auto positive = [](int64_t v, const char* field) {
    if (v <= 0) {
      throw InputError("must be a positive number, got " + std::to_string(v), "", 0, field);
    }
  };
  positive(l.gpus, "--gpus");
  positive(l.tp, "--tp");
  positive(l.pp, "--pp");
  positive(l.ep, "--ep");
  positive(l.vpp, "--vpp");
  positive(w.micro_batch, "--micro-batch");
  if (IsTraining(w.task)) {
    positive(w.seq, "--seq");
  } else {
    positive(w.context, "--context");
    positive(w.concurrency, "--concurrency");
    positive(w.batched_tokens, "--batched-tokens");
  }
  if (w.task == Task::kLora || w.task == Task::kQlora) {
    positive(w.lora_rank, "--lora-rank");
  }
  if (l.gpus % (l.tp * l.pp) != 0) {
    throw InputError(std::to_string(l.gpus) + " GPUs cannot be split into tp=" + std::to_string(l.tp) +
                         " x pp=" + std::to_string(l.pp) + " groups (gpus must be a multiple of tp*pp)",
                     "", 0, "--gpus");
  }
  if (l.zero < 0 || l.zero > 3) {
    throw InputError("ZeRO stage must be 0, 1, 2 or 3", "", 0, "--zero");
  }
  if (model.heads % l.tp != 0) {
    throw InputError(std::to_string(model.heads) + " attention heads cannot be split over tp=" + std::to_string(l.tp),
                     "", 0, "--tp");
  }
  if (l.pp > model.layers) {
    throw InputError("pp=" + std::to_string(l.pp) + " exceeds the model's " + std::to_string(model.layers) + " layers",
                     "", 0, "--pp");
  }
  if (l.ep > 1) {
    if (!model.moe) {
      throw InputError("expert parallelism needs a mixture-of-experts model", "", 0, "--ep");
    }
    if (model.moe->experts % l.ep != 0 || l.dp() % l.ep != 0) {
      throw InputError("ep=" + std::to_string(l.ep) + " must divide both the " + std::to_string(model.moe->experts) +
                           " experts and the data-parallel size " + std::to_string(l.dp()),
                       "", 0, "--ep");
    }
  }
  if (l.sp && l.tp == 1) {
    throw InputError("sequence parallelism needs tp > 1", "", 0, "--sp");
  }
  if (l.offload_params && l.zero != 3) {
    throw InputError("parameter offload needs ZeRO stage 3", "", 0, "--offload-params");
  }
  if (IsTraining(w.task) && w.global_batch > 0 && w.global_batch % (w.micro_batch * l.dp()) != 0) {
    throw InputError("global batch " + std::to_string(w.global_batch) + " is not a multiple of micro-batch x dp = " +
                         std::to_string(w.micro_batch * l.dp()),
                     "", 0, "--global-batch");
  }
}

}  // namespace gpuplan
