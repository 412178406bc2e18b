"""What the parent and the measuring child agree on: the entry point and the progress lines.

The parent (run/) imports this module to write a child's spec and to read its output; it
holds no logic, only the shared vocabulary. Standard library only.
"""

from __future__ import annotations

import secrets
from dataclasses import MISSING, dataclass, field, fields
from enum import Enum
from typing import Any

# Lines the child writes on stderr to say what it is doing; the parent shows them as its own.
# Their prefix carries a token the parent draws for each child (the spec's `progress_token`):
# the step's own output shares the child's stderr, and a line it writes with a copied prefix
# (`compilegate-progress: ::add-mask::…`) is its output, not progress (issue 29). The token is
# no secret from code written to find it (it runs in the same process); such a line is still
# defused like all output (workflow_log.py), it only looks like progress.
PROGRESS_PREFIX = "compilegate-progress"


def progress_prefix(token: str) -> str:
    """What starts each progress line of the child that was given `token`."""
    return f"{PROGRESS_PREFIX} {token}: "


class Phase(str, Enum):
    """The phases of a child's work, in order: each progress line names its own (a field of
    the line, `progress_line`), never read from its words. What `phases_s` in a process
    record and bench/time_to_verdict.py add up, and where a failed child stopped."""

    # the harness importing torch, before the first progress line (about nothing for a child
    # started ahead: it imported before its turn, run/launcher.py)
    START = "start"
    IMPORT = "import"
    BUILD = "build"
    EAGER_WARMUP = "eager warm-up"
    COMPILE = "compile"
    TIMED = "timed"
    MEMORY_EPOCH = "memory/epoch"
    STEP_WORK = "step work"
    REFERENCE = "reference"
    NUMERICS = "numerics"
    OTHER = "other"  # joining a process group, starting ranks, saving cache artifacts


def progress_line(token: str, phase: Phase, label: str, elapsed_s: float, message: str) -> str:
    """One progress line (no newline): the token's prefix, the phase by its name, then what
    the parent shows: `label [elapsed] message`."""
    return f"{progress_prefix(token)}{phase.name} {label} [{elapsed_s:6.1f}s] {message}"


@dataclass(frozen=True)
class Progress:
    """A progress line as the parent reads it: its phase, the text it shows (`label
    [elapsed] message`) and the message alone (what a failed child was doing)."""

    phase: Phase
    shown: str
    message: str


def read_progress(line: str, token: str) -> Progress | None:
    """A line of the child given `token` as its Progress, or None when it is not one of its
    progress lines. A phase this parent does not know (another harness version) reads as
    OTHER, with the whole text."""
    prefix = progress_prefix(token)
    if not line.startswith(prefix):
        return None
    rest = line[len(prefix) :]
    name, _, shown = rest.partition(" ")
    phase = Phase.__members__.get(name)
    if phase is None:
        phase, shown = Phase.OTHER, rest
    return Progress(phase, shown, shown.split("] ", 1)[-1])


# The child's line to its parent (child/control.py): the socket's number in this variable,
# taken out of the environment at the child's start; a child started ahead of its turn gets
# SPARE_ARGUMENT where a spec's path would be, and waits for `spec PATH` on the line.
CONTROL_VAR = "COMPILEGATE_CONTROL_FD"
SPARE_ARGUMENT = "--ahead"


# How a process of the harness starts (the launcher's child, a child's ranks): the package
# loaded from its folder (argv[1]) without putting that folder's parent (maybe a
# site-packages with another torch) on sys.path, the working directory (the repository)
# taken off sys.path first, then `call`.
_BOOTSTRAP_PRELUDE = """\
import sys
sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]
import importlib.util
spec = importlib.util.spec_from_file_location(
    "compilegate", sys.argv[1] + "/__init__.py", submodule_search_locations=[sys.argv[1]])
module = importlib.util.module_from_spec(spec)
sys.modules["compilegate"] = module
spec.loader.exec_module(module)
"""


def bootstrap(call: str) -> str:
    """The `python -c` program that loads the harness as above, then runs `call`."""
    return _BOOTSTRAP_PRELUDE + call + "\n"


def new_progress_token() -> str:
    """A fresh token for one child (the parent's side)."""
    return secrets.token_hex(8)


@dataclass(frozen=True)
class EntryPoint:
    """A resolved `path/file.py:function` or `package.module:function`."""

    spec: str
    file: str
    function: str
    line: int
    module: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "file": self.file,
            "function": self.function,
            "line": self.line,
            "module": self.module,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> EntryPoint:
        return cls(raw["spec"], raw["file"], raw["function"], raw["line"], raw.get("module"))


class SpecError(ValueError):
    """A child's spec the child cannot read: a key missing, unknown or of the wrong type."""


KINDS = ("probe", "eager", "variant", "pair")
# What each kind needs besides `kind` and `out`; every other field may be left out.
NEEDS = {
    "probe": (),
    "eager": ("repo_root", "entry", "device", "settings"),
    "variant": ("repo_root", "entry", "device", "settings", "variant"),
    "pair": ("repo_root", "entry", "device", "settings", "sides"),
}


@dataclass(frozen=True)
class ChildSide:
    """One side of a paired child (child/measure_pair.py): its role, tree, entry, and
    variant with the cache its timing reuses (eager: no variant)."""

    role: str
    repo_root: str
    entry: EntryPoint
    variant: dict[str, Any] | None = None
    cache_dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "role": self.role,
            "repo_root": self.repo_root,
            "entry": self.entry.to_dict(),
        }
        if self.variant is not None:
            out["variant"] = self.variant
            out["cache_dir"] = self.cache_dir
        return out

    @classmethod
    def from_json(cls, raw: Any) -> ChildSide:
        fields = _fields(raw, "sides[]", ("role", "repo_root", "entry"), SIDE_KEYS)
        return cls(
            str(fields["role"]),
            str(fields["repo_root"]),
            _entry(fields["entry"], "sides[].entry"),
            _mapping_or_none(fields.get("variant"), "sides[].variant"),
            fields.get("cache_dir"),
        )


SIDE_KEYS = ("role", "repo_root", "entry", "variant", "cache_dir")


@dataclass(frozen=True)
class ChildSpec:
    """What the parent asks of one child: the one document it sends (SPEC.json).

    The parent (run/step_measurement.py) builds it; a launcher adds where the child writes
    (`out`), its `label` and `progress_token` (and, in a container, moves the host paths);
    the child reads it once, at its door (child/main.py), and reads attributes after that.
    `limits` are the launcher's (a container applies them); the child does not read them.
    """

    kind: str
    out: str = ""
    label: str = ""
    progress_token: str = ""
    repo_root: str | None = None
    entry: EntryPoint | None = None
    step: str | None = None
    device: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    variant: dict[str, Any] | None = None
    numerics_reference: str | None = None  # the float64 reference a variant compares with
    numerics_reference_out: str | None = None  # where the eager process leaves it
    timing_only: bool = False  # a variant's later process: only its timing
    # the counting pass alone (compilegate bisect): a variant's first process without its
    # timed rounds and memory passes, eager's step work beside it (child/measure.py)
    counts_only: bool = False
    # "save": a variant's first process leaves its compile-cache artifacts; "load": a later
    # process starts from them (child/cache_artifacts.py); "": neither
    cache_artifacts: str = ""
    sides: tuple[ChildSide, ...] = ()  # a paired child's base and head
    limits: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise SpecError(f"child spec: kind {self.kind!r} is none of {', '.join(KINDS)}")
        missing = [name for name in NEEDS[self.kind] if getattr(self, name) in (None, ())]
        if missing:
            raise SpecError(f"child spec ({self.kind}): missing {', '.join(missing)}")

    def to_json(self) -> dict[str, Any]:
        """The spec as JSON: the fields that are set (a field at its default is left out)."""
        out: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            factory = item.default_factory
            default = factory() if factory is not MISSING else item.default
            if value == default and item.name != "kind":
                continue
            if isinstance(value, EntryPoint):
                value = value.to_dict()
            elif item.name == "sides":
                value = [side.to_json() for side in value]
            out[item.name] = value
        return out

    @classmethod
    def from_json(cls, raw: Any) -> ChildSpec:
        """The spec `raw` (parsed JSON) checked and typed; SpecError names the first
        problem: a key missing, one this child does not know, or one of the wrong type."""
        known = tuple(item.name for item in fields(cls))
        values = dict(_fields(raw, "child spec", ("kind",), known))
        needs = NEEDS.get(values["kind"], ())
        missing = [name for name in needs if values.get(name) is None]
        if missing:  # settings too: the dataclass's own check sees only its default, {}
            raise SpecError(f"child spec ({values['kind']}): missing {', '.join(missing)}")
        if values.get("entry") is not None:
            values["entry"] = _entry(values["entry"], "entry")
        if "sides" in values:
            if not isinstance(values["sides"], list):
                raise SpecError("child spec: sides is not a list")
            values["sides"] = tuple(ChildSide.from_json(side) for side in values["sides"])
        for name in ("settings", "variant", "limits"):
            if name in values:
                values[name] = _mapping_or_none(values[name], name)
        if "settings" in values and values["settings"] is None:
            raise SpecError("child spec: settings is null")
        for name in ("out", "label", "progress_token", "kind"):
            if name in values and not isinstance(values[name], str):
                raise SpecError(f"child spec: {name} is not a string")
        for name in ("timing_only", "counts_only"):
            if not isinstance(values.get(name, False), bool):
                raise SpecError(f"child spec: {name} is not true or false")
        if values.get("cache_artifacts", "") not in CACHE_ARTIFACTS:
            raise SpecError("child spec: cache_artifacts is none of save, load or empty")
        return cls(**values)


def _fields(
    raw: Any, where: str, required: tuple[str, ...], known: tuple[str, ...]
) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: not a JSON object")
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise SpecError(f"{where}: unknown key {', '.join(unknown)}")
    missing = [name for name in required if name not in raw]
    if missing:
        raise SpecError(f"{where}: missing {', '.join(missing)}")
    return raw


def _entry(raw: Any, where: str) -> EntryPoint:
    fields_ = _fields(raw, where, ("spec", "file", "function", "line"), ENTRY_KEYS)
    return EntryPoint.from_dict(fields_)


CACHE_ARTIFACTS = ("", "save", "load")
# Where a "save" process leaves its compile-cache artifacts, in its Inductor cache folder, and
# a "load" process finds them (child/cache_artifacts.py; the parent hands them over).
CACHE_ARTIFACTS_FILE = "compilegate-cache-artifacts.bin"
ENTRY_KEYS = ("spec", "file", "function", "line", "module")


def _mapping_or_none(raw: Any, where: str) -> dict[str, Any] | None:
    if raw is not None and not isinstance(raw, dict):
        raise SpecError(f"child spec: {where} is not a JSON object")
    return raw


class ReportError(ValueError):
    """A child's result the parent cannot read: not its shape (user code can write there)."""


STATUSES = ("ok", "error")

# What one untimed iteration of the step does, counted (child/step_work.py documents each
# count): the keys of a `step_work` record's `counts`, `absent` and `top`.
STEP_WORK_COUNTS = (
    "aten_ops",
    "compiled_region_calls",
    "kernels",
    "cuda_graph_replays",
    "host_syncs",
    "flops",
    "allocations",
    "allocated_bytes",
)
STEP_WORK_KEYS = ("counts", "absent", "top", "batch_index")
# Optional beside them: eager's `sync_sites` and the profiled iteration's `timing`, whose
# keys follow (child/step_work.py). results/model.py's StepWork and StepWorkTiming type the
# same keys and the schema lists them: the parent's wings never import the child, nor the
# child anything of theirs (tests/unit/test_layout.py), so tests/unit/child/test_step_work_keys.py
# holds the three equal.
STEP_WORK_OPTIONAL = ("timing", "sync_sites", "pass_error")
STEP_WORK_TIMING = (
    "profiled_ms",
    "compute_ms",
    "compute_top",
    "device_busy_ms",
    "dispatch_us",
)


def check_step_work(raw: Any, where: str) -> None:
    """A `step_work` record (child/step_work.py) as the parent records it, or ReportError
    naming the first problem: every count an integer >= 0 or null, each null one with its
    reason in `absent` (and only those), `top` [[name, integer], …] lists of counted keys,
    no key this parent does not know."""
    if not isinstance(raw, dict):
        raise ReportError(f"{where} is not a JSON object")
    unknown = sorted(set(raw) - set(STEP_WORK_KEYS) - set(STEP_WORK_OPTIONAL))
    missing = [key for key in STEP_WORK_KEYS if key not in raw]
    if unknown or missing:
        what = f"unknown key {', '.join(unknown)}" if unknown else f"missing {', '.join(missing)}"
        raise ReportError(f"{where}: {what}")
    if raw["batch_index"] is None or not _count_or_none(raw["batch_index"]):
        raise ReportError(f"{where}.batch_index is not an integer >= 0")
    counts, absent, top = raw["counts"], raw["absent"], raw["top"]
    for name in ("counts", "absent", "top"):
        value = raw[name]
        if not isinstance(value, dict):
            raise ReportError(f"{where}.{name} is not a JSON object")
        unknown = sorted(set(value) - set(STEP_WORK_COUNTS))
        if unknown:
            raise ReportError(f"{where}.{name}: unknown key {', '.join(unknown)}")
    if set(counts) != set(STEP_WORK_COUNTS):
        missing = [key for key in STEP_WORK_COUNTS if key not in counts]
        raise ReportError(f"{where}.counts: missing {', '.join(missing)}")
    for key, value in counts.items():
        if not _count_or_none(value):
            raise ReportError(f"{where}.counts.{key} is not an integer >= 0 or null")
        if (value is None) != (key in absent):
            raise ReportError(f"{where}.counts.{key}: absent exactly when null, with a reason")
    for key, reason in absent.items():
        if not isinstance(reason, str) or not reason:
            raise ReportError(f"{where}.absent.{key} is not a reason")
    for key, names in top.items():
        if counts[key] is None or not _named_counts(names):
            raise ReportError(f"{where}.top.{key} is not a list of [name, count] of a count")
    if "timing" in raw:
        check_step_timing(raw["timing"], f"{where}.timing")
    if not _named_counts(raw.get("sync_sites", [])):
        raise ReportError(f"{where}.sync_sites is not a list of [file:line, calls]")


def _named_counts(value: Any) -> bool:
    """[[name, count], …], each count an integer >= 0."""
    return isinstance(value, list) and all(
        isinstance(pair, list)
        and len(pair) == 2
        and isinstance(pair[0], str)
        and _count_or_none(pair[1])
        and pair[1] is not None
        for pair in value
    )


def check_step_timing(raw: Any, where: str) -> None:
    """A step-work record's `timing`: its keys, each a number >= 0 or null, `compute_top`
    a list of [name, ms, calls]."""
    if not isinstance(raw, dict) or set(raw) != set(STEP_WORK_TIMING):
        raise ReportError(f"{where} is not an object of {', '.join(STEP_WORK_TIMING)}")
    for key in STEP_WORK_TIMING:
        if key == "compute_top":
            continue
        value = raw[key]
        if value is not None and not (_number(value) and value >= 0):
            raise ReportError(f"{where}.{key} is not a number >= 0 or null")
    top = raw["compute_top"]
    if not isinstance(top, list) or not all(
        isinstance(entry, list)
        and len(entry) == 3
        and isinstance(entry[0], str)
        and _number(entry[1])
        and entry[1] >= 0
        and _count_or_none(entry[2])
        and entry[2] is not None
        for entry in top
    ):
        raise ReportError(f"{where}.compute_top is not a list of [name, ms, calls]")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _count_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


@dataclass(frozen=True)
class ChildReport:
    """What a child sends back (its one JSON file): `ok` with what it measured, or `error`
    with the reason, the phase it was in (a Phase; `doing`: its last progress message) and,
    for a user's exception, its traceback.

    Its top level is typed here; what one process measured (`eager`, `variant`,
    `diagnostics`, `numerics`, a paired child's `sides` by role) stays the JSON the
    parent's recorders read (results/document.py). The child writes it through
    `from_json(...).to_json()`; the launcher reads it with `from_json` at the parent's door.
    """

    status: str
    error: str | None = None
    phase: Phase | None = None
    doing: str | None = None
    traceback: str | None = None
    environment: dict[str, Any] | None = None  # what the probe reads (child/environment.py)
    device: str | None = None
    eager: dict[str, Any] | None = None
    variant: dict[str, Any] | None = None
    diagnostics: dict[str, Any] | None = None
    numerics: dict[str, Any] | None = None
    sides: dict[str, Any] | None = None
    # A distributed step (child/distributed.py): a rank's own facts in a rank's report; the
    # group's record (wrapper, world size, each rank) in the measuring child's.
    distributed: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The report as JSON: status and error always, the other fields when set."""
        out: dict[str, Any] = {"status": self.status, "error": self.error}
        for item in fields(self):
            value = getattr(self, item.name)
            if value is not None and item.name not in out:
                out[item.name] = value.value if isinstance(value, Phase) else value
        return out

    @classmethod
    def from_json(cls, raw: Any) -> ChildReport:
        """The report `raw` (parsed JSON) checked and typed; ReportError names the first
        problem."""
        if not isinstance(raw, dict):
            raise ReportError("not a JSON object")
        known = tuple(item.name for item in fields(cls))
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise ReportError(f"unknown key {', '.join(unknown)}")
        if raw.get("status") not in STATUSES:
            raise ReportError(f"status {raw.get('status')!r} is neither ok nor error")
        for name in ("error", "phase", "doing", "traceback", "device"):
            if raw.get(name) is not None and not isinstance(raw[name], str):
                raise ReportError(f"{name} is not a string")
        phases = {phase.value: phase for phase in Phase}
        if raw.get("phase") is not None and raw["phase"] not in phases:
            raise ReportError(f"phase {raw['phase']!r} is none of {', '.join(phases)}")
        for name in (
            "environment",
            "eager",
            "variant",
            "diagnostics",
            "numerics",
            "sides",
            "distributed",
        ):
            if raw.get(name) is not None and not isinstance(raw[name], dict):
                raise ReportError(f"{name} is not a JSON object")
        for name in ("eager", "variant"):
            if raw.get(name) is not None and "step_work" in raw[name]:
                check_step_work(raw[name]["step_work"], f"{name}.step_work")
        phase = phases[raw["phase"]] if raw.get("phase") is not None else None
        return cls(**{**raw, "phase": phase})
