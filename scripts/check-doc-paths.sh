#!/usr/bin/env bash
# Checks that every path a document names exists, so that a picture of the
# tree (docs/architecture.md) stays true when files move. Exits 1 and lists
# the missing paths, 0 when all exist.
#
#   scripts/check-doc-paths.sh docs/architecture.md [more.md ...]
#
# A path is a word that starts with one of the tree's top-level folders
# (tuplespace/src/codec.cc, nps/, scheduler/src/strategies/), and counts as
# existing if it is there from the root or, for a header, under some module's
# include/ (piranha/runtime/job.h); a word with "..." or "<" in it is a
# pattern, not a path. Markdown links to files (architecture.md's
# (protocol.md)) are checked from the document's own folder, and a link's
# #anchor against the headings of the document it names, as GitHub makes
# their anchors (scale.md's links into performance-history.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
(($#)) || { echo "usage: scripts/check-doc-paths.sh FILE.md..." >&2; exit 2; }

# The top-level folders: tracked ones when this is a git checkout, otherwise
# those present but for build directories.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t tops < <(git ls-files | sed -n 's|/.*||p' | sort -u)
else
  mapfile -t tops < <(find . -mindepth 1 -maxdepth 1 -type d ! -name 'build*' ! -name '.*' -printf '%f\n' | sort)
fi
is_top() {
  local t
  for t in "${tops[@]}"; do [[ $1 == "$t" ]] && return 0; done
  return 1
}

exists() {
  [[ -e $1 ]] && return 0
  # A header named by its include path: <module>/include/<path>, at any depth.
  [[ $1 == *.h ]] && compgen -G "*/include/$1" >/dev/null && return 0
  [[ $1 == *.h ]] && compgen -G "*/*/include/$1" >/dev/null && return 0
  return 1
}

# The anchors GitHub gives a document's headings (outside code blocks): the
# text lowercased, every character but letters, digits, spaces, "-" and "_"
# dropped (an en dash too), spaces made "-", and a repeated one numbered.
anchors_of() {
  python3 - "$1" <<'PY'
import re, sys
seen = {}
fenced = False
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("```"):
        fenced = not fenced
        continue
    m = None if fenced else re.match(r"#{1,6} +(.*?) *#* *$", line.rstrip("\n"))
    if not m:
        continue
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))  # a link's words
    slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
    n = seen.get(slug, 0)
    seen[slug] = n + 1
    print(slug if n == 0 else f"{slug}-{n}")
PY
}
declare -A anchors  # file -> its anchors, one a line

missing=0
for doc in "$@"; do
  [[ -f $doc ]] || { echo "check-doc-paths.sh: no such file: $doc" >&2; exit 2; }
  dir=$(dirname "$doc")
  # Words that may be paths, with the line each is on.
  while IFS=: read -r line word; do
    [[ $word == */* ]] || continue
    [[ $word == *...* || $word == *'<'* ]] && continue
    word=${word%%[.,:;]}
    is_top "${word%%/*}" || continue
    if ! exists "$word"; then
      echo "$doc:$line: $word does not exist"
      missing=$((missing + 1))
    fi
  done < <(grep -noE '[<A-Za-z0-9_+.-]+(/[<>A-Za-z0-9_+.-]*)+' "$doc")
  # Markdown links to files, from the document's folder.
  while IFS=: read -r line target; do
    target=${target#](}
    anchor=
    [[ $target == *#* ]] && anchor=${target#*#}
    target=${target%%#*}
    [[ $target == *:* ]] && continue
    file=$dir/$target
    [[ -z $target ]] && file=$doc
    if [[ ! -e $file ]]; then
      echo "$doc:$line: link to $target: $file does not exist"
      missing=$((missing + 1))
      continue
    fi
    # An anchor in a Markdown document: one of its headings'.
    [[ -z $anchor || $file != *.md ]] && continue
    [[ -v anchors[$file] ]] || anchors[$file]=$(anchors_of "$file")
    if ! grep -qxF -- "$anchor" <<<"${anchors[$file]}"; then
      echo "$doc:$line: link to ${target:-this document}#$anchor: no such heading in $file"
      missing=$((missing + 1))
    fi
  done < <(grep -noE '\]\([^) ]+' "$doc")
done
if ((missing)); then
  echo "check-doc-paths.sh: $missing path(s) named in $* do not exist" >&2
  exit 1
fi
