#!/usr/bin/env bash
# The scale benchmark (docs/scale.md): bench/swarm.sh --nodes 1000,3000,10000 [--json].
# The work is in bench/swarm.py; see --help.
exec python3 "$(dirname "$0")/swarm.py" "$@"
