// Text of `gpuplan check` for a terminal: the live view (an observer of RunCheck: a line per
// result as each test finishes, a progress bar for long tests on a terminal, plain lines when
// the output is a file or a pipe), and the text of compare and merge results.
// In: CheckReport, ComparisonResult, MergeResult (check/). Out: text on a std::ostream.
#pragma once

#include <ostream>
#include <string>

#include "check/check_request.h"
#include "check/compare.h"

namespace gpuplan {

// One result as a line: "FAIL  pcie_link_width       GPU 3  x8 (expected x16)  <evidence>".
std::string CheckResultLine(const CheckResult& r);

class CheckLiveView : public CheckObserver {
 public:
  // tty: redraw a progress line with \r; otherwise print plain lines only.
  CheckLiveView(std::ostream& out, bool tty) : out_(out), tty_(tty) {}
  void OnStart(const CheckReport& report, const std::vector<std::string>& tests) override;
  void OnTestStart(const std::string& test, int index, int total) override;
  void OnProgress(const std::string& test, double fraction) override;
  void OnTestDone(const CheckReport& report, const std::string& test) override;
  void OnFinish(const CheckReport& report) override;

 private:
  void ClearProgress();
  std::ostream& out_;
  bool tty_;
  std::size_t printed_ = 0;  // results already shown
  bool progress_shown_ = false;
  int last_percent_ = -1;
};

// The summary of a finished report: counts per status and the verdict with its exit code.
void CheckSummaryToText(const CheckReport& report, std::ostream& out);
void ComparisonToText(const ComparisonResult& c, std::ostream& out);
void MergeToText(const MergeResult& m, std::ostream& out);

}  // namespace gpuplan
