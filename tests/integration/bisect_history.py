"""A real repository history for `compilegate bisect` (tests and bench/bisect_bench.py): a
small training step committed `commits` times, each commit changing its REVISION; commit
`item_at` adds an `.item()` to the loss (a host sync per step, outside the compiled model),
commit `branch_at` a data-dependent branch in the model's forward (a graph break, and a host
sync eager), commit `broken_at` (when given) a step that fails to import, repaired by the
next commit. Commits are numbered from 1."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

STEP = """\
import torch
{broken}
REVISION = {revision}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(16, 1)

    def forward(self, x):
        h = torch.relu(self.a(x))
{branch}        return self.b(h)


def make_step(device="cpu"):
    torch.manual_seed(0)
    model = Net().to(device)
    data = torch.randn(16, 8)

    def loss(model, inputs):
        out = model(inputs)
{item}        return out.pow(2).mean()

    return {{
        "model": model,
        "optimizer": torch.optim.SGD(model.parameters(), lr=0.01),
        "batch": lambda i: data.to(device),
        "loss": loss,
    }}
"""
ITEM = "        out.sum().item()\n"
BRANCH = "        if h.sum() > 0:\n            h = h * 2\n"
BROKEN = "import compilegate_no_such_module  # planted: this commit does not import\n"
CONFIG = """\
version: 1
steps:
  - name: tiny
    entry: steps.py:make_step
    threads: 1
    variants: [{backend: eager}]
    warmup: 1
    iterations: 3
    rounds: 2
    eager_processes: 1
    numerics: {enabled: false}
"""
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}
SUBJECTS = {"item": "log the loss with .item()", "branch": "scale when activations are positive"}


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip()


def build_history(
    repo: Path, commits: int = 32, item_at: int = 19, branch_at: int = 27, broken_at: int = 0
) -> list[str]:
    """The repository at `repo` with its history; every commit's sha, oldest first."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "compilegate.yml").write_text(CONFIG)
    shas = []
    for number in range(1, commits + 1):
        source = STEP.format(
            revision=number,
            broken=BROKEN if number == broken_at else "",
            item=ITEM if number >= item_at else "",
            branch=BRANCH if number >= branch_at else "",
        )
        (repo / "steps.py").write_text(source)
        subject = (
            SUBJECTS["item"] if number == item_at
            else SUBJECTS["branch"] if number == branch_at
            else f"the step does not import (revision {number})" if number == broken_at
            else f"revision {number}"
        )  # fmt: skip
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", subject)
        shas.append(git(repo, "rev-parse", "HEAD"))
    return shas
