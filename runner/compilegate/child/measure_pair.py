"""A paired run's base and head measured in one process (child side): `run --against REF
--pairing in-process`.

Each side's step is imported from its own tree under its own module names (two_sides.py),
built with the same seed and warmed up; then every copy of both sides — eager, its twin, the
compiled variant — is timed in the same interleaved rounds, each base block next to the head
block of the same kind, with one yardstick for the machine. A drift of the machine that
changes within seconds then falls on both sides of the same round, as it falls on eager and
compiled in one process (the speedup).

torch's settings are pinned per side: each side is built from the settings the child had
before any user code ran, what its factory changed is recorded (torch_state.changed) and put
back around each of its timed blocks, and the yardstick runs under the clean settings. Each
side's part of the result has the shape of a one-side child's (measure_eager,
measure_variant), so the parent records it as it records those.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import torch

from . import torch_state
from .control import ControlLine
from .cpu_pinning import pinned
from .measure import StepBuilder, VariantCopies, _checked, peak_step_bytes, step_work
from .protocol import ChildSide, Phase
from .timing import YARDSTICKS, interleaved_rounds, timed_warmup, timer_for, yardsticks
from .training import TrainingStep
from .two_sides import SideModules
from .user_code import user_import_paths

Progress = Callable[[Phase, str], None]


class Pinned:
    """A side's step timed under that side's torch settings (entered around each block,
    outside the timed iterations, as the yardstick's are)."""

    def __init__(self, step: Any, state: torch_state.State) -> None:
        self.step, self.state = step, state

    def __call__(self, index: int) -> Any:
        return self.step(index)

    def block(self) -> Any:
        return torch_state.pinned(self.state)


def _prefixed(progress: Progress, role: str) -> Progress:
    """`progress` with each message prefixed by the side's role."""
    return lambda phase, message: progress(phase, f"{role}: {message}")


def schedule_names(roles: list[str], copies: list[str]) -> list[str]:
    """The blocks of one round: each copy of every side, the sides next to each other
    (base/eager, head/eager, base/eager_b, head/eager_b, …), the yardsticks last."""
    return [f"{role}/{copy}" for copy in copies for role in roles] + list(YARDSTICKS)


def split_sides(
    timed: dict[str, dict[str, list[Any]]], role: str
) -> dict[str, dict[str, list[Any]]]:
    """One side's timing in a one-side child's shape: its copies, and the shared yardsticks."""
    prefix = f"{role}/"
    own = {name[len(prefix) :]: value for name, value in timed.items() if name.startswith(prefix)}
    return {**own, **{name: timed[name] for name in YARDSTICKS if name in timed}}


def measure_pair(
    sides: list[ChildSide],
    settings: dict[str, Any],
    device: str,
    progress: Progress,
    control: ControlLine | None = None,
) -> dict[str, dict[str, Any]]:
    """Both sides built and warmed up one after the other, then timed in the same rounds;
    per role, {"eager": …} or {"variant": …} as a one-side child returns it. `control`: the
    line to the parent, asked before the rounds (None: nothing waits)."""
    clean = torch_state.capture()
    warmup, iterations, rounds = settings["warmup"], settings["iterations"], settings["rounds"]
    built: dict[str, tuple[Any, torch_state.State, SideModules]] = {}
    for side in sides:
        torch_state.apply(clean)
        repo_root = Path(side.repo_root)
        modules = SideModules(repo_root, user_import_paths(side.entry, repo_root), side.cache_dir)
        with modules.active():
            progress(Phase.IMPORT, f"{side.role}: importing the step factory")
            builder = StepBuilder(side.entry, repo_root, device, settings["seed"], side.role)
            if side.variant is None:
                copies: Any = EagerCopies(builder, settings, _prefixed(progress, side.role))
            else:
                copies = VariantCopies(
                    builder, settings, side.variant, _prefixed(progress, side.role)
                )
        built[side.role] = (copies, torch_state.capture(), modules)
    torch_state.apply(clean)
    roles = [side.role for side in sides]
    copy_names = list(next(iter(built.values()))[0].sides())
    steps: dict[str, Any] = {}
    sticks = yardsticks(device, clean)
    for name in schedule_names(roles, copy_names):
        if name in sticks:
            steps[name] = sticks[name]
        else:
            role, copy = name.split("/", 1)
            copies, state, _ = built[role]
            steps[name] = Pinned(copies.sides()[copy], state)
    if control is not None:  # a child started ahead may still be importing (control.py)
        control.wait_for_quiet()
    progress(
        Phase.TIMED, f"measuring base and head: {iterations} iterations per copy in {rounds} rounds"
    )
    with pinned(torch.get_num_threads()):
        timed = interleaved_rounds(
            steps,
            first_index=warmup,
            iterations=iterations,
            rounds=rounds,
            timer=timer_for(device),
            on_round=lambda r: progress(Phase.TIMED, f"round {r + 1}/{rounds}"),
        )
    out: dict[str, dict[str, Any]] = {}
    end = warmup + iterations
    for side in sides:
        copies, state, _ = built[side.role]
        record = {"changed": torch_state.changed(clean, state)}
        with torch_state.pinned(state):
            if side.variant is None:
                eager = copies.result(split_sides(timed, side.role), record)
                eager["step_work"] = step_work(
                    copies.eager_a, warmup, progress, Path(side.repo_root)
                )
                out[side.role] = {"eager": eager}
            else:
                peak = peak_step_bytes(copies.compiled, end, device)
                eager_peak = peak_step_bytes(copies.eager_a, end, device)
                result = copies.result(
                    split_sides(timed, side.role), peak, record, {}, eager_peak=eager_peak
                )
                out[side.role] = {"variant": result}
    return out


class EagerCopies:
    """Two eager copies of the step, built and warmed up (measure_eager's, for a pair)."""

    def __init__(self, builder: StepBuilder, settings: dict[str, Any], progress: Progress) -> None:
        device, amp, warmup = builder.device, settings["amp"], settings["warmup"]
        self.device, self.end = device, warmup + settings["iterations"]
        progress(Phase.BUILD, "building eager copies")
        self.eager_a = TrainingStep(builder.build(), device=device, amp=amp)
        self.eager_b = TrainingStep(builder.build(), device=device, amp=amp)
        progress(Phase.EAGER_WARMUP, f"eager warm-up ({warmup} iterations per copy)")
        self.warmup_s = timed_warmup(_checked(self.eager_a), range(warmup), device)
        timed_warmup(_checked(self.eager_b), range(warmup), device)

    def sides(self) -> dict[str, Any]:
        return {"eager": self.eager_a, "eager_b": self.eager_b}

    def result(self, timed: dict[str, Any], torch_state_record: dict[str, Any]) -> dict[str, Any]:
        return {
            "warmup_s": self.warmup_s,
            "timed": timed,
            "peak_bytes": peak_step_bytes(self.eager_a, self.end, self.device),
            "torch_state": torch_state_record,
        }
