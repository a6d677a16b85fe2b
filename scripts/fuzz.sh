#!/usr/bin/env bash
# Builds the request fuzzer (the decoder, and the access rules of an
# authenticated server behind it) with clang (libFuzzer + ASan + UBSan) and
# runs it for SECONDS (default 60):
#
#   ./scripts/fuzz.sh [SECONDS] [libFuzzer flags...]
#
# It reads the committed corpus (tests/fuzz/corpus) and freshly generated
# seeds, and never writes to the committed corpus: new inputs go to
# build-fuzz/fuzz/new, crash reproducers to build-fuzz/fuzz/artifacts. To keep
# the inputs that add coverage, merge them into the corpus and commit it:
#
#   build-fuzz/bin/request_fuzzer -merge=1 tests/fuzz/corpus build-fuzz/fuzz/new
#
# To replay one reproducer: build-fuzz/bin/request_fuzzer FILE
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
[[ $# -gt 0 ]] && shift

CXX=${CXX:-clang++} cmake -S . -B build-fuzz -G Ninja -DPIRANHA_FUZZ=ON -DPIRANHA_BENCH=OFF >/dev/null
cmake --build build-fuzz --target request_fuzzer make_corpus

work=build-fuzz/fuzz
mkdir -p "$work/new" "$work/artifacts"
build-fuzz/bin/make_corpus "$work/seeds" >/dev/null

# -timeout: an input that takes ten seconds is a hang worth reporting.
exec build-fuzz/bin/request_fuzzer \
  -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
  -dict=tests/fuzz/request.dict -artifact_prefix="$work/artifacts/" \
  "$@" "$work/new" tests/fuzz/corpus "$work/seeds"
