#!/usr/bin/env bash
# Installs, from Debian's packages, whatever this project needs that is missing.
# Idempotent and non-interactive: safe to run on every build.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libzmq3-dev cppzmq-dev
  libsodium-dev     # sealed keys across pools (piranha/access/sealed_key.h)
  libmsgpack-cxx-dev
  libboost-fiber-dev libboost-context-dev
  libyaml-cpp-dev
  doctest-dev
  libcli11-dev
  nlohmann-json3-dev
  libsqlite3-dev
  libhiredis-dev redis-server
  clang libclang-rt-14-dev
  clang-format-14   # scripts/check-format.sh: pinned to Debian 12's version
  python3           # scripts/perf-summary.py (docs/performance.md's opening figures)
  iproute2
  libcpp-httplib-dev
  chromium          # optional: tests/nps_page_test.cc drives the live page in it, and skips without it
  dpkg-dev file   # CPack's DEB generator: dpkg-shlibdeps, file
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
