#!/usr/bin/env bash
# Sets up (Debian packages), builds, and runs `piranha demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2
./build/bin/piranha demo "$@"
