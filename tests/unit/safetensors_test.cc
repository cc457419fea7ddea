// safetensors header reading on files written here byte by byte from the format description
// (huggingface/safetensors README): u64 little-endian header length, JSON header, data.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "catalog/model_loader.h"
#include "catalog/safetensors.h"
#include "core/error.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

std::string Encode(const std::string& header, std::size_t data_bytes) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  }
  out += header;
  out += std::string(data_bytes, '\0');
  return out;
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("gpuplan-st-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& bytes) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// Two bf16 tensors: 4x8 (64 bytes) and 8 (16 bytes), plus a 3-element fp32 inv_freq buffer.
const char* kHeader =
    R"({"__metadata__":{"format":"pt"},)"
    R"("model.layers.0.mlp.up_proj.weight":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,64]},)"
    R"("model.norm.weight":{"dtype":"BF16","shape":[8],"data_offsets":[64,80]},)"
    R"("model.layers.0.self_attn.rotary_emb.inv_freq":{"dtype":"F32","shape":[3],"data_offsets":[80,92]}})";

TEST(Safetensors, ReadsHeaderOnly) {
  TempDir d;
  const std::string f = d.Write("model.safetensors", Encode(kHeader, 92));
  const SafetensorsHeader h = ReadSafetensorsHeader(f);
  ASSERT_EQ(h.tensors.size(), 3u);
  EXPECT_EQ(h.metadata.at("format"), "pt");
  int64_t elements = 0;
  for (const auto& t : h.tensors) {
    elements += t.Elements();
  }
  EXPECT_EQ(elements, 32 + 8 + 3);
}

TEST(Safetensors, CheckpointFolderCountsParametersNotBuffers) {
  TempDir d;
  d.Write("model-00001-of-00002.safetensors", Encode(kHeader, 92));
  d.Write("model-00002-of-00002.safetensors",
          Encode(R"({"lm_head.weight":{"dtype":"F16","shape":[2,8],"data_offsets":[0,32]}})", 32));
  const CheckpointSummary s = SummarizeCheckpoint(d.path());
  EXPECT_EQ(s.files, 2);
  EXPECT_EQ(s.params, 32 + 8 + 16);
  EXPECT_EQ(s.bytes, 64 + 16 + 32);
  EXPECT_EQ(s.params_by_dtype.at("BF16"), 40);
  EXPECT_EQ(s.params_by_dtype.at("F16"), 16);
  ASSERT_EQ(s.buffers.size(), 1u);
}

TEST(Safetensors, LoadModelFromCheckpointFolder) {
  TempDir d;
  fs::copy_file(test::Fixture("configs/gpt2.json"), fs::path(d.path()) / "config.json");
  d.Write("model.safetensors", Encode(kHeader, 92));
  const LoadedModel m = LoadModel(d.path(), test::DataDir());
  ASSERT_TRUE(m.checkpoint.has_value());
  EXPECT_EQ(m.checkpoint->params, 40);
  EXPECT_EQ(m.spec.model_type, "gpt2");
}

TEST(Safetensors, TruncatedFileIsAnInputError) {
  const std::string full = Encode(kHeader, 92);
  // Cut inside the header, and cut inside the data.
  EXPECT_THROW(ParseSafetensorsHeader(std::string_view(full).substr(0, 30), 30, "x.safetensors"), InputError);
  EXPECT_THROW(ParseSafetensorsHeader(full, full.size() - 10, "x.safetensors"), InputError);
  EXPECT_THROW(ParseSafetensorsHeader("abc", 3, "x.safetensors"), InputError);
}

TEST(Safetensors, InconsistentOffsetsNameTheTensor) {
  const std::string bad = Encode(R"({"w":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,60]}})", 60);
  try {
    ParseSafetensorsHeader(bad, bad.size(), "x.safetensors");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "w.data_offsets");
    EXPECT_EQ(e.file(), "x.safetensors");
  }
}

TEST(Safetensors, RejectsUnknownDtypeAndHugeHeader) {
  const std::string bad = Encode(R"({"w":{"dtype":"Q9","shape":[1],"data_offsets":[0,1]}})", 1);
  EXPECT_THROW(ParseSafetensorsHeader(bad, bad.size(), "x"), InputError);
  std::string huge(8, '\xff');
  EXPECT_THROW(ParseSafetensorsHeader(huge, 8, "x"), InputError);
}

}  // namespace
}  // namespace gpuplan
