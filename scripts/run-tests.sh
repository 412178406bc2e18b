#!/usr/bin/env bash
# Run the test suite with the given interpreter; pytest's "no tests collected" (exit 5)
# is a failure here, not a silent pass.
#
# TEST_LANES=2 (make test LANES=2, what CI runs) runs the whole suite as two pytest processes
# side by side, split by marker into halves of about the same length: the tests marked
# `docker` or `old_torch` (the engine building images and starting containers; the older
# torch's runs) or `lane_beside` (tests/integration/test_distributed.py, both torches,
# test_time_to_verdict.py and containers/test_venv_matrix.py), and everything else. A
# clean-clone CI run at fca64cc, before
# `lane_beside`, took 36.5 min in the rest and 29.1 min in the docker/old-torch lane; at
# 3b8a56c, with it, 34.3 and 33.4 min; at 528fd90, 34.4 and 35.3 min (37.0 in all). At
# 27bcd4a (issue 53: the Dynamo-only diagnostics steps, `lm-2mb` and the requirements tests
# under Dynamo alone, test_venv_matrix.py moved here; CONTRIBUTING.md says which and why),
# 31.5 min in the rest and 31.7 here, 33.4 min (2,001 s) in all with the set-up. The old
# torch's diagnostics setup took 325 s (405 at 528fd90), the current torch's 251 (321), the
# distributed module run 244 and 169 s (279 and 241).
# One pytest alone left about a third of the two CPUs idle (load average 1.1-1.5). The first lane's log is printed when
# both are done; each lane's exit 5 is a failure too. Any other value: one process.
set -uo pipefail
python="$1"; shift

fail_on_none() {  # pytest's exit code, with 5 (no tests collected) made a failure
  if [ "$1" -eq 5 ]; then
    echo "run-tests: pytest collected no tests${2:+ in $2}: failing" >&2
    return 1
  fi
  return "$1"
}

if [ "${TEST_LANES:-1}" != 2 ]; then
  "$python" -m pytest "$@"
  fail_on_none $? ""
  exit $?
fi

beside="docker or old_torch or lane_beside"
beside_log="$(mktemp)"
beside_tmp="$(mktemp -d)"  # its own --basetemp: the lanes never share a tmp_path root
"$python" -m pytest "$@" -m "$beside" --basetemp="$beside_tmp/basetemp" >"$beside_log" 2>&1 &
beside_pid=$!
"$python" -m pytest "$@" -m "not ($beside)"
rest_code=$?
wait "$beside_pid"
beside_code=$?
echo "run-tests: the lane of the tests marked '$beside', run beside the rest:"
cat "$beside_log"
rm -rf "$beside_log" "$beside_tmp"
fail_on_none "$rest_code" "the other lane" || rest_code=$?
fail_on_none "$beside_code" "the lane '$beside'" || beside_code=$?
echo "run-tests: lane '$beside' exit $beside_code, the other lane exit $rest_code"
[ "$rest_code" -eq 0 ] && [ "$beside_code" -eq 0 ]
