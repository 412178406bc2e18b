"""The child's state travels as values (issue 53, item 9): a rank's group (child/distributed.py
RankGroup: its place, DDP's split count, the numerics' parameter digest) and the line to the
parent (child/control.py ControlLine) are made once and passed to what needs them, never kept
in a module where any later copy, test or import would find them."""

from __future__ import annotations

import socket
import threading

import torch

from compilegate.child import control, distributed
from compilegate.child.control import ControlLine
from compilegate.child.distributed import RankGroup, place_of, rank_facts, wrap
from compilegate.child.user_code import StepParts

SETTINGS = {"distributed": {"world_size": 2, "wrapper": "ddp"}}


def parts() -> StepParts:
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return StepParts(model, optimizer, lambda i: torch.ones(1, 3), lambda m, x: m(x).sum())


def test_each_rank_group_keeps_its_own_facts():
    first, second = (RankGroup(place_of(SETTINGS, rank, "cpu")) for rank in (0, 1))
    snapshot = {"weight": ("param", torch.ones(2, 3)), "grad": ("grad", torch.zeros(2))}
    first.note_compiled_parameters(snapshot)
    first.splits.graphs = 3
    first.splits.installed = True
    first.compiled()
    first.splits.graphs = 5  # the numerics' compiles, after the timed one: not counted
    document = {"variant": {}, "diagnostics": {}}
    facts = rank_facts(document, first)
    assert facts["rank"] == 0 and facts["ddp_splits"] == 3
    assert facts["parameters_sha256"] is not None and len(facts["parameters_sha256"]) == 64
    other = rank_facts(document, second)
    assert other["rank"] == 1 and other["ddp_splits"] is None
    assert other["parameters_sha256"] is None, "another group's digest is not this one's"


def test_a_copy_without_a_group_is_never_wrapped_whatever_was_made_before():
    RankGroup(place_of(SETTINGS, 0, "cpu"))  # a group made earlier in the process
    step = parts()
    assert wrap(step, "cpu", lambda model: ("", []), None) is step.model


def test_no_module_keeps_the_state():
    names = {name for name in vars(distributed) if not name.startswith("__")}
    assert not names & {"_PLACE", "DDP_SPLITS", "_PARAMETERS_DIGEST"}
    assert not hasattr(control, "_channel")


def test_a_control_line_asks_its_own_socket_and_none_waits_for_nothing():
    ControlLine().wait_for_quiet()  # no parent on the line: returns at once
    ours, theirs = socket.socketpair()
    heard: list[bytes] = []

    def parent() -> None:
        heard.append(ours.recv(16))
        ours.sendall(b"go\n")

    answering = threading.Thread(target=parent)
    answering.start()
    line = ControlLine(theirs)
    assert line.connected and not ControlLine().connected
    line.wait_for_quiet()
    answering.join(timeout=5)
    assert heard == [b"quiet\n"]
    ours.close()
    theirs.close()
