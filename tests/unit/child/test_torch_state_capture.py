"""torch's global settings around user code, and the yardstick pinned to the clean ones
(child/torch_state.py, child/timing.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")

from compilegate.child import torch_state  # noqa: E402
from compilegate.child.timing import CpuTimer, interleaved_rounds, yardstick  # noqa: E402


@pytest.fixture
def restored() -> Iterator[dict]:
    saved = torch_state.capture()
    yield saved
    torch_state.apply(saved)


def test_changed_names_each_setting_that_moved() -> None:
    before = {"num_threads": 2, "default_dtype": "float32", "cudnn.allow_tf32": True}
    after = {"num_threads": 1, "default_dtype": "float32", "cudnn.allow_tf32": False}
    assert torch_state.changed(before, after) == {
        "cudnn.allow_tf32": {"before": True, "after": False},
        "num_threads": {"before": 2, "after": 1},
    }
    assert torch_state.changed(before, dict(before)) == {}


def test_capture_reads_every_tracked_setting(restored: dict) -> None:
    assert set(restored) == set(torch_state.GETTERS)
    assert restored["default_dtype"] == "float32"
    assert isinstance(restored["num_threads"], int)


def test_pinned_runs_the_block_in_the_clean_state_and_gives_the_users_back(
    restored: dict,
) -> None:
    clean = torch_state.capture()
    # None: an earlier test in this process wrote a TF32 flag (the legacy API), and torch
    # then refuses to read the precision; the rest is still pinned.
    precision = clean["float32_matmul_precision"]
    torch.set_num_threads(1)  # what a factory did
    torch.set_default_dtype(torch.float64)
    if precision is not None:
        torch.set_float32_matmul_precision("medium")
    with torch_state.pinned(clean):
        assert torch.get_num_threads() == clean["num_threads"]
        assert torch.get_default_dtype() == torch.float32
        if precision is not None:
            assert torch.get_float32_matmul_precision() == precision
    assert torch.get_num_threads() == 1
    assert torch.get_default_dtype() == torch.float64
    if precision is not None:
        assert torch.get_float32_matmul_precision() == "medium"


@pytest.mark.skipif(torch.get_num_threads() < 2, reason="needs 2 intra-op threads to differ")
def test_a_factory_that_sets_one_thread_does_not_reach_the_yardstick(restored: dict) -> None:
    """The issue's case: the factory called torch.set_num_threads(1) and the yardstick,
    timed after it in the same process, slowed down with the step."""
    clean = torch_state.capture()
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    stick = yardstick("cpu", clean)
    seen: dict[str, set] = {"yardstick": set(), "step": set()}

    def observed(side: str, run):
        def step(index: int) -> None:
            seen[side].add((torch.get_num_threads(), torch.get_default_dtype()))
            run(index)

        step.block = getattr(run, "block", None) or (lambda: _null())  # type: ignore[attr-defined]
        return step

    interleaved_rounds(
        {"step": observed("step", lambda i: None), "yardstick": observed("yardstick", stick)},
        first_index=0,
        iterations=4,
        rounds=2,
        timer=CpuTimer(),
    )
    assert seen["yardstick"] == {(clean["num_threads"], torch.float32)}
    assert seen["step"] == {(1, torch.float64)}
    assert stick.a.dtype == torch.float32


def _null():
    import contextlib

    return contextlib.nullcontext()
