#!/usr/bin/env bash
# Reproduce examples/report/comment.md: a baseline on the project's torch, then the same
# steps on that torch and on an older one (the venv `make old-torch-env` caches), one report.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=.venv/bin
old_python="${COMPILEGATE_OLD_PYTHON:-$HOME/.cache/compilegate/torch-2.4.1/bin/python}"
out=out/example-report
config=examples/report/compilegate.yml
rm -rf "$out"
"$bin/compilegate" run --config "$config" --repo . --out "$out/baseline-run.json"
"$bin/compilegate" baseline update --result "$out/baseline-run.json" --baseline "$out/baseline.json"
current=$("$bin/python" -c "import torch; print(torch.__version__.split('+')[0])")
old=$("$old_python" -c "import torch; print(torch.__version__.split('+')[0])")
"$bin/compilegate" run --config "$config" --repo . --out "$out/torch-$current/result.json" || true
"$bin/compilegate" run --config "$config" --repo . --python "$old_python" \
  --out "$out/torch-$old/result.json" || true
"$bin/compilegate" report --results-dir "$out" --baseline "$out/baseline.json" \
  --format markdown --out examples/report/comment.md || true
"$bin/compilegate" report --results-dir "$out" --baseline "$out/baseline.json" --format text
