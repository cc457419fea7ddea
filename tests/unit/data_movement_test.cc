// Checkpoint size, save, sync and restore times, the Young interval and the dataset upload
// (fit/data_movement.h, docs/data-movement.md), each against figures worked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "fit/data_movement.h"
#include "cost/job_pricing.h"
#include "cost/requests.h"
#include "read/time_text.h"
#include "plan/fit_job.h"
#include "plan/render/fit_job_json.h"
#include "check/render/check_json.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

// Llama-3.1-70B's parameter count as its safetensors index states it (metadata total_size /
// 2 bytes of bf16: 141,107,412,992 / 2).
constexpr double kLlama70BParams = 70553706496.0;
// TCP payload per second of a link: line rate / 8 x 1448 / 1538 (a 1500-byte MTU: 1448 bytes of
// payload after IPv4, TCP and its timestamp option; 1538 bytes on the wire with the Ethernet
// header, FCS, preamble and inter-frame gap).
constexpr double kGbePayload = 1e9 / 8 * 1448.0 / 1538.0;  // 117,685,305.6 B/s

FitJobResult Fit(FitRequest r) {
  return RunFit(r, test::Catalog(), test::DataDir());
}

FitRequest Llama70BFullOn16H100(const std::string& framework) {
  FitRequest r;
  r.model = "Llama-3.1-70B";
  r.task = "full";
  r.gpu = "H100 SXM";
  r.gpus = 16;
  r.tp = 8;
  r.framework = framework;
  return r;
}

TEST(DataMovement, LinkRatesAreLineRatesAndTheirTcpPayload) {
  EXPECT_DOUBLE_EQ(ParseLinkRate("1gbe", "sync_link").bits_per_second, 1e9);
  EXPECT_DOUBLE_EQ(ParseLinkRate("10GbE", "sync_link").bits_per_second, 1e10);
  EXPECT_DOUBLE_EQ(ParseLinkRate("100mbps", "uplink").bits_per_second, 1e8);
  EXPECT_DOUBLE_EQ(ParseLinkRate("2.5gbps", "uplink").bits_per_second, 2.5e9);
  EXPECT_NEAR(ParseLinkRate("1gbe", "sync_link").GoodputBytesPerSecond(), kGbePayload, 1e-3);
  for (const char* bad : {"3gbe", "fast", "0mbps", "-1gbps", "10", "5tbps", "nangbps"}) {
    try {
      ParseLinkRate(bad, "sync_link");
      ADD_FAILURE() << bad << " was taken";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "sync_link") << bad;
    }
  }
}

TEST(DataMovement, A70BFullFineTuneCheckpointAndItsSyncOverOneAndTenGbE) {
  // Megatron with the distributed optimizer saves bf16 weights (2 bytes) beside the fp32 master
  // (4) and Adam's two fp32 moments (8): 14 bytes a parameter, 987.75 GB, every rank its shard:
  // 16 GPUs on 2 nodes write 493.88 GB each.
  FitRequest r = Llama70BFullOn16H100("megatron");
  r.sync_link = "1gbe";
  const CheckpointPlan one = Fit(r).single->checkpoint;
  const double bytes = kLlama70BParams * 14;
  EXPECT_NEAR(one.bytes, bytes, 1);
  EXPECT_NEAR(one.bytes_per_rank, bytes / 16, 1);
  EXPECT_NEAR(one.node_bytes, bytes / 2, 1);
  // 493.876e9 B / 117.685e6 B/s = 4,196.6 s (70 min) over 1 GbE; a tenth over 10 GbE.
  ASSERT_TRUE(one.sync_seconds.has_value());
  EXPECT_NEAR(*one.sync_seconds, 4196.6, 0.1);
  r.sync_link = "10gbe";
  const CheckpointPlan ten = Fit(r).single->checkpoint;
  EXPECT_NEAR(*ten.sync_seconds, 419.66, 0.01);
  // The save at the assumed 16 Gbit/s (2 GB/s) per node: 493.876e9 / 2e9 = 246.9 s; restoring on
  // another node fetches the node's share over the link and loads it: 4,196.6 + 246.9 s.
  EXPECT_NEAR(one.save_seconds, 246.94, 0.01);
  EXPECT_TRUE(one.storage_assumed);
  EXPECT_NEAR(one.restore_seconds, 4196.58 + 246.94, 0.1);
  EXPECT_EQ(one.save_mode, "sharded");
}

TEST(DataMovement, AConsolidatedSaveIsWrittenByOneRank) {
  // Asked for one consolidated file, rank 0 gathers and writes all 987.75 GB: its node writes
  // twice the sharded 493.88 GB, at 2 GB/s in 493.876 s instead of 246.94 s.
  FitRequest r = Llama70BFullOn16H100("megatron");
  r.checkpoint_consolidated = "on";
  const CheckpointPlan c = Fit(r).single->checkpoint;
  EXPECT_EQ(c.save_mode, "rank0");
  EXPECT_NEAR(c.bytes, kLlama70BParams * 14, 1);
  EXPECT_NEAR(c.bytes_per_rank, kLlama70BParams * 14, 1);
  EXPECT_NEAR(c.node_bytes, kLlama70BParams * 14, 1);
  EXPECT_NEAR(c.save_seconds, kLlama70BParams * 14 / 2e9, 1e-6);
}

TEST(DataMovement, WhatEachFrameworkSavesPerTrainedParameter) {
  // DeepSpeed ZeRO-3 saves no bf16 copy by default: the fp32 partitions and the moments, 12 B.
  FitRequest ds = Llama70BFullOn16H100("deepspeed");
  ds.tp = 1;
  ds.zero = 3;
  const CheckpointPlan z3 = Fit(ds).single->checkpoint;
  EXPECT_DOUBLE_EQ(z3.bytes_per_param, 12);
  EXPECT_NEAR(z3.bytes_per_rank, kLlama70BParams * 12 / 16, 1);
  // DeepSpeed ZeRO-1: data-parallel rank 0 writes the whole bf16 model (141.1 GB), each of the 16
  // ranks its sixteenth of the 12-byte optimizer state (52.9 GB): 194.0 GB on rank 0.
  ds.zero = 1;
  const CheckpointPlan z1 = Fit(ds).single->checkpoint;
  EXPECT_DOUBLE_EQ(z1.bytes_per_param, 14);
  EXPECT_NEAR(z1.bytes_per_rank, kLlama70BParams * 2 + kLlama70BParams * 12 / 16, 1);
  // The Trainer of transformers v5 trains a bf16 checkpoint in pure bf16: 2-byte weights and
  // 2 + 2-byte AdamW moments, 6 bytes, all written by rank 0.
  FitRequest hf = Llama70BFullOn16H100("hf-trainer");
  hf.tp = 1;
  hf.zero = 3;
  const CheckpointPlan v5 = Fit(hf).single->checkpoint;
  EXPECT_DOUBLE_EQ(v5.bytes_per_param, 6);
  EXPECT_NEAR(v5.bytes_per_rank, kLlama70BParams * 6, 1);
}

TEST(DataMovement, LoraSavesTheAdaptersOnly) {
  // PEFT keeps the adapters in fp32 under autocast: 4-byte weights + 8 bytes of moments.
  FitRequest r;
  r.model = "Qwen2.5-7B";
  r.task = "lora";
  r.gpu = "A100 80GB SXM";
  r.framework = "peft";
  const FitJobResult f = Fit(r);
  const double adapters = static_cast<double>(f.single->memory.params_trainable);
  EXPECT_LT(adapters, 1e8);  // tens of millions, not billions
  EXPECT_NEAR(f.single->checkpoint.bytes, adapters * 12, 1);
  EXPECT_NEAR(f.single->checkpoint.weights_bytes, adapters * 4, 1);
}

TEST(DataMovement, YoungsIntervalForAStatedFailureRate) {
  // A 300 s save; 64 GPUs failing at 1e-4 per GPU-hour: 6.4e-3 failures an hour, a mean time
  // between failures of 156.25 h = 562,500 s; sqrt(2 x 300 x 562,500) = 18,371.2 s (5.1 h).
  EXPECT_NEAR(YoungIntervalSeconds(300, 562500), 18371.17, 0.01);
  // Lost: 300 / 18,371.2 (saves) + (9,185.6 + 0 + 600) / 562,500 (rework and a 10-minute
  // restart) = 0.016330 + 0.017397 = 0.033727.
  EXPECT_NEAR(LostFraction(300, 18371.17, 0, 600, 562500), 0.033727, 1e-6);
  // Through fit: a stated rate replaces Llama 3's; the job's rate is per GPU-hour x GPUs.
  FitRequest r = Llama70BFullOn16H100("megatron");
  r.failures_per_gpu_hour = 1e-4;
  const CheckpointPlan p = Fit(r).single->checkpoint;
  EXPECT_NEAR(p.failures_per_hour, 16e-4, 1e-12);
  // M = 3600 / 1.6e-3 = 2,250,000 s; C = 246.94 s; sqrt(2 x 246.94 x 2.25e6) = 33,335 s.
  EXPECT_NEAR(*p.interval_seconds, 33335, 1);
  EXPECT_FALSE(p.sync_bound);
}

TEST(DataMovement, ASlowSyncLinkSetsTheInterval) {
  // At 100 Mbit/s a 493.88 GB node share takes 41,966 s to leave the node, longer than Young's
  // 33,335 s: the next checkpoint cannot start before the last one is off the node.
  FitRequest r = Llama70BFullOn16H100("megatron");
  r.failures_per_gpu_hour = 1e-4;
  r.sync_link = "100mbps";
  const CheckpointPlan p = Fit(r).single->checkpoint;
  EXPECT_TRUE(p.sync_bound);
  EXPECT_NEAR(*p.interval_seconds, 41965.8, 0.5);
}

TEST(DataMovement, TwoTerabytesOverAHundredMegabitUplink) {
  // 2e12 B / (1e8 / 8 x 1448 / 1538 B/s = 11,768,530.56 B/s) = 169,944.75 s = 47.2 h.
  DataMovementConfig c;
  c.dataset_bytes = 2e12;
  c.uplink = ParseLinkRate("100mbps", "uplink");
  const DataPlan d = EstimateDataUpload(c);
  ASSERT_TRUE(d.upload_seconds.has_value());
  EXPECT_NEAR(*d.upload_seconds, 169944.75, 0.01);
}

TEST(DataMovement, AsynchronousSavesOnlyWhereTheFrameworkHasThem) {
  FitRequest r = Llama70BFullOn16H100("torchtitan");
  r.tp = 1;
  r.checkpoint_async = "on";
  // torchtitan (FSDP2): fp32 parameters + moments, 12 B, every rank a sixteenth: 52.9 GB copied
  // to host memory over PCIe 5.0 x16 (63.0 GB/s theoretical, 0.8 of it): 1.05 s of waiting.
  const CheckpointPlan p = Fit(r).single->checkpoint;
  EXPECT_TRUE(p.async);
  EXPECT_NEAR(p.bytes_per_rank, kLlama70BParams * 12 / 16, 1);
  EXPECT_NEAR(p.save_seconds, kLlama70BParams * 12 / 16 / (63.015e9 * 0.8), 0.01);
  FitRequest hf = Llama70BFullOn16H100("hf-trainer");
  hf.checkpoint_async = "on";
  try {
    Fit(hf);
    ADD_FAILURE() << "hf-trainer has no asynchronous save";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "checkpoint_async");
  }
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(DataMovement, TheOffersLinkCarriesTheCheckpointAndItsUpgradeIsWeighedInMoney) {
  // tests/fixtures/offers/h100-link-upgrade.yaml: 8-GPU H100 nodes at 400 CNY an hour with a
  // 1 Gbit/s link, a 10 Gbit/s upgrade at 1,500 CNY per instance-month, egress at 0.5 CNY per GB.
  FitRequest r = Llama70BFullOn16H100("megatron");
  r.failures_per_gpu_hour = 1e-4;
  r.tokens = 1e9;
  r.offers = test::Fixture("offers/h100-link-upgrade.yaml");
  r.start = "2027-03-01T09:00";
  const FitJobResult f = Fit(r);
  const CheckpointPlan& c = f.single->checkpoint;
  ASSERT_TRUE(f.job.has_value());
  ASSERT_TRUE(f.job->plan.feasible);
  // The offer's 1 Gbit/s link carries the checkpoint without --sync-link: 4,196.6 s a sync.
  ASSERT_TRUE(c.sync_seconds.has_value());
  EXPECT_NEAR(*c.sync_seconds, 4196.6, 0.1);
  EXPECT_EQ(c.sync_link_source, "offer h100-node");
  // Egress: the trained bf16 weights, 70,553,706,496 x 2 B = 141.107 GB at 0.5 = 70.55 CNY, in the total.
  EXPECT_NEAR(f.egress_gb, 141.107, 0.001);
  EXPECT_NEAR(f.job->plan.cost.egress, 70.5537, 0.001);
  // Lost shares by hand (C = 246.938 s, M = 3600 / (1e-4 x 16) = 2,250,000 s, T = 33,335.5 s):
  //   1 GbE:  C/T + (T/2 + sync 4,196.58 + restore 4,443.52) / M = 0.0074077 + 0.0112479 = 0.0186556
  //   10 GbE: C/T + (T/2 + 419.66 + 666.60) / M               = 0.0074077 + 0.0078906 = 0.0152983
  // Lost hours = H f / (1 - f) for the job's H hours of compute (the time model's, read here).
  const double h = *f.single->training->total_hours;
  EXPECT_NEAR(c.lost_fraction, 0.0186556, 2e-7);
  ASSERT_EQ(f.link_upgrades.size(), 1u);
  const auto& u = f.link_upgrades.front();
  const double saved = h * (0.0186556 / (1 - 0.0186556) - 0.0152983 / (1 - 0.0152983));
  EXPECT_NEAR(u.lost_hours_saved, saved, 1e-4);
  EXPECT_NEAR(u.sync_seconds, 419.66, 0.01);
  // Two instances for 16 GPUs, at 1,500 a month over the job's wall hours (H + lost) / 730.
  EXPECT_EQ(u.instances, 2);
  EXPECT_NEAR(u.cost, 1500.0 * 2 * (h + h * 0.0186556 / (1 - 0.0186556)) / 730.0, 0.01);
  // Worth what those hours cost at the job's price per hour of compute.
  EXPECT_NEAR(u.value, saved * f.job->total.amount / h, 0.01);
  EXPECT_EQ(u.worth_it, u.value > u.cost);
}

TEST(DataMovement, CostOptimizeOnTheFitJsonPricesTheSameEgress) {
  FitRequest r = Llama70BFullOn16H100("megatron");
  r.tokens = 1e9;
  r.offers = test::Fixture("offers/h100-link-upgrade.yaml");
  r.start = "2027-03-01T09:00";
  const FitJobResult f = Fit(r);
  OptimizeRequest o;
  o.offers = r.offers;
  o.usage = "fit.json";
  o.usage_text = FitJobToJson(f).dump();
  const OptimizeResult opt = RunOptimize(o, test::Catalog());
  ASSERT_TRUE(opt.plan.feasible);
  EXPECT_NEAR(opt.plan.cost.egress, 141.107 * 0.5, 0.001);
  EXPECT_NEAR(opt.plan.cost.Total(), f.job->total.amount, 1e-6);
}

TEST(DataMovement, EgressPerMonthIsPricedInCompareAndOptimize) {
  // 100 GB a month over one 730-hour month's trace at 0.5 CNY per GB: 50 CNY in every plan.
  OptimizeRequest o;
  o.offers = test::Fixture("offers/h100-link-upgrade.yaml");
  o.hours_per_month = 100;
  o.gpus = 8;
  o.month = "2027-03";  // 744 hours: 100 GB x 744 / 730 = 101.918 GB
  o.egress_gb_per_month = 100;
  const OptimizeResult opt = RunOptimize(o, test::Catalog());
  ASSERT_TRUE(opt.plan.feasible);
  EXPECT_NEAR(opt.plan.cost.egress, 100.0 * 744 / 730 * 0.5, 1e-6);
}

TEST(DataMovement, WaitingForAReplacementNodeIsPartOfTheRestart) {
  // The 70B job at 1e-4 failures per GPU-hour: M = 3,600 / (1e-4 x 16) = 2,250,000 s. With no
  // sync link the restore is the node's 493.88 GB read at 2 GB/s, 246.94 s, and a spare node is
  // assumed (no wait). Waiting an hour for a replacement adds 3,600 s to every restart, so the
  // lost share grows by 3,600 / 2,250,000 = 0.0016 and the interval (which R does not enter)
  // stays.
  FitRequest r = Llama70BFullOn16H100("megatron");
  r.failures_per_gpu_hour = 1e-4;
  const CheckpointPlan spare = Fit(r).single->checkpoint;
  EXPECT_DOUBLE_EQ(spare.node_wait_seconds, 0);
  EXPECT_NEAR(spare.resume_seconds, 246.94, 0.01);
  r.node_wait_minutes = 60;
  const CheckpointPlan hour = Fit(r).single->checkpoint;
  EXPECT_DOUBLE_EQ(hour.node_wait_seconds, 3600);
  EXPECT_EQ(hour.node_wait_source, "given");
  EXPECT_NEAR(hour.resume_seconds, 3600 + 246.94, 0.01);
  EXPECT_NEAR(hour.lost_fraction - spare.lost_fraction, 3600.0 / 2.25e6, 1e-12);
  EXPECT_DOUBLE_EQ(*hour.interval_seconds, *spare.interval_seconds);

  // Priced on offers that state a replacement within 4 hours, that bound is the wait.
  r.node_wait_minutes.reset();
  r.tokens = 1e9;
  r.start = "2027-03-01T09:00";
  r.offers = "terms.yaml";
  r.offers_text =
      "currency: CNY\n"
      "offers:\n"
      "  - {id: n, provider: p, gpu: H100 SXM, gpus_per_instance: 8, mode: on_demand, price: 400,\n"
      "     terms: {node_replacement_hours: 4}}\n";
  const CheckpointPlan priced = Fit(r).single->checkpoint;
  EXPECT_DOUBLE_EQ(priced.node_wait_seconds, 4 * 3600);
  EXPECT_NE(priced.node_wait_source.find("offer n"), std::string::npos);
  EXPECT_NEAR(priced.lost_fraction - spare.lost_fraction, 14400.0 / 2.25e6, 1e-12);
}

TEST(DataMovement, EverySearchRowCarriesItsLayoutsCheckpoint) {
  // Megatron saves 14 bytes a parameter, sharded over every rank, whatever the layout: 987.75 GB
  // in all, a 1/n share per rank of an n-GPU layout; the JSON's top level has the best row's.
  FitRequest r;
  r.model = "Llama-3.1-70B";
  r.task = "full";
  r.gpu = "H100 SXM";
  r.framework = "megatron";
  r.max_gpus = 32;
  r.max_gpus_given = true;
  r.tokens = 1e9;
  const FitJobResult f = Fit(r);
  ASSERT_TRUE(f.search && f.search->training);
  const auto& ranked = f.search->training->ranked;
  ASSERT_FALSE(ranked.empty());
  ASSERT_EQ(f.candidate_checkpoints.size(), ranked.size());
  const nlohmann::json j = FitJobToJson(f);
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const double gpus = static_cast<double>(ranked[i].layout.gpus);
    const nlohmann::json& c = j["candidates"][i]["checkpoint"];
    EXPECT_NEAR(c["bytes"].get<double>(), kLlama70BParams * 14, 1) << i;
    EXPECT_NEAR(c["bytes_per_rank"].get<double>(), kLlama70BParams * 14 / gpus, 1) << i;
  }
  EXPECT_EQ(j["checkpoint"], j["candidates"][0]["checkpoint"]);
}

TEST(DataMovement, APricedSearchsRowsTakeTheirOffersLinkAndReplacement) {
  // As the single priced fit: the offers state a 1 Gbit/s link and replacement within 4 hours, so
  // every row of a search priced on them waits 4 h for a node and syncs over 1 Gbit/s: a node's
  // share of the checkpoint at the link's TCP goodput, node_bytes / (1e9 / 8 x 1448 / 1538) s
  // (a 1500-byte MTU's payload in its 1538 bytes on the wire).
  FitRequest r;
  r.model = "Llama-3.1-70B";
  r.task = "full";
  r.gpu = "H100 SXM";
  r.framework = "megatron";
  r.max_gpus = 32;
  r.max_gpus_given = true;
  r.tokens = 1e9;
  r.start = "2027-03-01T09:00";
  r.offers = "terms.yaml";
  r.offers_text =
      "currency: CNY\n"
      "offers:\n"
      "  - {id: n, provider: p, gpu: H100 SXM, gpus_per_instance: 8, mode: on_demand, price: 400,\n"
      "     link: {gbps: 1}, terms: {node_replacement_hours: 4}}\n";
  const FitJobResult f = Fit(r);
  ASSERT_TRUE(f.search && f.search->training);
  ASSERT_FALSE(f.candidate_checkpoints.empty());
  for (const CheckpointPlan& c : f.candidate_checkpoints) {
    EXPECT_DOUBLE_EQ(c.node_wait_seconds, 4 * 3600);
    EXPECT_NE(c.node_wait_source.find("offer n"), std::string::npos) << c.node_wait_source;
    EXPECT_NE(c.sync_link_source.find("offer n"), std::string::npos) << c.sync_link_source;
    ASSERT_TRUE(c.sync_seconds.has_value());
    EXPECT_NEAR(*c.sync_seconds, c.node_bytes / (1e9 / 8 * 1448.0 / 1538.0), 1e-6 * *c.sync_seconds);
    EXPECT_GT(c.node_bytes, 0);
  }
}

TEST(DataMovement, ARequiredLinkBuysTheUpgradeInCompare) {
  // 8 GPUs busy every hour of March 2027 (744 h) on the fixture's 8-GPU H100 node, 400 CNY an
  // hour, 1 Gbit/s stated, a 10 Gbit/s upgrade at 1,500 CNY per instance and month. With a 10
  // Gbit/s link required the upgrade is a fixed fee prorated per billed hour over the 730-hour
  // month: 1,500 x 744 / 730 = 1,528.767 CNY; all on demand 744 x 400 + 1,528.767 = 299,128.767.
  // The spot offer states no link: left out.
  CompareRequest c;
  c.offers = test::Fixture("offers/h100-link-upgrade.yaml");
  c.hours_per_month = 730;
  c.gpus = 8;
  c.month = "2027-03";
  c.link_gbps = 10;
  const CompareResult r = RunCompare(c, test::Catalog());
  const Plan& od = r.strategies.at("on_demand");
  ASSERT_TRUE(od.feasible);
  EXPECT_NEAR(od.cost.link_upgrades_included, 1500.0 * 744 / 730, 1e-6);
  EXPECT_NEAR(od.cost.fixed_fees, 1500.0 * 744 / 730, 1e-6);
  EXPECT_NEAR(od.cost.Total(), 744 * 400.0 + 1500.0 * 744 / 730, 1e-6);
  ASSERT_TRUE(r.link);
  ASSERT_EQ(r.link->bought.size(), 1u);
  EXPECT_EQ(r.link->bought[0].offer, "h100-node");
  EXPECT_EQ(r.link->bought[0].gbps, 10);
  ASSERT_EQ(r.link->left_out.size(), 1u);
  EXPECT_EQ(r.link->left_out[0].offer, "h100-spot");
  EXPECT_FALSE(r.link->left_out[0].link_gbps);

  // The stated 1 Gbit/s is enough for 1: nothing bought; without the option no link line at all.
  c.link_gbps = 1;
  const CompareResult one = RunCompare(c, test::Catalog());
  EXPECT_TRUE(one.link->bought.empty());
  EXPECT_NEAR(one.strategies.at("on_demand").cost.Total(), 744 * 400.0, 1e-6);
  c.link_gbps.reset();
  EXPECT_FALSE(RunCompare(c, test::Catalog()).link);

  // 25 Gbit/s: no offer reaches it; the error names the option.
  c.link_gbps = 25;
  try {
    RunCompare(c, test::Catalog());
    ADD_FAILURE() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "link_gbps");
  }
}

TEST(DataMovement, TheUpgradeCanChangeWhichOfferIsCheapest) {
  // A: 400 CNY an hour with 1 Gbit/s and a 10 Gbit/s upgrade at 1,500 a month; B: 402 an hour
  // with 10 Gbit/s. March 2027, one node every hour (744 h): without a link required A is
  // cheaper (297,600 < 299,088); with 10 Gbit/s required A costs 297,600 + 1,528.767 =
  // 299,128.767 and B (299,088) wins.
  CompareRequest c;
  c.offers = "two.yaml";
  c.offers_text =
      "currency: CNY\n"
      "offers:\n"
      "  - {id: a, provider: pa, gpu: H100 SXM, gpus_per_instance: 8, mode: on_demand, price: 400,\n"
      "     link: {gbps: 1, upgrades: [{gbps: 10, price_per_month: 1500}]}}\n"
      "  - {id: b, provider: pb, gpu: H100 SXM, gpus_per_instance: 8, mode: on_demand, price: 402, link: {gbps: 10}}\n";
  c.hours_per_month = 730;
  c.gpus = 8;
  c.month = "2027-03";
  c.by = "offer";
  const CompareResult free = RunCompare(c, test::Catalog());
  ASSERT_EQ(free.groups.size(), 2u);
  EXPECT_EQ(free.groups[0].key, "a");
  EXPECT_NEAR(free.groups[0].plan.cost.Total(), 297600, 1e-6);
  c.link_gbps = 10;
  const CompareResult ten = RunCompare(c, test::Catalog());
  EXPECT_EQ(ten.groups[0].key, "b");
  EXPECT_NEAR(ten.groups[0].plan.cost.Total(), 299088, 1e-6);
  EXPECT_NEAR(ten.groups[1].plan.cost.Total(), 297600 + 1500.0 * 744 / 730, 1e-6);
  // The optimiser over both picks B too.
  OptimizeRequest o;
  static_cast<RentalRequest&>(o) = static_cast<const RentalRequest&>(c);
  const OptimizeResult best = RunOptimize(o, test::Catalog());
  EXPECT_NEAR(best.plan.cost.Total(), 299088, 1e-6);
  EXPECT_EQ(best.plan.on_demand_gpu_hours.count("a"), 0u);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(DataMovement, ACheckReportsMeasuredLinkAndStorageReplaceTheAssumptions) {
  // A report of the rented machine: 0.8 Gbit/s of TCP payload measured by check --net and a
  // 1 GB/s sequential read. The node's 493.876 GB then sync in 493.876e9 / 1e8 B/s = 4,938.76 s
  // and save at 8 Gbit/s = 1 GB/s in 493.88 s (no longer "assumed").
  CheckReport rep;
  rep.mode = "quick";
  rep.started = "2026-12-04T05:00:00Z";
  rep.finished = "2026-12-04T05:01:00Z";
  NetLink net;
  net.host = "10.0.0.5:5201";
  net.streams = 4;
  net.seconds = 10;
  net.pings = 20;
  net.rtt_ms = 0.5;
  net.rtt_p90_ms = 0.6;
  net.throughput_gbps = 0.8;
  net.reverse_gbps = 0.8;
  net.throughput_bytes = 1000000000;
  net.reverse_bytes = 1000000000;
  net.transfer_bytes = 1000000000;
  net.transfer_measured_bytes = 1000000000;
  net.transfer_seconds = 10;
  rep.net = net;
  CheckResult seq;
  seq.name = "storage_seq_read";
  seq.gpu = -1;
  seq.status = CheckStatus::kPass;
  seq.measured = 1.0;
  seq.unit = "GB/s";
  rep.Add(seq);
  FitRequest r = Llama70BFullOn16H100("megatron");
  r.check_report = "rented.json";
  r.check_report_text = CheckReportToJson(rep).dump();
  const CheckpointPlan c = Fit(r).single->checkpoint;
  ASSERT_TRUE(c.sync_seconds.has_value());
  EXPECT_NEAR(*c.sync_seconds, 4938.76, 0.01);
  EXPECT_NEAR(c.save_seconds, 493.876, 0.001);
  EXPECT_FALSE(c.storage_assumed);
  EXPECT_EQ(c.sync_link_source, "check report rented.json");
  // Restore: fetch over the link (4,938.76 s) and read at 1 GB/s (493.876 s).
  EXPECT_NEAR(c.restore_seconds, 4938.76 + 493.876, 0.01);
  // With the write test too (0.5 GB/s), saves write at 0.5 GB/s: 987.75 s; the restore still
  // reads at 1 GB/s.
  CheckResult write = seq;
  write.name = "storage_seq_write";
  write.measured = 0.5;
  rep.Add(write);
  r.check_report_text = CheckReportToJson(rep).dump();
  const CheckpointPlan w = Fit(r).single->checkpoint;
  EXPECT_NEAR(w.save_seconds, 987.752, 0.001);
  EXPECT_NEAR(w.restore_seconds, 4938.76 + 493.876, 0.01);
  ASSERT_TRUE(w.storage_read_gbps.has_value());
  EXPECT_DOUBLE_EQ(*w.storage_read_gbps, 8.0);
  // A report with neither figure is an error naming the option, not a silent assumption.
  CheckReport none;
  none.mode = "quick";
  none.started = rep.started;
  none.finished = rep.finished;
  r.check_report_text = CheckReportToJson(none).dump();
  try {
    Fit(r);
    ADD_FAILURE() << "a report without figures was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "check_report");
  }
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(DataMovement, SpotReworkUsesTheLayoutsOwnSaveTimeInASearchToo) {
  // Interruptible on the fixture's spot nodes: Qwen2.5-7B (7,615,616,512 parameters) under
  // Megatron saves 14 bytes a parameter, 106.62 GB, all on one 8-GPU node, at 2 GB/s in 53.309 s =
  // 0.88849 min, which replaces the offer's typed 5 minutes, in the single fit and for each
  // layout a search prices.
  FitRequest one;
  one.model = "Qwen2.5-7B";
  one.task = "full";
  one.gpu = "H100 SXM";
  one.gpus = 8;
  one.zero = 3;
  one.framework = "megatron";
  one.tokens = 1e9;
  one.offers = test::Fixture("offers/h100-link-upgrade.yaml");
  one.start = "2027-03-01T09:00";
  one.interruptible = true;
  const FitJobResult single = Fit(one);
  ASSERT_TRUE(single.spot_checkpoint_minutes.has_value());
  EXPECT_NEAR(*single.spot_checkpoint_minutes, 7615616512.0 * 14 / 2e9 / 60, 1e-6);
  ASSERT_TRUE(single.job && single.job->plan.feasible);
  EXPECT_FALSE(single.job->plan.spot_gpu_hours.empty());
  // The spot offer's interval with that save time: sqrt(2 x 0.0148081 h / 0.05) = 0.769627 h =
  // 2,770.66 s; rework 0.05 x (0.769627 / 2 + 10 / 60) + 0.0148081 / 0.769627 = 0.0468147.
  ASSERT_EQ(single.spot_checkpoints.size(), 1u);
  EXPECT_EQ(single.spot_checkpoints[0].offer, "h100-spot");
  EXPECT_NEAR(single.spot_checkpoints[0].interval_seconds, 2770.66, 0.01);
  EXPECT_NEAR(single.spot_checkpoints[0].rework_fraction, 0.0468147, 1e-6);
  // The node-failure lost hours at the job's price per hour of compute.
  ASSERT_TRUE(single.lost_cost.has_value());
  EXPECT_NEAR(*single.lost_cost,
              *single.single->checkpoint.lost_hours * single.job->total.amount / *single.single->training->total_hours,
              1e-9);
  FitRequest search = one;
  search.gpu = "H100 SXM,A100 80GB SXM";  // a search over the listed cards, the layout pinned
  search.pinned.gpus = 8;
  search.pinned.tp = 1;
  search.pinned.pp = 1;
  search.pinned.zero = 3;
  search.pinned.micro_batch = 1;
  search.pinned.recompute = Recompute::kNone;
  const FitJobResult s = Fit(search);
  ASSERT_TRUE(s.search && s.search->training);
  ASSERT_FALSE(s.search->training->ranked.empty());
  const Candidate& c = s.search->training->ranked.front();
  EXPECT_EQ(c.layout.zero, 3);
  // Priced again here for the candidate's hours with the hand-worked minutes; with the offer's
  // typed 5 minutes the price differs (so this test sees which minutes the search used).
  OfferSet offers = LoadOffers(one.offers, test::Catalog());
  const LocalMinute start = ParseJobStart(one.start, offers.zone, UtcSeconds{});
  const double hours = *c.time.total_hours;
  const double typed = PriceJob(offers, 8, hours, start, true).total.amount;
  for (Offer& o : offers.offers) {
    if (o.spot) {
      o.spot->checkpoint_minutes = 7615616512.0 * 14 / 2e9 / 60;
    }
  }
  const double own = PriceJob(offers, 8, hours, start, true).total.amount;
  EXPECT_GT(std::abs(typed - own), 0.01);
  EXPECT_NEAR(c.cost.amount, own, 1e-6);
}

}  // namespace
}  // namespace gpuplan
