"""One commit measured for a bisection (`compilegate bisect`, results/bisect.py): a fresh
worktree at the commit (run/paired.py's checkout), and per step and variant one counting
child (child/measure.py's `counts_only`: the variant's first process without its timed
rounds), on the same interpreter and under the config of this checkout (the head's, read as
policy is: a commit's own compilegate.yml is not read, so only its code moves a count).
Eager's step work comes from the first variant's child (the same pass over the same copy an
eager process counts).

A commit whose entry does not resolve, whose step does not import or raises, or whose child
crashes is skipped, with the first failure's one line (results/bisect.Skipped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from ..child.protocol import ChildSpec
from ..config import Config, StepConfig
from ..config import Variant as VariantConfig
from ..errors import CompilegateError
from ..report.child_failure_words import failure_text
from ..results.bisect import EAGER, Commit, CommitCounts, Probed, Skipped, SubjectCounts
from ..results.model import CompileCounts, GraphBreaks, Model, Recompiles, part_of
from .child_failure import not_finite
from .child_runs import Measured, one_line, run_child
from .entry_check import resolve_entry
from .launcher import Launcher
from .paired import checkout
from .step_measurement import _variant_cache as variant_cache
from .step_measurement import _variant_spec as variant_spec


@dataclass(frozen=True)
class CommitProbe:
    """Measures a commit's counts (module docstring)."""

    config: Config
    launcher: Launcher

    def __call__(self, commit: Commit) -> Probed:
        with checkout(self.config.repo_root, commit.sha) as (tree, _):
            steps: dict[str, dict[str, SubjectCounts]] = {}
            for index, step in enumerate(self.config.steps):
                where = f"{commit.short}: steps[{index}].entry"
                try:
                    entry = resolve_entry(step.entry, tree, where)
                except CompilegateError as exc:
                    return Skipped(str(exc))
                subjects: dict[str, SubjectCounts] = {}
                for variant in step.variants:
                    spec = ChildSpec(
                        kind="variant",
                        repo_root=str(tree),
                        entry=entry,
                        step=step.name,
                        device=step.device,
                        settings=step.measurement_settings(),
                        variant=variant_spec(variant),
                        counts_only=True,
                    )
                    counted = self._count(spec, step, variant, commit)
                    if isinstance(counted, Skipped):
                        return counted
                    eager, subject = counted
                    subjects.setdefault(EAGER, eager)
                    subjects[variant.id] = subject
                steps[step.name] = subjects
        return CommitCounts(steps)

    def _count(
        self, spec: ChildSpec, step: StepConfig, variant: VariantConfig, commit: Commit
    ) -> tuple[SubjectCounts, SubjectCounts] | Skipped:
        label = f"{step.name}@{commit.short}/{variant.id}"
        with variant_cache(self.launcher) as cache:  # a cold compile, as a first process's
            measured, error = run_child(self.launcher, spec, step, label, cache_dir=cache)
        if error is not None or measured is None:
            return Skipped(f"step {step.name}, variant {variant.id}: {error}")
        found = not_finite(measured.variant) or not_finite(measured.eager, "eager.")
        if found is not None:  # a part holding NaN is not read (results/process_report.py)
            return Skipped(f"step {step.name}, variant {variant.id}: {failure_text(found)}")
        try:
            return subject_counts(measured)
        except Exception as exc:  # a report this parent cannot read: that commit's failure
            return Skipped(
                f"step {step.name}, variant {variant.id}: compilegate could not record this "
                f"measurement: {one_line(exc)}"
            )


def subject_counts(measured: Measured) -> tuple[SubjectCounts, SubjectCounts]:
    """Eager's and the variant's counts from one counting child's report (its process parts
    and numerics typed at the door: run/child_runs.py), its diagnostics typed through the
    result document's own parts."""
    diagnostics = measured.report.diagnostics or {}
    breaks, recompiles = diagnostics.get("graph_breaks"), diagnostics.get("recompiles")
    variant = SubjectCounts(
        step_work=measured.variant.step_work,
        compile_counts=measured.variant.compile.counts or CompileCounts(),
        graph_breaks=_typed(GraphBreaks, breaks),
        recompiles=_typed(Recompiles, recompiles),
        numerics=measured.numerics,
    )
    return SubjectCounts(step_work=measured.eager.step_work), variant


PartT = TypeVar("PartT", bound=Model)


def _typed(cls: type[PartT], raw: object) -> PartT | None:
    return part_of(cls, raw) if isinstance(raw, dict) else None
