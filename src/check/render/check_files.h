// The report files of `gpuplan check` (--json, --markdown, --html): an observer of RunCheck that
// rewrites each file atomically after every test, so a crash or a kill still leaves a complete
// report of what was measured ("complete": false until the run ends). "-" writes to standard
// output once, at the end. Also the writer of compare and merge outputs.
// In: CheckReport / ComparisonResult / MergeResult. Out: files (core/atomic_file.h).
#pragma once

#include <ostream>
#include <string>

#include "check/check_request.h"
#include "check/compare.h"

namespace gpuplan {

class CheckReportFiles : public CheckObserver {
 public:
  CheckReportFiles(std::string json, std::string markdown, std::string html, std::ostream& stdout_stream)
      : json_(std::move(json)), markdown_(std::move(markdown)), html_(std::move(html)), stdout_(stdout_stream) {}
  void OnStart(const CheckReport& report, const std::vector<std::string>& tests) override;
  void OnTestDone(const CheckReport& report, const std::string& test) override;
  void OnFinish(const CheckReport& report) override;

 private:
  void Write(const CheckReport& report, bool final);
  std::string json_, markdown_, html_;
  std::ostream& stdout_;
};

// Writes `text` to `path` atomically, or to `out` when path is "-"; nothing when path is empty.
// EnvironmentError when the file cannot be written.
void WriteOutput(const std::string& path, const std::string& text, std::ostream& out, const std::string& what);

void WriteComparisonOutputs(const ComparisonResult& c, const std::string& json, const std::string& markdown,
                            const std::string& html, std::ostream& out);
void WriteMergeOutputs(const MergeResult& m, const std::string& json, const std::string& markdown,
                       const std::string& html, std::ostream& out);

}  // namespace gpuplan
