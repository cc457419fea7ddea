#include "check/render/check_files.h"

#include <sstream>

#include "core/atomic_file.h"
#include "check/render/check_html.h"
#include "check/render/check_json.h"
#include "check/render/check_markdown.h"

namespace gpuplan {

void WriteOutput(const std::string& path, const std::string& text, std::ostream& out, const std::string& what) {
  if (path.empty()) {
    return;
  }
  if (path == "-") {
    out << text;
    out.flush();
    return;
  }
  WriteFileAtomically(path, text, what);
}

namespace {

template <typename Model, typename Render>
std::string Rendered(const Model& m, Render render) {
  std::ostringstream s;
  render(m, s);
  return s.str();
}

}  // namespace

void CheckReportFiles::Write(const CheckReport& report, bool final) {
  // Standard output gets the report once, when it is complete.
  auto path = [final](const std::string& p) { return p == "-" && !final ? std::string() : p; };
  if (!json_.empty()) {
    WriteOutput(path(json_), CheckReportToJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", stdout_, "report");
  }
  if (!markdown_.empty()) {
    WriteOutput(path(markdown_), Rendered(report, CheckReportToMarkdown), stdout_, "report");
  }
  if (!html_.empty()) {
    WriteOutput(path(html_), Rendered(report, CheckReportToHtml), stdout_, "report");
  }
}

void CheckReportFiles::OnStart(const CheckReport& report, const std::vector<std::string>& /*tests*/) { Write(report, false); }
void CheckReportFiles::OnTestDone(const CheckReport& report, const std::string& /*test*/) { Write(report, false); }
void CheckReportFiles::OnFinish(const CheckReport& report) { Write(report, true); }

void WriteComparisonOutputs(const ComparisonResult& c, const std::string& json, const std::string& markdown,
                            const std::string& html, std::ostream& out) {
  WriteOutput(json, ComparisonToJson(c).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", out, "comparison");
  WriteOutput(markdown, Rendered(c, ComparisonToMarkdown), out, "comparison");
  WriteOutput(html, Rendered(c, ComparisonToHtml), out, "comparison");
}

void WriteMergeOutputs(const MergeResult& m, const std::string& json, const std::string& markdown,
                       const std::string& html, std::ostream& out) {
  WriteOutput(json, Rendered(m, WriteMergeJson), out, "merged report");
  WriteOutput(markdown, Rendered(m, MergeToMarkdown), out, "merged report");
  WriteOutput(html, Rendered(m, MergeToHtml), out, "merged report");
}

}  // namespace gpuplan
