#!/usr/bin/env bash
# Builds the Debian packages piranha and piranha-dev into build-deb/ (CPack's
# DEB generator: packaging/packaging.cmake says why), then checks them with
# scripts/check-debs.sh: dependencies resolvable from Debian, and the program,
# a job and a job built against piranha-dev run from a clean root.
#
#   ./scripts/package.sh        then: apt install ./build-deb/piranha*_amd64.deb
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

# RelWithDebInfo (-O2 -g, as Debian builds; CPack strips the binaries) and
# the installed targets only: the tests run in scripts/test.sh.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build-deb -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr "${launcher[@]}" >/dev/null
cmake --build build-deb -j2 --target piranha cmatrix mandelbrot spin hello_job trellis_cluster
(cd build-deb && cpack -G DEB)
./scripts/check-debs.sh --build-job build-deb /usr
ls -l build-deb/*.deb
