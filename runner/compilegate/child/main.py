"""The child process: imports user code and torch, measures, writes one JSON file.

Started by run/launcher.py as `<python> -c <bootstrap> SPEC.json`, possibly under another
interpreter with another torch (and Python down to 3.8), so only the standard library and
torch are imported. The bootstrap took the repository (the working directory) off sys.path;
every harness module is imported before user code puts the repository back
(import_harness), so a repository file named like a standard-library module (json.py,
logging.py) never replaces what the harness imports.
A user's mistake becomes {"status": "error", "error": "..."} in the output file and exit 0;
a crash (abort, signal, OOM kill) leaves no file, and the parent reports it.
Progress lines on stderr start with the spec's progress prefix (protocol.progress_prefix);
the parent shows them.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from .control import ControlLine
from .distributed import RankGroup
from .protocol import (
    SPARE_ARGUMENT,
    ChildReport,
    ChildSpec,
    Phase,
    SpecError,
    progress_line,
)


class Child:
    def __init__(
        self,
        spec: ChildSpec,
        spec_path: str = "",
        rank: tuple[int, str] | None = None,
        control: ControlLine | None = None,
    ) -> None:
        """`rank`: (rank, the group's folder) in a distributed step's rank process
        (child/distributed.py); `spec_path`: the spec's file, which the ranks read too;
        `control`: the line to the parent (child/control.py), None: nothing waits."""
        self.spec = spec
        self.control = control if control is not None else ControlLine()
        self.group: RankGroup | None = None  # a rank's membership of its group (join_group)
        self.spec_path = spec_path
        self.rank = rank
        self.out_path = Path(spec.out)
        self.doing = "starting"  # the last progress message (what a user's error says)
        self.label = spec.label
        self.started = time.perf_counter()
        self.phases_s: dict[str, float] = {}  # seconds per phase (protocol.Phase)
        self.phase, self._phase_started = Phase.START, self.started

    def progress(self, phase: Phase, message: str) -> None:
        """Say what the child does now: `phase` is a field of the line, `message` its words."""
        self.doing = message
        self._close_phase(phase)
        if self.rank is not None and self.rank[0] != 0:  # rank 0 speaks for the group
            return
        elapsed = time.perf_counter() - self.started
        line = progress_line(self.spec.progress_token, phase, self.label, elapsed, message)
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def _close_phase(self, following: Phase) -> None:
        """Charge the time since the current phase began to it; `following` begins now."""
        now = time.perf_counter()
        spent = now - self._phase_started
        name = self.phase.value
        self.phases_s[name] = round(self.phases_s.get(name, 0.0) + spent, 3)
        self.phase, self._phase_started = following, now

    def write(self, document: dict[str, Any]) -> None:
        """The report, in the shape the parent reads (protocol.ChildReport)."""
        report = ChildReport.from_json(document)
        tmp = self.out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(report.to_json()), encoding="utf-8")
        os.replace(tmp, self.out_path)

    def run(self) -> None:
        from .environment import describe_environment
        from .user_code import StepDefinitionError, describe_user_exception

        document: dict[str, Any] = {"status": "ok", "error": None}
        try:
            import_harness()
            document["environment"] = describe_environment()
            if self.spec.kind == "probe":
                self.write(document)
                return
            document["device"] = self.resolve_device(document["environment"])
            if self.spec.settings.get("distributed") and self.rank is None:
                from .ranks import run_ranks

                folder = self.out_path.parent / "ranks"
                ranks = run_ranks(
                    self.spec_path, self.spec.settings, document["device"], folder, self.progress
                )
                document.update(ranks)
                self.write(document)
                return
            if self.rank is not None:
                self.group = self.join_group(document["device"])
            measured = self.measure(document["device"])
            self._close_phase(Phase.OTHER)
            for key in ("eager", "variant"):  # the process's record carries its phases
                if key in measured:
                    measured[key]["phases_s"] = dict(self.phases_s)
            document.update(measured)
            if self.group is not None:
                from .distributed import rank_facts

                document["distributed"] = rank_facts(document, self.group)
        except (StepDefinitionError, DeviceError) as exc:
            document.update(status="error", error=str(exc), **self._where())
        except Exception as exc:
            repo_root = Path(self.spec.repo_root or ".")
            message = describe_user_exception(exc, repo_root)
            document.update(
                status="error",
                error=f"{self.doing}: {message}",
                **self._where(),
                traceback=traceback.format_exc(limit=-8),
            )
        self.write(document)

    def _where(self) -> dict[str, str]:
        """Where an error found the child: its phase and its last progress message."""
        return {"phase": self.phase.value, "doing": self.doing}

    def join_group(self, device: str) -> RankGroup:
        from .distributed import join_group, place_of

        assert self.rank is not None
        rank, folder = self.rank
        self.progress(Phase.OTHER, "joining the process group")
        return join_group(place_of(self.spec.settings, rank, device), folder, device)

    def resolve_device(self, environment: dict[str, Any]) -> str:
        wanted = self.spec.device
        if wanted is None:  # every kind that measures needs one (protocol.NEEDS)
            raise SpecError(f"a {self.spec.kind} child's spec names no device")
        if wanted == "auto":
            seen: str = environment["device"]
            return seen
        if wanted == "cuda" and environment["device"] != "cuda":
            raise DeviceError(
                f"device: cuda, but torch {environment['torch']} sees no GPU "
                "(torch.cuda.is_available() is False)"
            )
        return wanted

    def measure(self, device: str) -> dict[str, Any]:
        from . import cache_artifacts
        from .measure import StepBuilder, measure_eager, measure_variant
        from .training import NO_REPEATED_BLOCK, NoRepeatedBlock

        spec = self.spec
        settings = spec.settings
        repo_root = Path(spec.repo_root or ".")
        if settings.get("threads"):
            import torch

            torch.set_num_threads(settings["threads"])
        if spec.kind == "pair":  # a paired run's base and head in this one process
            from .measure_pair import measure_pair

            sides = list(spec.sides)
            return {"sides": measure_pair(sides, settings, device, self.progress, self.control)}
        assert spec.entry is not None  # ChildSpec: every kind but probe has one
        self.progress(Phase.IMPORT, "importing the step factory")
        builder = StepBuilder(spec.entry, repo_root, device, settings["seed"], group=self.group)
        numerics = settings.get("numerics", {})
        result: dict[str, Any]
        if spec.kind == "eager":
            result = {"eager": measure_eager(builder, settings, self.progress, self.control)}
            if numerics.get("enabled") and spec.numerics_reference_out:
                self.progress(
                    Phase.REFERENCE, "numerics: float64 reference, once for every variant"
                )
                write_reference(builder, settings, spec.numerics_reference_out)
            return result
        variant = spec.variant
        assert variant is not None  # ChildSpec: a variant's spec has one
        if spec.timing_only:  # a variant's later process: only its timing
            settings = {**settings, "epoch_length": None}  # the first process charged it
            load = cache_artifacts.load if spec.cache_artifacts == "load" else None
            try:
                measured = measure_variant(
                    builder,
                    settings,
                    variant,
                    self.progress,
                    timing_only=True,
                    load=load,
                    control=self.control,
                )
            except NoRepeatedBlock:  # regional compilation: nothing repeats (a code)
                return {"variant": {"regional_absent": NO_REPEATED_BLOCK}}
            return {"variant": measured}
        probe = make_probe(repo_root, variant["compile_kwargs"])
        counts_only = spec.counts_only
        measured = measure_variant(
            builder,
            settings,
            variant,
            self.progress,
            probe,
            control=self.control,
            counts_only=counts_only,
        )
        result = {"variant": measured}
        if counts_only:  # the counting pass (compilegate bisect): eager's work beside it
            result["eager"] = {"step_work": measured.pop("eager_step_work")}
        if spec.cache_artifacts == "save":  # after every compile of the process, timed apart
            self.progress(Phase.OTHER, "saving the compile-cache artifacts")
            result["variant"]["compile"]["artifacts"] = cache_artifacts.save()
        result["diagnostics"] = probe.report()
        result["variant"]["compile"]["counts"] = probe.work_counts()
        if numerics.get("enabled"):
            reference = spec.numerics_reference
            result["numerics"] = run_numerics(builder, settings, variant, self.progress, reference)
        return result


def import_harness() -> list[str]:
    """Import every module of the child package (and so torch) now, while sys.path holds
    only the interpreter's own folders; returns their names."""
    package = sys.modules[__package__]
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__))
    for name in names:
        importlib.import_module(f"{__package__}.{name}")
    return names


class DeviceError(Exception):
    """The requested device is not available to the measuring torch."""


def make_probe(repo_root: Path, compile_kwargs: dict[str, Any]) -> Any:
    from .cuda_graph_skips import asks_for_cuda_graphs
    from .diagnostics import CompileProbe

    return CompileProbe(repo_root=repo_root, cuda_graphs=asks_for_cuda_graphs(compile_kwargs))


def run_numerics(
    builder: Any,
    settings: dict[str, Any],
    variant: dict[str, Any],
    progress: Any,
    reference_path: str | None = None,
) -> dict[str, Any]:
    from .numerics import check_numerics

    progress(Phase.NUMERICS, "numerics: compiled vs eager vs float64 reference")
    return check_numerics(builder, settings, variant, progress, reference_path)


def write_reference(builder: Any, settings: dict[str, Any], path: str) -> None:
    from .numerics import write_reference as write

    write(builder, settings, path)


def main(spec_path: str) -> None:
    """Measure, write the result, and leave at once: `os._exit` skips the interpreter's
    teardown, whose full garbage collections over torch's, Dynamo's and sympy's objects took
    2 s (eager only) to 5 s (after a compile) per process on this project's loaded 2-core CPU
    — a process whose result is already on disk. The parent ends what the child leaves
    behind (compile workers) with its process group (run/launcher.py)."""
    control = ControlLine.from_environment()
    ahead = spec_path == SPARE_ARGUMENT
    if ahead:  # started ahead: import, then wait for the spec
        spec_path = started_ahead(control)
    spec = read_spec(Path(spec_path))
    if ahead and spec.repo_root:  # where a child started for this spec begins
        os.chdir(spec.repo_root)
    os.environ.pop("TORCH_LOGS", None)  # it silently overrides torch._logging.set_logs
    Child(spec, spec_path, control=control).run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def started_ahead(control: ControlLine) -> str:
    """A child started ahead of its turn (run/launcher.py): the harness, torch and Dynamo
    imported (what every measuring child imports first; Inductor is left to the compile,
    whose cold window a user's first torch.compile() pays it in), then parked until the
    parent names the spec; its path."""
    import_harness()
    try:
        import torch._dynamo  # noqa: F401  (an optimizer's constructor imports it anyway)
    except Exception:
        pass
    return control.await_spec()


def rank_main(spec_path: str, rank: int, folder: str) -> None:
    """A distributed step's rank (child/distributed.py): the spec's measurement under the
    wrapper, its report in the group's folder; leaves as `main` does."""
    from dataclasses import replace

    spec = read_spec(Path(spec_path))
    spec = replace(spec, out=str(Path(folder) / f"rank{rank}.json"))
    os.environ.pop("TORCH_LOGS", None)
    Child(spec, spec_path, rank=(rank, folder)).run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def read_spec(path: Path) -> ChildSpec:
    """The spec the parent wrote, read once at the child's door. A spec this child cannot
    read (a harness of another version, a parent bug) ends it with the reason on stderr and
    exit code 2: the parent reports that code and the last line."""
    try:
        return ChildSpec.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:  # SpecError, and JSON's own
        reason = exc if isinstance(exc, SpecError) else f"cannot read {path}: {exc}"
        sys.stderr.write(f"compilegate child: {reason}\n")
        sys.stderr.flush()
        os._exit(2)
