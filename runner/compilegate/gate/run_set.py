"""A run set: several result documents (one per PyTorch version and/or runner) judged
against one baseline, with the gate's rules and policy unchanged.

A version whose result is missing, unreadable or invalid, or whose run failed before it
wrote one, is a `VersionOutcome` with its error: never a hole in the report. A result
document is read strictly (schema-validated) before anything of it is shown or posted.

A results folder may be a fork's artifact (`publish --untrusted-results`), so it is read
within bounds (issue 51: a 200 MB error.txt cost 1 GB, eight 5.5 MB documents 45 CPU-s):
at most MAX_RESULT_FILES result documents of MAX_RESULT_TOTAL_BYTES in all (over either:
one line, exit 2, nothing judged); of each error.txt only its last MAX_ERROR_TEXT_BYTES are
read and its last line shown, cut at MAX_ERROR_LINE_CHARS; a name that is not UTF-8 text
is that version's error, shown escaped, never written out as it is.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EXIT_OK, EXIT_RUN_ERROR, BaselineError, UsageError
from ..results.model import ResultDocument
from .acceptance import accept, accept_label_of, acceptance_for
from .compare import compare_to_baseline
from .documents import read_document
from .verdict import OVERALL_ORDER, Acceptance, VerdictReport

RESULT_NAME = "result.json"
BASE_SUFFIX = ".base.json"  # a paired run's base beside its result (run/paired.py)
# Written by `compilegate matrix` beside (instead of) result.json when a version failed.
ERROR_NAME = "error.txt"
_VERSION_FOLDER = re.compile(r"^torch-(?P<version>.+)$")
# What one run set reads (module docstring). A real matrix is a few versions of documents
# of 0.3 to 6 MB (docs/security.md); a document is at most 16 MiB (bounded_json.py).
MAX_RESULT_FILES = 64
MAX_RESULT_TOTAL_BYTES = 64 << 20
# The matrix writes error.txt as the log's last 20 lines, then the reason (at most 300
# characters, cli/matrix_command.py): the report shows the last line.
MAX_ERROR_TEXT_BYTES = 16 << 10
MAX_ERROR_LINE_CHARS = 300


@dataclass(frozen=True)
class ResultSource:
    """Where one version's result should be: a file, or the folder the matrix wrote."""

    path: Path
    label_hint: str
    # A paired run's own base for this version (its result.base.json), typed as it came
    # through the door, judged against in place of the run set's baseline.
    baseline: ResultDocument | None = None
    # Why that base could not be read (the version is then an error, the others judged).
    baseline_error: str | None = None
    # A leg of `compilegate plan`'s matrix (config/pool_plan.py): labelled by its leg id
    # (several legs share a PyTorch version), and no folder at all means its job never ran.
    planned_leg: bool = False


@dataclass(frozen=True)
class VersionOutcome:
    """One version of a run set: its document and verdict, or why there is none."""

    label: str
    source: str
    # The result, typed as it came through the door (results/model.py); None: no result.
    document: ResultDocument | None = None
    verdict: VerdictReport | None = None
    error: str | None = None
    # No result document at `source`, and no error file beside it to say why.
    missing: bool = False
    # A leg of `compilegate plan`'s matrix (ResultSource.planned_leg), and one whose job left
    # nothing: no folder, so no artifact was ever uploaded.
    planned_leg: bool = False
    never_ran: bool = False
    # The label that accepts this version's regressions, from the base side it was judged
    # against (gate/acceptance.py); None: acceptance off, or nothing judged.
    accept_label: str | None = None
    # The torch of the document this version was judged against (its own paired base's, or
    # the run set's baseline's): an upgrade check only where it differs from the version's.
    base_torch: str | None = None

    @property
    def torch(self) -> str | None:
        return self.document.environment.torch if self.document is not None else None

    @property
    def overall(self) -> str:
        """The version's verdict: the gate's overall, `error`, or `measured` (no baseline)."""
        if self.error is not None:
            return "error"
        if self.verdict is not None:
            return self.verdict.overall
        return "error" if self.document is None or _run_failed(self.document) else "measured"

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return EXIT_RUN_ERROR
        if self.verdict is not None:
            return self.verdict.exit_code
        return EXIT_RUN_ERROR if self.overall == "error" else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "source": self.source,
            "torch": self.torch,
            "overall": self.overall,
            "exit_code": self.exit_code,
            "error": self.error,  # and a missing document, in report/verdict_json.py's words
            "verdict": self.verdict.to_dict() if self.verdict is not None else None,
        }


@dataclass(frozen=True)
class RunSetVerdict:
    versions: tuple[VersionOutcome, ...]
    baseline_source: str | None = None
    # The baseline, typed as it came through the door; None: nothing to judge against.
    baseline: ResultDocument | None = None

    @property
    def exit_code(self) -> int:
        """The most severe version's, in the order of gate/policy.py: regression (1), then a
        run error (3), then what could not be judged (4)."""
        codes = [v.exit_code for v in self.versions]
        if not codes:
            return EXIT_RUN_ERROR
        nonzero = [c for c in codes if c != EXIT_OK]
        return min(nonzero) if nonzero else EXIT_OK

    @property
    def overall(self) -> str:
        order = OVERALL_ORDER
        seen = [v.overall for v in self.versions]
        for verdict in order:
            if verdict in seen:
                return verdict
        if not seen:
            return "error"
        if all(v == "measured" for v in seen):
            return "measured"
        return "improvement" if "improvement" in seen else "pass"

    def labels_to_accept(self) -> list[str]:
        """The labels that would accept something here: each version's with a regression
        row, as its base side names it (gate/acceptance.py), once."""
        labels: list[str] = []
        for version in self.versions:
            label = version.accept_label
            if label and version.verdict is not None and version.verdict.rows("regression"):
                if label not in labels:
                    labels.append(label)
        return labels

    def accepted(self, acceptances: Sequence[Acceptance]) -> RunSetVerdict:
        """This run set with each version's regressions accepted by the acceptance of the
        label its base side names, alone or naming rows (none: unchanged)."""
        versions = tuple(
            dataclasses.replace(
                version,
                verdict=accept(
                    version.verdict,
                    version.accept_label,
                    acceptance_for(version.accept_label, acceptances),
                ),
            )
            if version.verdict is not None
            else version
            for version in self.versions
        )
        return dataclasses.replace(self, versions=versions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "overall": self.overall,
            "exit_code": self.exit_code,
            "baseline": self.baseline_source,
            "versions": [v.to_dict() for v in self.versions],
        }


def find_results(
    result_paths: Sequence[Path],
    results_dir: Path | None,
    *,
    paired_bases: bool = True,
    planned_legs: Sequence[str] = (),
) -> list[ResultSource]:
    """Named result files, then one source per version folder (`torch-X/`) and per
    `result*.json` file under `results_dir` (the reports written beside them are not results).
    A results dir that does not exist is a usage error.

    `planned_legs`: the leg ids of `compilegate plan`'s matrix, each a folder `results_dir/LEG`
    (its artifact). Each is a source whether or not its folder came: a leg that never ran is
    a row that says so, never a gap (without any artifact the results dir may not exist).

    A paired run writes its base beside each result (`result.base.json`, run/paired.py):
    with `paired_bases` it is that result's baseline, never a result of its own. Without
    (an explicit --baseline, e.g. a trusted one a fork's results are judged against), the
    base documents are ignored: they come from the same run as the results."""
    named = [Path(p) for p in result_paths]
    candidates = [(p, p.stem) for p in named]
    # A plan's legs are each a document (with its base): up to a whole matrix of them.
    max_files = max(MAX_RESULT_FILES, len(planned_legs))
    if planned_legs and results_dir is None:
        raise UsageError("--plan: give --results-dir DIR, where each leg's artifact is a folder")
    if results_dir is not None:
        if not results_dir.is_dir() and not planned_legs:
            raise UsageError(f"--results-dir {results_dir}: no such directory")
        found = []
        entries = results_dir.iterdir() if results_dir.is_dir() else iter(())
        for entry in entries:  # counted as found: the folder may hold millions
            if entry.is_dir():
                found.append((entry / RESULT_NAME, entry.name))
            elif entry.suffix == ".json" and entry.name.startswith("result"):
                if not entry.name.endswith(BASE_SUFFIX):
                    found.append((entry, entry.stem))
            if len(candidates) + len(found) > max_files:
                break
        came = {hint for _, hint in found}
        found += [(results_dir / leg / RESULT_NAME, leg) for leg in planned_legs if leg not in came]
        candidates += sorted(found)
    _check_run_set_size(candidates, results_dir, max_files)
    sources = []
    for path, hint in candidates:
        base = path.with_name(path.stem + BASE_SUFFIX)
        baseline, baseline_error = None, None
        if paired_bases and base.is_file() and _is_text(str(base)):
            try:
                baseline = read_document(base, role="baseline")
            except BaselineError as exc:
                baseline_error = str(exc)
        planned = results_dir is not None and path.parent.parent == results_dir
        sources.append(
            ResultSource(
                path, hint, baseline, baseline_error, planned and hint in set(planned_legs)
            )
        )
    if not sources:
        raise UsageError("no result documents given: pass --result PATH or --results-dir DIR")
    return sources


def judge_run_set(
    sources: Iterable[ResultSource],
    baseline: ResultDocument | None,
    baseline_source: str | None = None,
) -> RunSetVerdict:
    """Read and judge every version against `baseline` (through the door already, named
    `baseline_source`); one version's failure never hides another's result."""
    outcomes = [_judge_one(source, baseline) for source in sources]
    # Versions in version order; legs by their ids (step, then version), whether or not ran.
    outcomes.sort(key=lambda o: _version_key(o.label if o.planned_leg else o.torch or o.label))
    return RunSetVerdict(tuple(outcomes), baseline_source, baseline)


def _judge_one(source: ResultSource, baseline: ResultDocument | None) -> VersionOutcome:
    label = _label(shown_name(source.label_hint))
    where = shown_name(str(source.path))
    if not _is_text(str(source.path)):
        return VersionOutcome(label, where, error=f"{where}: the file's name is not UTF-8 text")
    if not source.path.is_file():
        error_file = source.path.parent / ERROR_NAME
        if error_file.is_file():
            error = _last_error_line(error_file)
            return VersionOutcome(label, where, error=error, planned_leg=source.planned_leg)
        if source.planned_leg and not source.path.parent.is_dir():
            return VersionOutcome(label, where, missing=True, planned_leg=True, never_ran=True)
        return VersionOutcome(label, where, missing=True, planned_leg=source.planned_leg)
    if source.baseline_error is not None:
        return VersionOutcome(label, where, error=source.baseline_error)
    try:
        document = read_document(source.path, role="result")
    except BaselineError as exc:
        return VersionOutcome(label, where, error=str(exc))
    torch = document.environment.torch
    if not source.planned_leg:  # a leg keeps its id: several legs share a version
        label = f"torch {torch}" if torch else label
    if source.baseline is not None:  # a paired run's own base
        baseline = source.baseline
    verdict = None
    if baseline is not None:
        verdict = compare_to_baseline(baseline, document)
    return VersionOutcome(
        label,
        where,
        document=document,
        verdict=verdict,
        accept_label=accept_label_of(baseline),
        planned_leg=source.planned_leg,
        base_torch=baseline.environment.torch if baseline is not None else None,
    )


def _check_run_set_size(
    candidates: Sequence[tuple[Path, str]],
    results_dir: Path | None,
    max_files: int = MAX_RESULT_FILES,
) -> None:
    """UsageError, one line, when the run set passes `max_files` (MAX_RESULT_FILES, or a
    plan's legs) or MAX_RESULT_TOTAL_BYTES (their sizes from stat: nothing is read)."""
    where = f"--results-dir {shown_name(str(results_dir))}" if results_dir else "--result"
    if len(candidates) > max_files:
        raise UsageError(
            f"{where}: more than {max_files} result documents, more than a run set "
            "reads (MAX_RESULT_FILES, or the plan's legs)"
        )
    total_bytes = 0
    for path, _ in candidates:
        for file in (path, path.with_name(path.stem + BASE_SUFFIX)):
            try:
                total_bytes += file.stat().st_size if file.is_file() else 0
            except OSError:
                continue
    if total_bytes > MAX_RESULT_TOTAL_BYTES:
        raise UsageError(
            f"{where}: {total_bytes} bytes of result documents, more than a run set reads "
            f"({MAX_RESULT_TOTAL_BYTES >> 20} MiB, MAX_RESULT_TOTAL_BYTES)"
        )


def _last_error_line(path: Path) -> str:
    """The last line of a failed version's error.txt, read from its last
    MAX_ERROR_TEXT_BYTES only and cut at MAX_ERROR_LINE_CHARS."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - MAX_ERROR_TEXT_BYTES))
            tail = handle.read(MAX_ERROR_TEXT_BYTES)
    except OSError as exc:
        return f"the run failed ({ERROR_NAME} unreadable: {exc.strerror or exc})"
    lines = tail.decode("utf-8", errors="replace").strip().splitlines()
    if not lines:
        return "the run failed"
    line = " ".join(lines[-1].split())
    return line if len(line) <= MAX_ERROR_LINE_CHARS else line[: MAX_ERROR_LINE_CHARS - 1] + "…"


def shown_name(name: str) -> str:
    """A file name as text: the bytes of a name that is not UTF-8 (a fork's artifact may
    hold one; the file system hands them over as lone surrogates, which no UTF-8 writer
    writes) shown escaped, `torch-\\udcff`."""
    return name.encode("utf-8", errors="backslashreplace").decode("utf-8")


def _is_text(name: str) -> bool:
    return _SURROGATE.search(name) is None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _label(hint: str) -> str:
    match = _VERSION_FOLDER.match(hint)
    return f"torch {match['version']}" if match else hint


def _version_key(text: str) -> tuple[Any, ...]:
    """`torch 2.10.0` after `torch 2.9.1`: numeric parts compare as numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.+ -]", text))


def _run_failed(document: ResultDocument) -> bool:
    return any(step.failed or any(v.failed for v in step.variants) for step in document.steps)
