// gpuplan serve: flags into a ServeRequest (serve/serve_options.h), the library builds the
// server (serve/api.h); this file finds the built page, prints the address and waits for
// SIGINT/SIGTERM.
#include <pthread.h>
#include <signal.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "cli_options.h"
#include "commands.h"
#include "serve/api.h"
#include "serve/serve_options.h"

namespace gpuplan::cli {
namespace {

constexpr double kStopGraceSeconds = 3;

// The built page installed next to the binary (build/web, copied there by the web build).
std::string WebNextToBinary() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return "";
  }
  const std::filesystem::path web = exe.parent_path() / "web";
  return std::filesystem::is_regular_file(web / "index.html", ec) ? web.string() : "";
}

}  // namespace

Runner RegisterServe(CLI::App& app, GlobalOptions& g) {
  auto r = std::make_shared<ServeRequest>();
  CLI::App* c = app.add_subcommand("serve", "the web page and JSON API over fit, cost, check and meter");
  AddOptions(c, ServeOptionTable(), *r);
  return [r, c, &g]() -> int {
    CheckGivenFlags(c, ServeOptionTable(), *r);
    if (r->token.empty()) {
      if (const char* t = std::getenv("GPUPLAN_TOKEN"); t != nullptr) {
        r->token = t;
      }
    }
    if (r->web.empty()) {
      r->web = WebNextToBinary();
    }
    // SIGINT and SIGTERM go to one thread, which stops the server; the others never see them.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    std::unique_ptr<HttpServer> server = NewServeServer(*r, DataDir(g));
    const int port = server->Start();
    std::cout << "gpuplan serve: http://" << (r->bind.find(':') != std::string::npos ? "[" + r->bind + "]" : r->bind)
              << ":" << port << "/" << (r->web.empty() ? " (API only: no built page found, see --web)" : "") << std::endl;
    std::atomic<bool> signalled{false};
    std::atomic<bool> stopped{false};
    std::thread waiter([&server, &signalled, &stopped, stop_signals]() {
      int sig = 0;
      sigwait(&stop_signals, &sig);
      signalled = true;
      server->Stop();
      // Connections that sent half a request hold their threads until the read timeout: the
      // server has kStopGraceSeconds to finish, then the process ends anyway (it holds nothing
      // that needs saving), within the 5 s a stop allows.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kStopGraceSeconds);
      while (!stopped && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!stopped) {
        std::cout << "gpuplan serve: stopped; connections still open were closed" << std::endl;
        std::_Exit(kExitOk);
      }
    });
    server->Run();
    stopped = true;
    // Stopped by a signal: the waiter has returned. Stopped otherwise: wake it (the signal stays
    // pending, blocked in every thread, until its sigwait takes it).
    if (!signalled) {
      kill(getpid(), SIGTERM);
    }
    waiter.join();
    return kExitOk;
  };
}

}  // namespace gpuplan::cli
