#pragma once
#include <string>

namespace gpuplan::test {
inline std::string Fixture(const std::string& rel) { return std::string(GPUPLAN_TEST_FIXTURES) + "/" + rel; }
inline std::string DataDir() { return GPUPLAN_DATA_DIR; }
inline std::string Preset(const std::string& name) { return DataDir() + "/models/" + name + ".json"; }
}  // namespace gpuplan::test
