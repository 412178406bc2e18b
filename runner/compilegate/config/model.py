"""The config model: frozen dataclasses for compilegate.yml, its defaults, and the one table
of how the gate treats each step setting against a stored baseline (STEP_FIELD_POLICY).

It is built by config/loading.py (`load_config_file`, `load_config_text`: reading, schema
errors), which imports this module; this module never imports loading.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .limits import ResourceLimits

DEFAULT_STEP_SETTINGS: dict[str, Any] = {
    "device": "auto",
    "variants": [{"mode": "default"}],
    "warmup": 5,
    "iterations": 50,
    "rounds": 10,
    "timeout_s": 600,
    "seed": 0,
    "amp": None,
    "threads": None,
    "eager_processes": 1,
    "variant_processes": 4,
    "cold_compiles": 1,
    "cache_artifacts": False,
    "regional": False,
    "env": [],
    "gate_compile_wall_time": False,
    "steps_per_run": 10_000,
    "epoch": None,
    "distributed": None,
}
# What the decision is stated against when a step does not say: the length of a short
# fine-tuning run. A step sets its own `steps_per_run` (training steps one job runs).
DEFAULT_STEPS_PER_RUN: int = DEFAULT_STEP_SETTINGS["steps_per_run"]
DEFAULT_NUMERICS: dict[str, Any] = {"enabled": True, "steps": 2, "tol": 1e-4, "cosine_min": 0.99}
DEFAULT_THRESHOLDS: dict[str, float] = {
    "speedup_drop_pct": 5.0,
    "eager_step_time_growth_pct": 5.0,
    "compiled_step_time_growth_pct": 5.0,
    "compile_time_growth_pct": 25.0,
    "peak_memory_growth_pct": 10.0,
    "recompiles_increase": 0,
    "graph_break_sites_increase": 0,
    "fallbacks_increase": 0,
    # A distributed step's splits at DDP's gradient-bucket boundaries (gate/judges/diagnostics.py).
    "ddp_splits_increase": 0,
    # Compile cost (gate/judges/compile_cost.py): the work counts are deterministic, so a
    # small tolerance; the CPU seconds are judged against their own noise too, above what
    # a shared runner's load alone moved them (x1.04-1.45 with two busy neighbours).
    "compile_work_growth_pct": 5.0,
    "compile_cpu_time_growth_pct": 50.0,
    # torch's compile-time instruction count (where the machine has a hardware counter):
    # barely moved by load; PyTorch's own pr_time_benchmarks gate it with 1.5-10 % margins.
    "compile_instructions_growth_pct": 5.0,
    # Step work (gate/judges/step_work.py): counts of one iteration, identical between runs
    # of one commit under load, so a small tolerance; host syncs have none.
    "step_work_growth_pct": 2.0,
    # The 25th percentile of each process's step times (gate/judges/distribution.py):
    # above what a shared runner's load moves it.
    "step_time_quantile_growth_pct": 20.0,
    # An absolute step time against one stored run (no history, not paired) fails only
    # beyond this: whole runs of unchanged code drifted up to 18 % (the 2-core CPU's 25th
    # percentile, under load) and 26 % (an idle H200; hosted runners between jobs) apart.
    "step_time_gross_growth_pct": 40.0,
}
# How the gate treats each StepConfig field against a stored baseline: one entry per field
# (tests/unit/config/test_step_field_policy.py fails when a field is added without one). A pull
# request writes its own compilegate.yml; nothing in it may loosen the gate, so every field
# either equals the baseline's, is taken from it, or cannot change a verdict. In paired mode
# (run/paired.py) the base's step decides every field but run/paired.HEAD_OWN_FIELDS.
IDENTITY = "identity"  # what the step is: its baseline is the step of the same name, whose
#   entry and each variant's definition (by id) must be the same (gate/compare.py), else
#   `incomparable`; a variant or step only one side has is `new` or `removed`
COMPARED = "compared"  # equal to the baseline's, else the step is `incomparable`, naming it
ADOPTED = "adopted"  # compared, and `compilegate run --baseline` measures with the
#   baseline's value instead of the config's, in a note (gate/policy.adopt_baseline_power)
AT_LEAST = "at least"  # the gate's power: at least the baseline's, else `incomparable`;
#   `run --baseline` raises it to the baseline's
BASELINES = "baseline's"  # policy applied from the baseline's document, whatever the
#   config says (a note names thresholds, gate_compile_wall_time or env it asked for)
HEAD_OWN = "head's own"  # the run's own: it cannot make a regression pass (reason beside it)
STEP_FIELD_POLICY: dict[str, str] = {
    "name": IDENTITY,
    "entry": IDENTITY,
    "device": COMPARED,
    "variants": IDENTITY,
    "warmup": ADOPTED,
    "iterations": ADOPTED,
    "rounds": ADOPTED,
    # Bounds only this run: a step that runs out of it is an error (exit 3), never a pass;
    # the operator's `matrix --timeout-s` bounds the whole run.
    "timeout_s": HEAD_OWN,
    "seed": COMPARED,
    "amp": COMPARED,
    "threads": COMPARED,
    "eager_processes": AT_LEAST,
    "numerics": COMPARED,
    "thresholds": BASELINES,  # gate/policy.resolve_thresholds
    "variant_processes": AT_LEAST,
    "cold_compiles": AT_LEAST,
    # Which cache one later process starts from (the first's portable artifacts instead of
    # its Inductor cache): it times the same compiled code, and only the recommendation reads
    # its compile seconds.
    "cache_artifacts": HEAD_OWN,
    # One more process per variant compiles only the repeated blocks: its numbers go to the
    # variant's `regional` lever, read by no judge.
    "regional": HEAD_OWN,
    "env": BASELINES,  # run/env_policy.py: only the opt-ins the baseline recorded
    "gate_compile_wall_time": BASELINES,  # gate/policy.StepPolicy
    # What the recommendation (results/recommendation.py) is stated for; no verdict reads it.
    "steps_per_run": HEAD_OWN,
    # Which batches the compiled copy also runs (the epoch's last and the next one's first):
    # without the line a recompile there is never seen (issue 29).
    "epoch_length": ADOPTED,
    # One process or a group of ranks under a wrapper: another measurement of the step.
    "distributed": COMPARED,
    "limits": BASELINES,  # config/limits.under_baseline: at most the baseline's
}
# The settings that make two measurements of a step comparable: one changed, and the
# baseline of that step says nothing about this run. The gate names the one that changed.
COMPARABLE_SETTINGS = tuple(
    name for name, how in STEP_FIELD_POLICY.items() if how in (COMPARED, ADOPTED)
)
# Those `compilegate run --baseline` takes from the baseline.
ADOPTED_SETTINGS = tuple(name for name, how in STEP_FIELD_POLICY.items() if how == ADOPTED)
# The settings that set the gate's power: a run may use more processes than its baseline,
# never fewer (gate/policy.py).
POWER_SETTINGS = tuple(name for name, how in STEP_FIELD_POLICY.items() if how == AT_LEAST)
# What a comparable setting reads as in a document from before it was recorded (the
# compilegate that wrote it could not check an epoch's end).
SETTINGS_ABSENT_AS = {"epoch_length": None, "distributed": None}
# reduce-overhead records CUDA graphs on the 2nd call and replays from the 3rd (cudagraph_trees.py).
MIN_WARMUP_REDUCE_OVERHEAD = 5


@dataclass(frozen=True)
class Variant:
    """One compiled configuration of a step: torch.compile(mode, dynamic) on model or step."""

    id: str
    mode: str = "default"
    dynamic: bool | None = None
    compile_target: str = "model"
    fullgraph: bool = False
    backend: str = "inductor"

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Variant:
        mode = raw.get("mode", "default")
        dynamic = raw.get("dynamic")
        target = raw.get("compile", "model")
        fullgraph = bool(raw.get("fullgraph", False))
        backend = raw.get("backend", "inductor")
        derived = mode
        if dynamic is not None:
            derived += "+dynamic" if dynamic else "+static"
        if target == "step":
            derived += "+step"
        if fullgraph:
            derived += "+fullgraph"
        if backend != "inductor":
            derived += f"+{backend}"
        return cls(raw.get("name", derived), mode, dynamic, target, fullgraph, backend)

    def compile_kwargs(self) -> dict[str, Any]:
        """The keyword arguments handed to torch.compile."""
        kwargs: dict[str, Any] = {"backend": self.backend, "fullgraph": self.fullgraph}
        if self.backend == "inductor":
            kwargs["mode"] = self.mode
        if self.dynamic is not None:
            kwargs["dynamic"] = self.dynamic
        return kwargs


@dataclass(frozen=True)
class NumericsSettings:
    enabled: bool = True
    steps: int = 2
    tol: float = 1e-4
    cosine_min: float = 0.99


@dataclass(frozen=True)
class DistributedSettings:
    """A distributed step (config `distributed`; child/distributed.py): `world_size` ranks,
    each the factory's model under `wrapper`, in one process group of `backend` (None: gloo
    on a CPU, nccl on a GPU)."""

    wrapper: str
    world_size: int
    backend: str | None = None
    bucket_cap_mb: float | None = None  # DDP's gradient buckets (torch's default: 25)
    collective_timeout_s: float = 300.0  # a rank blocked in one collective longer fails

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> DistributedSettings:
        return cls(
            wrapper=raw["wrapper"],
            world_size=int(raw["world_size"]),
            backend=raw.get("backend"),
            bucket_cap_mb=raw.get("bucket_cap_mb"),
            collective_timeout_s=float(raw.get("collective_timeout_s", 300.0)),
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class StepConfig:
    """Everything needed to measure one declared training step."""

    name: str
    entry: str
    device: str
    variants: tuple[Variant, ...]
    warmup: int
    iterations: int
    rounds: int
    timeout_s: float
    seed: int
    amp: str | None
    threads: int | None
    eager_processes: int
    numerics: NumericsSettings
    thresholds: dict[str, float] = field(default_factory=dict)
    variant_processes: int = DEFAULT_STEP_SETTINGS["variant_processes"]
    # How many of a variant's processes compile cold, each with a fresh Inductor cache: more
    # than one gives the compile CPU time a noise estimate (results/compile_cost.py).
    cold_compiles: int = DEFAULT_STEP_SETTINGS["cold_compiles"]
    # The process after the cold ones starts from the first process's portable compile-cache
    # artifacts (torch.compiler.save/load_cache_artifacts) in an empty cache: what a job that
    # ships them pays, beside the warm and cold compiles (child/cache_artifacts.py).
    cache_artifacts: bool = False
    # One more process per variant compiles each block of the model's repeated blocks in
    # place (regional compilation) and times it against eager: the variant's `regional` lever.
    regional: bool = False
    # Host variables this step's child may see beyond the allow-list (run/child_env.py).
    env: tuple[str, ...] = ()
    # Policy, read from the baseline's step: may compile wall time fail the job?
    gate_compile_wall_time: bool = False
    # Training steps one run of the user's job takes: what the recommendation decides for.
    steps_per_run: int = DEFAULT_STEPS_PER_RUN
    # Batches per epoch: the compiled copy also runs the epoch's last batch (and the next
    # epoch's first), so a late recompile on another batch shape is seen and charged.
    epoch_length: int | None = None
    # The container's memory, pids, log and output bounds: policy (config/limits.py).
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    # `world_size` ranks under a DDP or FSDP2 wrapper instead of one process (None: one).
    distributed: DistributedSettings | None = None

    @property
    def processes_per_child(self) -> int:
        """Processes one measuring child runs at once: its CPU budget is theirs together."""
        return self.distributed.world_size if self.distributed is not None else 1

    def comparable_settings(self) -> dict[str, Any]:
        """The settings that make two measurements of this step comparable (COMPARABLE_SETTINGS):
        recorded in every result, hashed into the fingerprint, checked one by one by the gate."""
        values = {
            "device": self.device,
            "warmup": self.warmup,
            "iterations": self.iterations,
            "rounds": self.rounds,
            "seed": self.seed,
            "amp": self.amp,
            "threads": self.threads,
            "numerics": dataclasses.asdict(self.numerics),
            "epoch_length": self.epoch_length,
            "distributed": None if self.distributed is None else self.distributed.to_dict(),
        }
        assert tuple(values) == COMPARABLE_SETTINGS
        return values

    def measurement_settings(self) -> dict[str, Any]:
        """What the child process needs to measure this step."""
        settings = self.comparable_settings()
        del settings["device"]  # the child gets the device resolved, separately
        return settings

    def fingerprint(self) -> str:
        """Hash of the entry, the variants and the comparable settings (not the model code).
        A setting at the value it reads as when absent is left out, so a step that does not
        use it keeps the fingerprint it had before the setting was comparable."""
        settings = {
            key: value
            for key, value in self.comparable_settings().items()
            if key not in SETTINGS_ABSENT_AS or value != SETTINGS_ABSENT_AS[key]
        }
        comparable = {
            "entry": self.entry,
            "variants": [dataclasses.asdict(v) for v in self.variants],
            **settings,
        }
        blob = json.dumps(comparable, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


DEFAULT_ACCEPT_LABEL = "compilegate: accept"


@dataclass(frozen=True)
class Config:
    """compilegate.yml, validated: build it with config/loading.py's `load_config_file`."""

    path: Path
    repo_root: Path
    steps: tuple[StepConfig, ...]
    baseline: str | None = None
    torch_versions: tuple[str, ...] = ()
    sha256: str = ""
    # The pull-request label that accepts regression rows (gate/acceptance.py); None: off.
    # Only the base side's value counts: it is recorded in the result document and read
    # from the baseline's (or, in a paired run, the base side's) document.
    accept_label: str | None = DEFAULT_ACCEPT_LABEL
    # Every step the file declares, also after select() keeps only some of them.
    declared_steps: tuple[str, ...] = ()

    def select(self, names: list[str]) -> Config:
        """Keep only the named steps; an unknown name is an error."""
        if not names:
            return self
        known = {s.name for s in self.steps}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ConfigError(
                f"{self.path}: --step {unknown[0]!r} is not declared "
                f"(declared: {', '.join(sorted(known))})"
            )
        return dataclasses.replace(self, steps=tuple(s for s in self.steps if s.name in names))
