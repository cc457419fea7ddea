#!/usr/bin/env bash
# Installs the Debian 12 packages gpuplan builds and tests with (idempotent; quick when present).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git jq yq ccache sqlite3 curl
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev libglpk-dev libpugixml-dev libsqlite3-dev
  libhowardhinnant-date-dev tzdata   # civil calendar and IANA time zones (core/time.h)
  libcpp-httplib-dev libssl-dev   # HTTP client/server (webhooks, serve, /metrics) and HMAC signing
  libgtest-dev libgmock-dev libbenchmark-dev
  librust-nvml-wrapper-sys-dev   # bindgen output of the real nvml.h: tests/abi checks our NVML declarations
  clang libclang-rt-14-dev   # libFuzzer + sanitizers for the fuzz targets
  chromium                   # headless browser: the check report HTML test opens it
  cmark-gfm                  # GitHub-flavoured Markdown: the check report Markdown test renders it
  fonts-wqy-microhei         # a CJK font: the page's Chinese in the browser tests' screenshots
  prometheus                 # a real Prometheus scrapes the meter agent in the tests; promtool checks deploy/meter
  iperf3                     # check --net-tool iperf3 runs it; its test runs a real iperf3 -s (no daemon: below)
  python3-protobuf python3-yaml   # scripts/gemm/xla_table.py reads a protobuf text file; its test reads the YAML
)
# The page (web/, scripts/build-web.sh) builds with node and npm; Debian's when none is installed
# (a node from elsewhere brings its own npm, which Debian's npm package would conflict with).
if ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  # Debian's iperf3 asks whether to start an iperf3 server daemon at boot: no (the tests start
  # their own on a free port), and no question.
  if command -v debconf-set-selections >/dev/null; then
    echo "iperf3 iperf3/start_daemon boolean false" | $SUDO debconf-set-selections
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
