#include "core/work_budget.h"

#include <cstdio>

#include "core/error.h"

namespace gpuplan {
namespace {

thread_local const WorkBudget* g_budget = nullptr;
thread_local std::chrono::steady_clock::time_point g_client_asked;  // last client_gone() call

}  // namespace

ScopedWorkBudget::ScopedWorkBudget(const WorkBudget& budget) : outer_(g_budget), budget_(budget) {
  g_budget = &budget_;
  g_client_asked = std::chrono::steady_clock::now();
}

ScopedWorkBudget::~ScopedWorkBudget() { g_budget = outer_; }

void CheckWorkBudget() {
  const WorkBudget* b = g_budget;
  if (b == nullptr) {
    return;
  }
  if (b->stopping != nullptr && b->stopping->load(std::memory_order_relaxed)) {
    throw EnvironmentError("the server is stopping: this request was not finished");
  }
  const auto now = std::chrono::steady_clock::now();
  if (b->client_gone && std::chrono::duration<double>(now - g_client_asked).count() >= b->client_every_seconds) {
    g_client_asked = now;
    if (b->client_gone()) {
      throw EnvironmentError("the client closed the connection: this request was dropped");
    }
  }
  if (now >= b->deadline) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", b->seconds);
    throw InputError(std::string("this request needs more than the server's ") + seconds +
                         " s per request; ask for less (fewer cards or a smaller max_gpus, a shorter range, fewer "
                         "offers) or start the server with a larger --max-request-seconds",
                     "", 0, b->field);
  }
}

std::optional<double> WorkBudgetSecondsLeft() {
  if (g_budget == nullptr) {
    return std::nullopt;
  }
  return std::chrono::duration<double>(g_budget->deadline - std::chrono::steady_clock::now()).count();
}

std::optional<std::chrono::steady_clock::time_point> WorkBudgetDeadline() {
  if (g_budget == nullptr) {
    return std::nullopt;
  }
  return g_budget->deadline;
}

}  // namespace gpuplan
