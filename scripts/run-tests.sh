#!/usr/bin/env bash
# Run the test suite with the given interpreter; pytest's "no tests collected" (exit 5)
# is a failure here, not a silent pass.
set -uo pipefail
python="$1"; shift
"$python" -m pytest "$@"
code=$?
if [ "$code" -eq 5 ]; then
  echo "run-tests: pytest collected no tests: failing" >&2
  exit 1
fi
exit "$code"
