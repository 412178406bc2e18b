"""`compilegate plan`: the config's fan-out over a runner pool, as a GitHub job matrix.

Run it on a checkout of the base branch (examples/workflows/job-matrix.yml's `plan` job): the
legs are the base's steps, as the policy is the base's (config/pool_plan.py says why). It
reads the config and starts nothing: no step is imported, no torch needed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from ..config.loading import load_config_file
from ..config.pool_plan import DEFAULT_SCALE_SET_PREFIX, plan_legs
from ..containers.matrix import check_version
from ..errors import UsageError

# A runner label's start: the scale sets are PREFIX-gpuN and PREFIX-cpu (examples/pool/).
_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


def add_parser(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "plan",
        help="print the GitHub job matrix of a runner pool: one leg per step x PyTorch version",
        description=(
            "Read compilegate.yml (the base branch's: run it on a checkout of the base) and "
            "print the matrix JSON for `strategy.matrix: ${{ fromJSON(...) }}`: one leg per "
            "step x PyTorch version, each with the runner labels of the scale set holding as "
            "many GPUs as the step needs (a distributed step's world_size; none for "
            "device: cpu). Each leg measures base and head paired in one pod. More legs than a "
            "GitHub matrix makes (256) is a usage error that says how to split them."
        ),
    )
    cmd.add_argument("--config", type=Path, default=Path("compilegate.yml"))
    cmd.add_argument(
        "--torch",
        action="append",
        default=[],
        metavar="VERSION",
        help="a PyTorch version (repeatable; default: the config's `torch:` list)",
    )
    cmd.add_argument(
        "--step", action="append", default=[], metavar="NAME", help="plan only this step"
    )
    cmd.add_argument(
        "--scale-set-prefix",
        default=DEFAULT_SCALE_SET_PREFIX,
        metavar="PREFIX",
        help="the scale sets' names: PREFIX-gpuN with N GPUs, PREFIX-cpu with none "
        f"(default: {DEFAULT_SCALE_SET_PREFIX}, as in examples/pool/)",
    )
    cmd.add_argument(
        "--image",
        default=None,
        metavar="TEMPLATE",
        help="each leg's job-container image, {torch} where the version goes "
        "(e.g. registry.example.com/org/compilegate:torch-{torch}); default: no image key",
    )
    cmd.set_defaults(func=command_plan)


def command_plan(args: argparse.Namespace) -> int:
    if not _PREFIX.match(args.scale_set_prefix):
        raise UsageError(
            f"--scale-set-prefix {args.scale_set_prefix!r}: expected a runner label's start "
            "(letters, digits, '_', '.', '-'; at most 40)"
        )
    config = load_config_file(args.config).select(args.step)
    versions = tuple(check_version(v) for v in (args.torch or config.torch_versions))
    if len(set(versions)) != len(versions):
        raise UsageError("--torch: a PyTorch version is named twice")
    plan = plan_legs(config, versions, prefix=args.scale_set_prefix, image=args.image)
    # One line: what `echo "matrix=$(compilegate plan)" >> "$GITHUB_OUTPUT"` takes.
    sys.stdout.write(json.dumps(plan.matrix(), separators=(",", ":")) + "\n")
    return 0
