"""The resource limits of a measuring container: policy, like the thresholds.

Pull-request code runs in the container; without limits it can fork until the host has no
process slots left, allocate until the host's OOM killer picks a victim, or fill the disk
with its log or its output folder (issue 21). Each step's `limits` (compilegate.yml,
`defaults.limits` or a step's own) bound the container it is measured in:

- `memory_mib`: memory of the container (swap none beyond it); over it the kernel kills the
  biggest process and the step is an error "killed: out of memory (limit 32 GiB)";
- `pids`: processes and threads in the container; a fork past it fails, and the step is an
  error "pids limit 4096 reached" (compile workers and data loaders count: a CPU host with
  many cores runs one compile worker per core);
- `log_mib`: the engine's log file of the container (json-file max-size);
- `output_mib`: what the container may leave in its output folder; more is an error, and
  nothing of it is read.

A setting only the trusted side may loosen: in paired mode the base's step decides (it is
not one of run/paired.HEAD_OWN_FIELDS) and a step only the head declares gets at most the
defaults; against a stored baseline (`matrix --baseline`) each limit is at most the
baseline step's, or the default where the baseline records none (`under_baseline`). The
venv backend (trusted code) applies only the output bound (relay.py), no container limits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MIB = 1024 * 1024
# Sized for a training step: the step's process (torch, a CUDA context, pinned batches),
# Inductor's compile workers and a data loader; host memory only, GPU memory is not counted.
DEFAULT_MEMORY_MIB = 32 * 1024
DEFAULT_PIDS = 4096
DEFAULT_LOG_MIB = 64
DEFAULT_OUTPUT_MIB = 1024


@dataclass(frozen=True)
class ResourceLimits:
    """One step's container limits (module docstring); every field a positive count."""

    memory_mib: int = DEFAULT_MEMORY_MIB
    pids: int = DEFAULT_PIDS
    log_mib: int = DEFAULT_LOG_MIB
    output_mib: int = DEFAULT_OUTPUT_MIB

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> ResourceLimits:
        """The config's (or a recorded document's) mapping; an absent key is the default,
        a value that is not a positive integer too (documents are read as hostile)."""
        known = {field.name for field in dataclasses.fields(cls)}
        return cls(
            **{
                key: value
                for key, value in (raw or {}).items()
                if key in known and _positive_int(value)
            }
        )

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)

    def capped_by(self, ceiling: ResourceLimits) -> ResourceLimits:
        """Each limit the smaller of this one's and `ceiling`'s (the trusted side's)."""
        return ResourceLimits(
            **{key: min(value, getattr(ceiling, key)) for key, value in self.to_dict().items()}
        )

    @classmethod
    def widest(cls, limits: list[ResourceLimits]) -> ResourceLimits:
        """One container for several steps (a whole `compilegate run`): the largest of each."""
        if not limits:
            return cls()
        return cls(**{key: max(getattr(one, key) for one in limits) for key in cls().to_dict()})


def under_baseline(
    steps: Sequence[tuple[str, ResourceLimits]], recorded: Mapping[str, Any] | None
) -> ResourceLimits:
    """The limits of one container that runs these (step name, limits): the widest of them,
    each step's first capped by the limits its baseline step recorded (`recorded`: step
    name → its `settings.limits`; the defaults where the baseline has no such step or
    records none). Without a baseline (None): the config's own."""
    if recorded is None:
        return ResourceLimits.widest([limits for _, limits in steps])
    return ResourceLimits.widest(
        [
            limits.capped_by(ResourceLimits.from_dict(_mapping(recorded.get(name))))
            for name, limits in steps
        ]
    )


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def shown_mib(mib: int) -> str:
    """`512 MiB`, `8 GiB`, `1.5 GiB`: a limit as an error message states it."""
    if mib >= 1024:
        return f"{mib / 1024:g} GiB"
    return f"{mib} MiB"


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
