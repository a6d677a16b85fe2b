#!/usr/bin/env bash
# Checks that every tracked C++ file (*.cc, *.h) is formatted as clang-format
# formats it with the root's .clang-format. Prints each file that differs with
# the start of its diff and exits 1; exits 0 when none differs, 2 when the
# right clang-format is missing.
#
#   scripts/check-format.sh          # check (CI: scripts/test.sh)
#   scripts/check-format.sh --fix    # rewrite the files that differ, in place
#
# The version is pinned to Debian 12's clang-format 14: other versions format
# some constructs differently, so an unpinned check would fail or pass by the
# machine it runs on. Left out: the fuzz corpus (tests/fuzz/corpus, binary
# inputs) and any file that says "@generated" in its first five lines.
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
  "") ;;
  --fix) fix=1 ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '/^set -euo/d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "check-format.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
esac

# clang-format 14: clang-format-14, or a clang-format that says it is 14.
cf=""
if command -v clang-format-14 >/dev/null; then
  cf=clang-format-14
elif command -v clang-format >/dev/null && clang-format --version | grep -Eq 'version 14\.'; then
  cf=clang-format
fi
if [[ -z $cf ]]; then
  found=$(command -v clang-format >/dev/null && clang-format --version || echo "no clang-format on PATH")
  echo "check-format.sh: needs clang-format 14 (Debian 12's; apt-get install clang-format-14)," \
    "found: $found" >&2
  exit 2
fi

files=()
while IFS= read -r -d '' f; do
  [[ $f == tests/fuzz/corpus/* ]] && continue
  head -n 5 -- "$f" | grep -q '@generated' && continue
  files+=("$f")
done < <(git ls-files -z -- '*.cc' '*.h')

# Each file's output compared with the file, a few files per clang-format
# process and one process per CPU; the files that differ, sorted.
differ=()
if ((${#files[@]})); then
  mapfile -t differ < <(printf '%s\0' "${files[@]}" |
    xargs -0 -n 16 -P "$(nproc)" sh -c 'for f; do "$0" --style=file -- "$f" | cmp -s - "$f" || echo "$f"; done' "$cf" |
    LC_ALL=C sort)
fi

if ((${#differ[@]} == 0)); then
  echo "check-format.sh: ${#files[@]} files formatted as $cf formats them"
  exit 0
fi

if ((fix)); then
  "$cf" --style=file -i -- "${differ[@]}"
  echo "check-format.sh: reformatted ${#differ[@]} of ${#files[@]} files with $cf"
  exit 0
fi

# The start of each file's diff: enough to see what is wrong without flooding a CI log.
for f in "${differ[@]}"; do
  echo "== $f"
  "$cf" --style=file -- "$f" | diff -u --label "$f" --label "$f (clang-format)" -- "$f" - | sed -n '3,22p' || true
done
echo
echo "check-format.sh: ${#differ[@]} of ${#files[@]} files differ from $cf's output:"
printf '  %s\n' "${differ[@]}"
echo "Run scripts/check-format.sh --fix to rewrite them."
exit 1
