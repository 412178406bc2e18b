"""The judge→report pipeline: a result judged against its baseline (gate/compare.py), and
the verdicts rendered as `compilegate compare`, `compilegate run --baseline` and the PR comment
show them (JSON, markdown or the terminal's table), written as JSON where asked.

The CLI parses arguments and reads the files; it calls these. This is the one place that joins
the gate's facts to the report's words for a single comparison: the gate never renders
(tests/unit/test_layout.py), so the pipeline lives on the report's side of that line.

    compare_and_report(baseline, result_doc, out, stream)   judge, write the verdicts; exit code
    compare_documents(baseline, result, out, stream, fmt)   the same, both documents typed
    judge_result(baseline, result, ...)                      the report and its run set of one
                                                             version (`compilegate run`)
    render_report(report, fmt, run_set)                      the verdicts as text
    one_version_run_set(report, result, baseline, paths)     a comparison as a run set
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from ..errors import UsageError
from ..gate.acceptance import accept_label_of
from ..gate.compare import compare_to_baseline
from ..gate.documents import read_document
from ..gate.run_set import RunSetVerdict, VersionOutcome
from ..gate.verdict import VerdictReport
from ..results.document import write_document
from ..results.model import ResultDocument, parse
from .comment import render_comment
from .links import LinkContext
from .run_set_text import render_run_set_text
from .verdict_json import verdict_json

# What `--format` may name (`compilegate compare`).
FORMATS = ("table", "markdown", "json")


def compare_and_report(
    baseline: Path | str | ResultDocument,
    result_doc: Mapping[str, Any],
    out_path: Path | str | None,
    stream: TextIO,
    *,
    fmt: str = "table",
    thresholds_override: Mapping[str, float] | None = None,
    result_path: Path | str | None = None,
    baseline_path: Path | str | None = None,
) -> int:
    """Compare an in-memory result (checked like a result file) with the baseline (a file, or
    a document already through the door); write the verdicts; the exit code. The result
    passes the door of results/model.py once, here.
    `result_path`, where the result was written, goes into the command that would refresh
    the baseline from it; `baseline_path`, where an in-memory baseline was read from."""
    if isinstance(baseline, ResultDocument):
        base = baseline
    else:
        baseline_path = baseline
        base = read_document(baseline, role="baseline")
    result = parse(result_doc, str(result_path or "result"), "result")
    paths = (result_path, baseline_path) if result_path is not None else None
    return compare_documents(base, result, out_path, stream, fmt, thresholds_override, paths)


def compare_documents(
    baseline: ResultDocument,
    result: ResultDocument,
    out_path: Path | str | None,
    stream: TextIO,
    fmt: str,
    override: Mapping[str, float] | None,
    paths: tuple[Path | str | None, Path | str | None] | None = None,
) -> int:
    """Judge the documents (each through the door once, by the caller) and write the
    report."""
    report = compare_to_baseline(baseline, result, override)
    result_path, baseline_path = paths or (None, None)
    if result_path is not None and baseline_path is not None:
        report = report.with_paths(result_path, baseline_path)
    text = render_report(report, fmt, one_version_run_set(report, result, baseline, paths))
    if out_path is not None:  # written before printing: nothing is lost if the stream fails
        try:
            write_document(verdict_json(report), Path(out_path))
        except OSError as exc:
            raise UsageError(f"{out_path}: cannot write verdicts: {exc.strerror or exc}") from None
    stream.write(text)
    return report.exit_code


def judge_result(
    baseline: ResultDocument,
    result: ResultDocument,
    *,
    result_path: Path | str,
    baseline_path: Path | str,
    refresh_baseline: Path | str | None = None,
) -> tuple[VerdictReport, RunSetVerdict]:
    """A result just measured judged against a baseline, both already through the door
    (the caller parsed each once), as the report and the run set of one version
    `compilegate run` prints. `refresh_baseline`: the baseline an intended change is
    recorded into (the config's `baseline:`), when not the file compared with (a scratch
    copy given with --baseline)."""
    report = compare_to_baseline(baseline, result).with_paths(
        result_path, refresh_baseline or baseline_path
    )
    return report, one_version_run_set(report, result, baseline, (result_path, baseline_path))


def render_report(
    report: VerdictReport,
    fmt: str,
    run_set: RunSetVerdict | None = None,
) -> str:
    """The verdicts as JSON, or the same report `compilegate report` and the PR comment give
    (`run_set`: this comparison as a run set of one version)."""
    if fmt == "json":
        return json.dumps(verdict_json(report), indent=2) + "\n"
    if run_set is None:
        raise UsageError(f"--format {fmt}: needs the result document")
    if fmt == "markdown":
        return render_comment(run_set, links=LinkContext.from_environ())
    if fmt == "table":
        return render_run_set_text(run_set, LinkContext.from_environ())
    raise UsageError(f"--format {fmt}: expected one of {', '.join(FORMATS)}")


def one_version_run_set(
    report: VerdictReport,
    result: ResultDocument,
    baseline: ResultDocument,
    paths: tuple[Path | str | None, Path | str | None] | None,
) -> RunSetVerdict:
    """A comparison of one result as the run set `compilegate report` would make of it."""
    result_path, baseline_path = paths or (None, None)
    torch = result.environment.torch
    version = VersionOutcome(
        f"torch {torch}" if torch else "this run",
        str(result_path or "result.json"),
        document=result,
        verdict=report,
        accept_label=accept_label_of(baseline),
        base_torch=baseline.environment.torch,
    )
    where = str(baseline_path) if baseline_path else None
    return RunSetVerdict((version,), where, baseline)
