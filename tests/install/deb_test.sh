#!/usr/bin/env bash
# Makes this build tree's Debian packages with CPack in a scratch directory
# and checks them (scripts/check-debs.sh): the packages follow the build's
# install prefix, so this checks the packaging, and scripts/package.sh the
# packages for /usr.
#
#   deb_test.sh CPACK BUILD_DIR PREFIX
set -euo pipefail
cpack=$1 build=$2 prefix=$3
out=$build/deb_test
rm -rf "$out"
mkdir -p "$out"
if ! "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1; then
  cat "$out/cpack.log" >&2
  exit 1
fi
"$(dirname "$0")/../../scripts/check-debs.sh" "$out" "$prefix"
