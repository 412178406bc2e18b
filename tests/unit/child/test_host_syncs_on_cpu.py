"""Host syncs on a CPU (issue 54, finding 2): an `.item()` of the optimizer's host-side
counters (AdamW's `step`, read by torch/optim/optimizer.py's `_get_value`) is no sync on any
device and is not counted; an `.item()` of the step's own tensors still is, named at its
line. The rule on made-up events, the counters it leaves out, and real eager steps."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from compilegate.child.dynamo_logs import PathClassifier  # noqa: E402
from compilegate.child.step_work import (  # noqa: E402
    ITEM,
    _Event,
    count_step_work,
    host_side_state,
    is_host_sync,
    tally,
)
from compilegate.child.training import TrainingStep  # noqa: E402
from compilegate.child.user_code import StepParts  # noqa: E402


def item(start: int) -> list[_Event]:
    return [
        _Event("aten::item", start, start + 100, 1, "cpu"),
        _Event(ITEM, start + 10, start + 90, 1, "cpu"),
    ]


def test_on_the_cpu_a_counter_read_is_no_sync_and_any_other_item_is_one():
    events = item(0) + item(200)  # the optimizer's counter, then the loss
    reads = frozenset({10})
    counter, loss = events[1], events[3]
    assert not is_host_sync(counter, 1, device="cpu", waited=set(), counter_reads=reads)
    assert is_host_sync(loss, 3, device="cpu", waited=set(), counter_reads=reads)
    counted = tally(events, device="cpu", compiled=False, counter_reads=reads)
    assert counted["counts"]["host_syncs"] == 1
    assert counted["counts"]["aten_ops"] == 4  # both reads are still dispatched ops
    assert tally(events, device="cpu", compiled=False)["counts"]["host_syncs"] == 2
    # On CUDA the rule is the copy inside the read, whatever the counters are.
    assert not is_host_sync(loss, 3, device="cuda", waited=set(), counter_reads=frozenset())
    assert is_host_sync(loss, 3, device="cuda", waited={3}, counter_reads=reads | {210})


def stepped(optimizer_of, *, steps: int = 2) -> torch.optim.Optimizer:
    model = torch.nn.Linear(4, 2)
    optimizer = optimizer_of(model.parameters())
    for _ in range(steps):
        optimizer.zero_grad()
        model(torch.randn(3, 4)).sum().backward()
        optimizer.step()
    return optimizer


def test_the_counters_left_out_are_the_0_dim_cpu_state_of_groups_neither_capturable_nor_fused():
    adamw = stepped(torch.optim.AdamW)
    counters = host_side_state(adamw)
    assert [id(t) for t in counters] == [id(adamw.state[p]["step"]) for p in adamw.state]
    assert host_side_state(stepped(lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9))) == []
    for flag in ("capturable", "fused"):  # the counter lives beside its parameter there
        flagged = stepped(torch.optim.Adam)
        flagged.param_groups[0][flag] = True
        assert host_side_state(flagged) == []
    assert host_side_state(object()) == []  # not torch's kind: nothing is left out


def step_with(optimizer_of, plant: str = "") -> TrainingStep:
    torch.manual_seed(0)
    layers = [torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)]
    if plant == "layer":
        layers += [torch.nn.ReLU(), torch.nn.Linear(4, 4)]
    model = torch.nn.Sequential(*layers)
    optimizer = optimizer_of(model.parameters())
    xs, ys = torch.randn(4, 8, 16), torch.randint(0, 4, (4, 8))

    def loss(model, inputs):
        out = model(inputs[0])
        if plant == "item":
            out.sum().item()
        return torch.nn.functional.cross_entropy(out, inputs[1])

    parts = StepParts(
        model=model, optimizer=optimizer, batch=lambda i: (xs[i % 4], ys[i % 4]), loss=loss
    )
    step = TrainingStep(parts, device="cpu")
    for index in range(2):
        step(index)
    return step


OPTIMIZERS = {
    "AdamW": torch.optim.AdamW,
    "AdamW foreach": lambda ps: torch.optim.AdamW(ps, foreach=True),
    "SGD momentum": lambda ps: torch.optim.SGD(ps, lr=0.01, momentum=0.9),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_an_optimizers_counters_are_no_sync_a_layer_adds_none_and_a_user_item_is_one(name):
    here = Path(__file__)
    paths = PathClassifier.for_torch(here.parent)
    optimizer_of = OPTIMIZERS[name]
    plain = count_step_work(step_with(optimizer_of), 2, paths)
    assert plain["counts"]["host_syncs"] == 0
    assert plain["sync_sites"] == []  # not torch/optim/optimizer.py's `_get_value`
    layered = count_step_work(step_with(optimizer_of, "layer"), 2, paths)
    assert layered["counts"]["host_syncs"] == 0
    assert layered["counts"]["flops"] > plain["counts"]["flops"]
    planted = count_step_work(step_with(optimizer_of, "item"), 2, paths)
    assert planted["counts"]["host_syncs"] == 1
    line = next(
        number
        for number, text in enumerate(here.read_text().splitlines(), start=1)
        if text.strip() == "out.sum().item()"
    )
    assert planted["sync_sites"] == [[f"{here.name}:{line}", 1]]
