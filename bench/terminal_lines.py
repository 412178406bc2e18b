"""How many terminal lines `compilegate run` prints, from stored result documents (no compile).

stdout: the run text (report/run_text.py) of the H200 run of 2026-12-04 (one step, two
variants, 4 processes each; tests/unit/data/h200-2026-12-04) in four cases:

    alone              run 1, no baseline
    baseline passing   run 2 against run 1 as a stored baseline (unclear: inside the noise)
    baseline failing   run 2 with a graph break planted in one variant, against run 1
    against            run 2 against run 1 paired (the documents marked as base and head)

Lines are counted as a terminal of that width shows them (a longer line takes more rows),
at 80 and 100 columns; and the numbers wrapping broke (`11,0` / `00`).
stderr: the progress lines of run 1's log (../shared/reference/gpu-runs/2026-12-04/run1.log)
replayed through the relay (run/launcher.relay_output): the children's phases as they
arrived, the parent's own lines as they were; quiet and with --verbose.

Run: `PYTHONPATH=runner python bench/terminal_lines.py [--show CASE] [--width 80]`.
"""

from __future__ import annotations

import argparse
import collections
import copy
import gzip
import io
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from compilegate.child.protocol import Phase, progress_prefix
from compilegate.report.judge_and_render import judge_result
from compilegate.report.run_text import render_run_text
from compilegate.report.tables import display_width
from compilegate.results.model import parse
from compilegate.run.launcher import ChildOutcome, relay_output

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests" / "unit"))
from h200_runs import as_recorded_today  # noqa: E402  (the runs as recorded today)

DATA = REPO_ROOT / "tests" / "unit" / "data" / "h200-2026-12-04"
NANOGPT = REPO_ROOT / "tests" / "unit" / "data" / "nanogpt"
RUN_LOG = Path("shared", "reference", "gpu-runs", "2026-12-04", "run1.log")
PHASE = re.compile(r"^  (\S+ \[ *[0-9.]+s\] .*)$")
NUMBER = re.compile(r"[−+±(]?[0-9][0-9,.]*(?:[–-][0-9][0-9,.]*\)?)?(?: ?(?:%|ms|s|×|steps))?")


def load(name: str) -> dict[str, Any]:
    return json.loads(gzip.decompress((DATA / name).read_bytes()))


def paired(document: dict[str, Any], role: str) -> dict[str, Any]:
    document = copy.deepcopy(document)
    document["pairing"] = {"id": "bench", "role": role, "base_label": "base", "head_label": "head"}
    return document


def with_graph_break(document: dict[str, Any]) -> dict[str, Any]:
    document = copy.deepcopy(document)
    variant = document["steps"][0]["variants"][1]
    site = {"file": "model.py", "line": 181, "reason": "Tensor.item()", "count": 1}
    variant["graph_breaks"] = {"count": 1, "sites": [{**site, "in_repo": True}]}
    return document


def cases() -> dict[str, tuple[dict[str, Any] | None, dict[str, Any]]]:
    # as a run records them today: its numerics' facts as fields (tests/unit/h200_runs.py)
    run1, run2 = (as_recorded_today(load(f"run{n}-result.json.gz")) for n in (1, 2))
    return {
        "alone": (None, run1),
        "baseline passing": (run1, run2),
        "baseline failing": (run1, with_graph_break(run2)),
        "against": (paired(run1, "base"), paired(run2, "head")),
        # A real repository's failing PR (karpathy/nanoGPT, a graph break in attention), CPU.
        "nanoGPT failing": (
            json.loads((NANOGPT / "baseline.json").read_text()),
            json.loads((NANOGPT / "head.json").read_text()),
        ),
    }


def run_text(baseline: dict[str, Any] | None, document: dict[str, Any], width: int) -> str:
    """The stdout of `compilegate run` for these documents, as run_command lays it out."""
    if baseline is None:
        typed = parse(document, "r.json")
        return render_run_text(typed, width=width, where_lines=["result written to r.json"])
    base = parse(baseline, "b.json", "baseline")
    result = parse(document, "r.json", "result")
    _, run_set = judge_result(base, result, result_path="r.json", baseline_path="b.json")
    return render_run_text(
        run_set.versions[0].document,
        width=width,
        run_set=run_set,
        where_lines=["result written to r.json"],
        every_row_command="compilegate compare --baseline b.json --result r.json",
    )


def terminal_rows(text: str, columns: int) -> int:
    return sum(max(1, math.ceil(display_width(line) / columns)) for line in text.splitlines())


def broken_numbers(baseline: dict[str, Any] | None, document: dict[str, Any], width: int) -> int:
    """Numbers (with their unit) laid out unbroken at 1000 columns that no line at `width`
    holds whole: what wrapping split."""
    wide = run_text(baseline, document, 1000)
    lines = [" ".join(line.split()) for line in run_text(baseline, document, width).splitlines()]
    found = {m.group(0) for m in NUMBER.finditer(wide)}
    return sum(1 for number in found if not any(number in line for line in lines))


def stderr_lines(verbose: bool) -> int:
    """run1.log's progress replayed: each child's phases through the relay."""
    out = io.StringIO()
    token = "bench"
    log = next(p / RUN_LOG for p in REPO_ROOT.parents if (p / RUN_LOG).is_file())
    for line in log.read_text(encoding="utf-8").splitlines():
        found = PHASE.match(line)
        if found:
            outcome = ChildOutcome(None, None)
            relay_output(
                [f"{progress_prefix(token)}{Phase.OTHER.name} {found.group(1)}"],  # a log: no phase
                outcome,
                collections.deque(),
                out,
                progress_token=token,
                show_output=verbose,
            )
        elif line.startswith("["):
            out.write(line + "\n")
    return len(out.getvalue().splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", default=None, help="print this case's text")
    parser.add_argument("--width", type=int, default=80)
    args = parser.parse_args()
    for name, (baseline, document) in cases().items():
        if args.show == name:
            print(run_text(baseline, document, args.width), end="")
            return
        counts = []
        for columns in (80, 100):
            text = run_text(baseline, document, columns)
            lines = text.splitlines()
            counts.append(
                f"{columns} cols: {terminal_rows(text, columns):3} rows, "
                f"{broken_numbers(baseline, document, columns)} numbers broken, "
                f"first line also last {lines[0] in lines[-4:]}"
            )
        print(f"stdout {name:17} " + " | ".join(counts))
    print(f"stderr run1.log replayed: {stderr_lines(False)} lines, --verbose {stderr_lines(True)}")


if __name__ == "__main__":
    main()
