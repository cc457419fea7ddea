// Generated tables in docs/: a test computes a table and checks that the block between the
// markers in the doc is exactly that table (GPUPLAN_UPDATE_DOCS=1 rewrites the block instead).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace gpuplan::test {

inline void CheckGeneratedBlock(const std::string& doc_path, const std::string& begin, const std::string& end,
                                const std::string& table) {
  std::ifstream in(doc_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  const auto b = doc.find(begin);
  const auto e = b == std::string::npos ? std::string::npos : doc.find(end, b + begin.size());
  ASSERT_NE(b, std::string::npos) << doc_path << " lacks " << begin;
  ASSERT_NE(e, std::string::npos) << doc_path << " lacks " << end << " after " << begin;
  const std::size_t from = b + begin.size();
  if (std::getenv("GPUPLAN_UPDATE_DOCS") != nullptr) {
    doc.replace(from, e - from, table);
    std::ofstream(doc_path) << doc;
    return;
  }
  EXPECT_EQ(doc.substr(from, e - from), table)
      << doc_path << " is stale: rerun the test with GPUPLAN_UPDATE_DOCS=1 to regenerate it";
}

// A whole generated file (data/accuracy.yaml): rewritten under GPUPLAN_UPDATE_DOCS, else compared.
inline void CheckGeneratedFile(const std::string& path, const std::string& text) {
  if (std::getenv("GPUPLAN_UPDATE_DOCS") != nullptr) {
    std::ofstream(path) << text;
    return;
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), text) << path << " is stale: rerun the test with GPUPLAN_UPDATE_DOCS=1 to regenerate it";
}

}  // namespace gpuplan::test
