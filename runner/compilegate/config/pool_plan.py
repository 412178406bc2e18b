"""The fan-out of one config over a runner pool (`compilegate plan`): one leg per step ×
PyTorch version, each on the scale set with as many GPUs as the step needs.

A leg is one job of a GitHub job matrix. It measures its step's base and head paired in one
pod (`compilegate run --step NAME --against BASE`), so it never compares across nodes: a
pool's nodes differ (GPU, driver, CPU), and a time measured on one node against a time
measured on another measures the nodes. A step's GPU count picks its scale set: a
distributed step's `world_size` (one GPU per rank, all in one pod), one for any other step
that may run on a GPU, none for a `device: cpu` step.

The plan is read from the base branch's compilegate.yml, as the policy is (gate/policy.py):
a pull request cannot widen the fan-out (more legs, more GPUs) by editing its own config; a
step the pull request adds gets its leg once it is merged.

GitHub makes at most GITHUB_MATRIX_MAX_JOBS jobs from one matrix: a bigger plan is refused in
one line that says how to split it (one plan per PyTorch version), never cut.

`read_planned_legs` reads a plan back in the merge job (`report`/`publish --plan`): every
planned leg becomes a row of the run set, one whose job left no artifact saying it never ran.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bounded_json import DocumentRefused, JsonLimits, read_bounded_json
from ..errors import UsageError
from .model import Config, StepConfig

# "A matrix can generate a maximum of 256 jobs per workflow run" (GitHub Actions, "Running
# variations of jobs in a workflow").
GITHUB_MATRIX_MAX_JOBS = 256
# The scale sets' names: PREFIX-gpuN for N GPUs, PREFIX-cpu for none (examples/pool/).
DEFAULT_SCALE_SET_PREFIX = "compilegate"
# A leg id as plan_legs makes it (a step name, a version, a scale set's end): a folder name
# that is never `..` nor holds a slash.
LEG_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,199}$")
# A plan as `--plan` reads it: 256 legs of a few short keys each.
PLAN_LIMITS = JsonLimits(
    max_bytes=1 << 20, max_depth=4, max_values=20_000, max_list_items=1024, max_object_keys=64
)
# Where a leg's image name takes its PyTorch version (`--image 'registry/cg:torch-{torch}'`).
TORCH_FIELD = "{torch}"


@dataclass(frozen=True)
class Leg:
    """One job of the matrix: a step under one PyTorch version on a scale set of `gpus`."""

    step: str
    torch: str
    gpus: int
    scale_set: str
    image: str | None = None

    @property
    def leg_id(self) -> str:
        """The leg's name in artifacts and result folders: unique within a plan."""
        return f"{self.step}-torch{self.torch}-{self.scale_set.rpartition('-')[2]}"

    def to_dict(self) -> dict[str, Any]:
        """One entry of the matrix's `include` list (the workflow reads these keys)."""
        entry: dict[str, Any] = {
            "leg": self.leg_id,
            "step": self.step,
            "torch": self.torch,
            "gpus": self.gpus,
            "runs_on": [self.scale_set],
            "artifact": f"compilegate-leg-{self.leg_id}",
        }
        if self.image is not None:
            entry["image"] = self.image
        return entry


@dataclass(frozen=True)
class PoolPlan:
    """Every leg of one config's fan-out, in the order steps and versions were declared."""

    legs: tuple[Leg, ...]

    def matrix(self) -> dict[str, Any]:
        """`strategy.matrix` as GitHub takes it from JSON (`fromJSON(...)`)."""
        return {"include": [leg.to_dict() for leg in self.legs]}


def gpus_of(step: StepConfig) -> int:
    """The GPUs one leg of `step` holds: a rank each for a distributed step, none on a CPU."""
    if step.device == "cpu":
        return 0
    return step.distributed.world_size if step.distributed is not None else 1


def scale_set_of(gpus: int, prefix: str = DEFAULT_SCALE_SET_PREFIX) -> str:
    """The runner scale set (its `runs-on` label) with `gpus` GPUs per runner."""
    return f"{prefix}-gpu{gpus}" if gpus > 0 else f"{prefix}-cpu"


def plan_legs(
    config: Config,
    versions: tuple[str, ...],
    *,
    prefix: str = DEFAULT_SCALE_SET_PREFIX,
    image: str | None = None,
) -> PoolPlan:
    """The legs of `config`'s steps × `versions`; past GITHUB_MATRIX_MAX_JOBS a UsageError
    saying how to split. `image`: a name with TORCH_FIELD where the version goes."""
    if not versions:
        raise UsageError(
            f"{config.path}: no PyTorch version to plan: declare `torch:` in the config "
            "or pass --torch VERSION"
        )
    if image is not None and TORCH_FIELD not in image:
        raise UsageError(
            f"--image {image!r}: put {TORCH_FIELD} where the PyTorch version goes "
            "(one image per version)"
        )
    count = len(config.steps) * len(versions)
    if count > GITHUB_MATRIX_MAX_JOBS:
        raise UsageError(f"{config.path}: {too_many_legs(len(config.steps), len(versions))}")
    legs = tuple(
        Leg(
            step=step.name,
            torch=version,
            gpus=gpus_of(step),
            scale_set=scale_set_of(gpus_of(step), prefix),
            image=None if image is None else image.replace(TORCH_FIELD, version),
        )
        for step in config.steps
        for version in versions
    )
    return PoolPlan(legs)


def too_many_legs(steps: int, versions: int) -> str:
    """Why a plan of `steps` × `versions` legs is refused, and the split that fits: one plan
    per PyTorch version (a config declares at most GITHUB_MATRIX_MAX_JOBS steps, its schema's
    bound, so one version's legs always fit one matrix)."""
    return (
        f"{steps * versions} legs ({steps} steps x {versions} PyTorch versions), more than "
        f"the {GITHUB_MATRIX_MAX_JOBS} jobs a GitHub matrix makes: split it into one plan per "
        f"PyTorch version (--torch VERSION), each the matrix of its own job or workflow, "
        f"{versions} matrices of {steps} legs"
    )


def read_planned_legs(path: Path) -> tuple[str, ...]:
    """The leg ids of a plan `compilegate plan` printed (the merge job's `--plan FILE`), in
    its order; anything else is a one-line UsageError naming the file and the key."""
    try:
        plan = read_bounded_json(path, PLAN_LIMITS)
    except OSError as exc:
        raise UsageError(f"--plan {path}: cannot read it ({exc.strerror or exc})") from None
    except (DocumentRefused, ValueError) as exc:
        raise UsageError(f"--plan {path}: not a plan's JSON ({exc})") from None
    legs = plan.get("include") if isinstance(plan, dict) else None
    if not isinstance(legs, list) or not 0 < len(legs) <= GITHUB_MATRIX_MAX_JOBS:
        raise UsageError(
            f"--plan {path}: include: expected the list of 1 to {GITHUB_MATRIX_MAX_JOBS} legs "
            "that compilegate plan prints"
        )
    ids: list[str] = []
    for index, leg in enumerate(legs):
        leg_id = leg.get("leg") if isinstance(leg, dict) else None
        if not isinstance(leg_id, str) or not LEG_ID.match(leg_id) or leg_id in ids:
            raise UsageError(
                f"--plan {path}: include[{index}].leg: expected a leg id of compilegate plan, "
                "once (letters, digits, '_', '.', '+', '-')"
            )
        ids.append(leg_id)
    return tuple(ids)
