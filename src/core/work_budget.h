// A request's budget of wall time (issue 26 req. 8): a server gives each request a deadline and
// a stop flag; the long computations of the library (the layout search, the rental optimiser,
// meter reads) call CheckWorkBudget() at their loop heads, so a request that would run for
// minutes, or one still running when the server is asked to stop, ends instead. Without a
// budget (the CLI) CheckWorkBudget() returns at once.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace gpuplan {

struct WorkBudget {
  std::chrono::steady_clock::time_point deadline;
  double seconds = 0;                           // the budget, for the message
  const std::atomic<bool>* stopping = nullptr;  // set when the process is asked to stop
  std::string field = "max_request_seconds";    // what to raise, named in the error
  // Whether the client that asked has gone (the server's connection closed); asked at most every
  // `client_every_seconds`. Empty: never asked (the CLI, an in-process answer).
  std::function<bool()> client_gone;
  double client_every_seconds = 0.2;
};

// Installs `budget` for the calling thread until destroyed (nesting restores the outer one).
class ScopedWorkBudget {
 public:
  explicit ScopedWorkBudget(const WorkBudget& budget);
  ~ScopedWorkBudget();
  ScopedWorkBudget(const ScopedWorkBudget&) = delete;
  ScopedWorkBudget& operator=(const ScopedWorkBudget&) = delete;

 private:
  const WorkBudget* outer_;
  WorkBudget budget_;
};

// Throws InputError (the budget's field) past the deadline, EnvironmentError when stopping or
// when the client has gone.
void CheckWorkBudget();
// Seconds left of the calling thread's budget; nullopt without one.
std::optional<double> WorkBudgetSecondsLeft();
// The deadline of the calling thread's budget, if any (to wait on a lock no longer than it).
std::optional<std::chrono::steady_clock::time_point> WorkBudgetDeadline();

}  // namespace gpuplan
