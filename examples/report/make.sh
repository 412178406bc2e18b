#!/usr/bin/env bash
# Reproduce examples/report/comment.md and its pictures.
#
#   examples/report/make.sh            measure again: a baseline on the project's torch, then
#                                      the same steps on that torch and on an older one (the
#                                      venv `make old-torch-env` caches); about 25 min on 2 cores
#   examples/report/make.sh --render   render again from the stored documents only
#
# The documents are kept in examples/report/ (baseline.json, results/torch-*/result.json), so
# the comment can be re-rendered from what was measured without measuring again.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=.venv/bin
here=examples/report
if [ "${1:-}" != "--render" ]; then
  old_python="${COMPILEGATE_OLD_PYTHON:-$HOME/.cache/compilegate/torch-2.4.1/bin/python}"
  config=$here/compilegate.yml
  scratch=out/example-report
  rm -rf "$scratch" "$here/results"
  "$bin/compilegate" run --config "$config" --repo . --out "$scratch/baseline-run.json"
  rm -f "$here/baseline.json"
  "$bin/compilegate" baseline update --result "$scratch/baseline-run.json" \
    --baseline "$here/baseline.json"
  current=$("$bin/python" -c "import torch; print(torch.__version__.split('+')[0])")
  old=$("$old_python" -c "import torch; print(torch.__version__.split('+')[0])")
  "$bin/compilegate" run --config "$config" --repo . \
    --out "$here/results/torch-$current/result.json" || true
  "$bin/compilegate" run --config "$config" --repo . --python "$old_python" \
    --out "$here/results/torch-$old/result.json" || true
fi
"$bin/compilegate" report --results-dir "$here/results" --baseline "$here/baseline.json" \
  --format markdown --out "$here/comment.md" || true
"$bin/python" tests/browser/render_comment.py "$here/comment.md" "$here/comment.png"
mkdir -p out/example-report  # every <details> open: a tall picture, kept out of the repository
"$bin/python" tests/browser/render_comment.py "$here/comment.md" out/example-report/comment-open.png --open
"$bin/compilegate" report --results-dir "$here/results" --baseline "$here/baseline.json" \
  --format text || true
