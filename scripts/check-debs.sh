#!/usr/bin/env bash
# Checks the Debian packages piranha and piranha-dev in DIR, built for PREFIX:
#   - apt can satisfy their Depends from Debian's packages (a simulated install);
#   - unpacked into a clean root, they hold the program, the example jobs, the
#     systemd units (checked with systemd-analyze verify when it can run), the
#     configuration, the maintainer scripts, the headers and the CMake package;
#   - the unpacked `piranha --help` and hello_job (PIRANHA_LOCAL_PIRANHAS=2) run;
#   - with --build-job, a job builds against the unpacked piranha-dev and runs.
# The root is unpacked (dpkg-deb -x), not installed with dpkg --root: the
# maintainer scripts create the piranha user, which must not happen here.
#
#   scripts/check-debs.sh [--build-job] DIR PREFIX
set -euo pipefail
build_job=0
if [[ ${1:-} == --build-job ]]; then build_job=1; shift; fi
if (($# != 2)); then
  echo "usage: check-debs.sh [--build-job] DIR PREFIX" >&2
  exit 2
fi
dir=$(cd "$1" && pwd)
prefix=$2
source_dir=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "check-debs: $*" >&2; exit 1; }

shopt -s nullglob
runtime=("$dir"/piranha_*.deb)
dev=("$dir"/piranha-dev_*.deb)
((${#runtime[@]} == 1)) || fail "expected one piranha_*.deb in $dir, found ${#runtime[@]}"
((${#dev[@]} == 1)) || fail "expected one piranha-dev_*.deb in $dir, found ${#dev[@]}"

for deb in "${runtime[0]}" "${dev[0]}"; do
  echo "$(basename "$deb"): Depends: $(dpkg-deb -f "$deb" Depends)"
done
dpkg-deb -f "${dev[0]}" Depends | grep -q 'cppzmq-dev' || fail "piranha-dev does not depend on cppzmq-dev"
# Every dependency must name a Debian package apt can install (here: they
# are installed, as the build needed them).
if ! out=$(apt-get install --simulate -q "${runtime[0]}" "${dev[0]}" 2>&1); then
  echo "$out" >&2
  fail "apt cannot satisfy the packages' dependencies"
fi
grep -q '^Inst piranha ' <<<"$out" || fail "apt would not install piranha: $out"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "${runtime[0]}" "$root"
dpkg-deb -x "${dev[0]}" "$root"
control=$root/DEBIAN-piranha
dpkg-deb -e "${runtime[0]}" "$control"

if [[ $prefix == /usr ]]; then
  config_dir=/etc/piranha unit_dir=/lib/systemd/system
else
  config_dir=$prefix/etc/piranha unit_dir=$prefix/lib/systemd/system
fi
for f in "$prefix/bin/piranha" "$prefix/libexec/piranha/examples/hello_job" \
         "$prefix/libexec/piranha/examples/cmatrix" "$prefix/libexec/piranha/piranha-nps-page.so" "$unit_dir/piranha-server.service" \
         "$unit_dir/piranha-agent.service" "$config_dir/server.conf" "$config_dir/agent.yaml" \
         "$prefix/include/piranha/runtime/job.h" "$prefix/include/piranha/tuplespace/client.h"; do
  [[ -e $root$f ]] || fail "$f is not in the packages"
done
# The runtime package depends on the package of every shared library its
# programs load directly (libzmq may be linked in statically: CMakeLists.txt);
# ldd says where each is found here, dpkg which package installed it.
depends=$(dpkg-deb -f "${runtime[0]}" Depends | tr ',|' '\n\n' | sed 's/^ *//; s/[ (].*//')
checked=0
while IFS= read -r exe; do
  readelf -h "$exe" >/dev/null 2>&1 || continue  # ELF files only
  resolved=$(ldd "$exe" 2>/dev/null || true)
  for lib in $(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [[ $lib == ld-linux* || $lib == libc.so* || $lib == libm.so* ]] && continue
    path=$(awk -v l="$lib" '$1 == l && $2 == "=>" { print $3 }' <<<"$resolved")
    [[ -n $path && $path != not ]] || fail "$(basename "$exe") needs $lib, which is not installed here"
    # dpkg knows a library by the path its package installed: the link or the file.
    pkg=$( { dpkg -S "$path" || dpkg -S "$(readlink -f "$path")"; } 2>/dev/null | sed -n '1s/:.*//p' || true)
    [[ -n $pkg ]] || fail "no Debian package holds $lib ($path)"
    grep -qxF "$pkg" <<<"$depends" || fail "piranha does not depend on $pkg (for $lib, which $(basename "$exe") loads)"
    checked=$((checked + 1))
  done
done < <(find "$root$prefix/bin" "$root$prefix/libexec" -type f -perm -u+x)
((checked > 0)) || fail "no program in the package loads a shared library: nothing was checked"
echo "Depends: covers the $checked shared libraries the programs load"
for f in postinst prerm postrm; do
  [[ -x $control/$f ]] || fail "piranha has no $f"
  sh -n "$control/$f" || fail "piranha's $f is not a valid shell script"
done
if [[ $config_dir == /etc/piranha ]]; then
  grep -qx /etc/piranha/agent.yaml "$control/conffiles" || fail "agent.yaml is not a conffile"
fi
[[ -n $(find "$root$prefix" -name PiranhaConfig.cmake) ]] || fail "no PiranhaConfig.cmake in piranha-dev"
[[ -n $(find "$root$prefix" -name piranha.pc) ]] || fail "no piranha.pc in piranha-dev"

# systemd-analyze verify checks the units' keys and that ExecStart exists;
# with --root it looks in the unpacked root, which gets the host's targets
# and slices for the units' dependencies.
if command -v systemd-analyze >/dev/null && [[ -e /lib/systemd/system/sysinit.target ]]; then
  mkdir -p "$root/lib/systemd/system"
  cp -a /lib/systemd/system/*.target /lib/systemd/system/*.slice "$root/lib/systemd/system/"
  if ! out=$(systemd-analyze verify --root="$root" "$root$unit_dir"/piranha-*.service 2>&1) || [[ -n $out ]]; then
    echo "$out" >&2
    fail "systemd-analyze verify found problems in the units"
  fi
  echo "systemd-analyze verify: units OK"
else
  echo "systemd-analyze verify: not available here, units not verified"
fi

"$root$prefix/bin/piranha" --help | grep -q "ts" || fail "the unpacked piranha --help printed no commands"
echo "piranha --help: OK"
# The live page's module is found from the unpacked program (it looks relative to itself).
out=$(timeout 30 "$root$prefix/bin/piranha" nps run --http 127.0.0.1:0 --server tcp://127.0.0.1:1 --seconds 1 2>&1 || true)
grep -q "the live page is at http://127.0.0.1:" <<<"$out" || fail "the unpacked piranha could not serve the live page: $out"
echo "nps run --http: the page module loads"
unset PIRANHA_SERVER PIRANHA_ROLE PIRANHA_JOB_ID
out=$(PIRANHA_LOCAL_PIRANHAS=2 timeout 60 "$root$prefix/libexec/piranha/examples/hello_job") ||
  fail "the unpacked hello_job failed: $out"
grep -q "sum to 333332833333500000: OK" <<<"$out" || fail "the unpacked hello_job printed: $out"
echo "$out"

if ((build_job)); then
  project=$root/job
  mkdir -p "$project"
  cp "$source_dir/tests/install/consumer/"* "$source_dir/examples/hello_job/hello_job.cc" "$project/"
  cmake -S "$project" -B "$project/build" -G Ninja -DCMAKE_PREFIX_PATH="$root$prefix" >/dev/null
  cmake --build "$project/build" >/dev/null
  out=$(PIRANHA_LOCAL_PIRANHAS=2 timeout 60 "$project/build/hello_job") || fail "hello_job built against piranha-dev failed: $out"
  grep -q ": OK" <<<"$out" || fail "hello_job built against piranha-dev printed: $out"
  echo "built against piranha-dev: $out"
fi
echo "check-debs: OK"
