#include "fit/workload.h"

#include <map>

#include "catalog/model.h"
#include "core/enum_names.h"
#include "core/error.h"
#include "core/names.h"

namespace gpuplan {
namespace {

// One table per enum (core/enum_names.h): canonical name first, then accepted spellings.
constexpr EnumName<Task> kTasks[] = {{"pretrain", Task::kPretrain}, {"full", Task::kFull}, {"lora", Task::kLora},
                                     {"qlora", Task::kQlora},       {"infer", Task::kInfer}, {"inference", Task::kInfer},
                                     {"finetune", Task::kFull}};
constexpr EnumName<Precision> kPrecisions[] = {{"mixed", Precision::kMixed}, {"bf16", Precision::kBf16},
                                               {"fp32", Precision::kFp32},   {"amp", Precision::kMixed},
                                               {"fp16", Precision::kMixed},  {"bf16-mixed", Precision::kMixed}};
constexpr EnumName<Optimizer> kOptimizers[] = {{"adamw", Optimizer::kAdamW},         {"adamw8bit", Optimizer::kAdamW8bit},
                                               {"sgd", Optimizer::kSgd},             {"adafactor", Optimizer::kAdafactor},
                                               {"adam", Optimizer::kAdamW},          {"adamw-8bit", Optimizer::kAdamW8bit}};
constexpr EnumName<Recompute> kRecomputes[] = {
    {"none", Recompute::kNone}, {"selective", Recompute::kSelective}, {"op", Recompute::kOp},
    {"full", Recompute::kFull}, {"op-selective", Recompute::kOp}};
constexpr EnumName<WeightDtype> kWeightDtypes[] = {{"bf16", WeightDtype::kBf16}, {"fp16", WeightDtype::kFp16},
                                                   {"fp8", WeightDtype::kFp8},   {"int8", WeightDtype::kInt8},
                                                   {"int4", WeightDtype::kInt4}, {"fp32", WeightDtype::kFp32}};
constexpr EnumName<KvDtype> kKvDtypes[] = {{"bf16", KvDtype::kBf16}, {"fp16", KvDtype::kFp16}, {"fp8", KvDtype::kFp8}};

// An enum option's value: ParseEnumName's error, naming the option by its key.
template <typename E, std::size_t N>
E OptionEnum(const EnumName<E> (&table)[N], const std::string& s, const std::string& key) {
  try {
    return ParseEnumName(table, s, key);
  } catch (const InputError& e) {
    throw InputError::Option(key, e.message(), e.suggestions());
  }
}

}  // namespace

bool IsTraining(Task t) { return t != Task::kInfer; }

const char* ToString(Task t) { return NameOf(kTasks, t); }
const char* ToString(Precision p) { return NameOf(kPrecisions, p); }
const char* ToString(Optimizer o) { return NameOf(kOptimizers, o); }
const char* ToString(Recompute r) { return NameOf(kRecomputes, r); }
const char* ToString(WeightDtype d) { return NameOf(kWeightDtypes, d); }
const char* ToString(KvDtype d) { return NameOf(kKvDtypes, d); }

Task ParseTask(const std::string& s) { return OptionEnum(kTasks, s, "task"); }
Precision ParsePrecision(const std::string& s) { return OptionEnum(kPrecisions, s, "precision"); }
Optimizer ParseOptimizer(const std::string& s) { return OptionEnum(kOptimizers, s, "optimizer"); }
Recompute ParseRecompute(const std::string& s) { return OptionEnum(kRecomputes, s, "recompute"); }
std::optional<Recompute> FindRecompute(const std::string& s) { return FindEnumName(kRecomputes, s); }
WeightDtype ParseWeightDtype(const std::string& s) { return OptionEnum(kWeightDtypes, s, "weight_dtype"); }
KvDtype ParseKvDtype(const std::string& s) { return OptionEnum(kKvDtypes, s, "kv_dtype"); }

void ValidateLayout(const ModelSpec& model, const Workload& w, const Layout& l) {
  auto positive = [](int64_t v, const char* field) {
    if (v <= 0) {
      throw InputError::Option(field, "must be a positive number, got " + std::to_string(v));
    }
  };
  positive(l.gpus, "gpus");
  positive(l.tp, "tp");
  positive(l.pp, "pp");
  positive(l.ep, "ep");
  positive(l.vpp, "vpp");
  positive(l.cp, "cp");
  positive(w.micro_batch, "micro_batch");
  if (IsTraining(w.task)) {
    positive(w.seq, "seq");
  } else {
    positive(w.context, "context");
    positive(w.concurrency, "concurrency");
    positive(w.batched_tokens, "batched_tokens");
  }
  if (w.task == Task::kLora || w.task == Task::kQlora) {
    positive(w.lora_rank, "lora_rank");
  }
  if (l.gpus % (l.tp * l.pp * l.cp) != 0) {
    throw InputError::Option("gpus", std::to_string(l.gpus) + " GPUs cannot be split into tp=" + std::to_string(l.tp) +
                         " x pp=" + std::to_string(l.pp) +
                         (l.cp > 1 ? " x cp=" + std::to_string(l.cp) + " groups (gpus must be a multiple of tp*pp*cp)"
                                   : std::string(" groups (gpus must be a multiple of tp*pp)")));
  }
  if (l.cp > 1) {
    // Context parallelism (Megatron-Core, torchtitan): ring attention over sequence chunks, each
    // rank holding 2 of 2 x cp chunks for causal load balance; it needs flash attention.
    if (!IsTraining(w.task)) {
      throw InputError::Option("cp", "context parallelism applies to training");
    }
    if (!w.flash_attn) {
      throw InputError::Option("cp", "context parallelism needs flash attention (`flash_attn` on)");
    }
    if (w.seq % (2 * l.cp) != 0) {
      throw InputError::Option("cp", "`seq` " + std::to_string(w.seq) + " must be a multiple of 2 x cp = " + std::to_string(2 * l.cp) +
                           " (causal load balancing splits each sequence into 2 x cp chunks)");
    }
  }
  if (l.zero < 0 || l.zero > 3) {
    throw InputError::Option("zero", "ZeRO stage must be 0, 1, 2 or 3");
  }
  if (model.heads % l.tp != 0) {
    throw InputError::Option("tp", std::to_string(model.heads) + " attention heads cannot be split over tp=" + std::to_string(l.tp));
  }
  if (l.pp > model.layers) {
    throw InputError::Option("pp", "pp=" + std::to_string(l.pp) + " exceeds the model's " + std::to_string(model.layers) + " layers");
  }
  if (l.ep > 1) {
    if (!model.moe) {
      throw InputError::Option("ep", "expert parallelism needs a mixture-of-experts model");
    }
    if (model.moe->experts % l.ep != 0 || l.dp() % l.ep != 0) {
      throw InputError::Option("ep", "ep=" + std::to_string(l.ep) + " must divide both the " + std::to_string(model.moe->experts) +
                           " experts and the data-parallel size " + std::to_string(l.dp()));
    }
  }
  if (l.sp && l.tp == 1) {
    throw InputError::Option("sp", "sequence parallelism needs tp > 1");
  }
  if (l.offload_params && l.zero != 3) {
    throw InputError::Option("offload_params", "parameter offload needs ZeRO stage 3");
  }
  if (IsTraining(w.task) && w.global_batch > 0 && w.global_batch % (w.micro_batch * l.dp()) != 0) {
    throw InputError::Option("global_batch", "global batch " + std::to_string(w.global_batch) + " is not a multiple of micro-batch x dp = " +
                         std::to_string(w.micro_batch * l.dp()));
  }
}

}  // namespace gpuplan
