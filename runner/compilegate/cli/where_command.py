"""`compilegate where`: where am I, and does a backend fit here — in one line.

The shape (containers/shape.py): a Docker engine that can hand a container the GPU, one that
cannot (ARC's dind sidecar), inside a job container with no engine (ARC's kubernetes modes),
or neither. With the config's steps and `--gpus` it says whether `--backend` can run them
here and, where not, what to use (report/shape_words.py): exit 0 when it fits, 2 when not.
The action asks it before its first Docker call (`--annotate`: the line as an `::error`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import EXIT_OK, EXIT_USAGE
from .matrix_backends import BACKENDS, backend_fit


def add_parser(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "where",
        help="say in one line where compilegate runs (Docker engine with or without the "
        "NVIDIA runtime, a job container, neither) and what backend to use",
        description=(
            "Find the shape this job runs in and whether --backend can measure the config's "
            "steps here: exit 0 when it can, 2 (with what to use instead) when it cannot. A "
            "step with device: cuda, or --gpus, needs an engine that can hand a container "
            "the GPU; compilegate never measures a GPU step on the CPU."
        ),
    )
    cmd.add_argument("--backend", choices=(*BACKENDS, "host"), default="docker")
    cmd.add_argument(
        "--config",
        type=Path,
        default=None,
        help="the config whose steps' devices count (default: compilegate.yml when present)",
    )
    cmd.add_argument(
        "--gpus",
        default=None,
        metavar="SPEC",
        help="the GPUs matrix would ask the engine for (as docker run --gpus takes them)",
    )
    cmd.add_argument(
        "--annotate",
        action="store_true",
        help="when the backend does not fit, print the line as a GitHub Actions ::error",
    )
    cmd.set_defaults(func=command_where)


def command_where(args: argparse.Namespace) -> int:
    from ..config.loading import load_config_file
    from ..report.shape_words import shape_line
    from ..report.workflow_annotation import Annotation
    from ..run.workflow_log import write_command

    path = args.config
    if path is None and Path("compilegate.yml").is_file():
        path = Path("compilegate.yml")
    config = load_config_file(path) if path is not None else None
    fit = backend_fit(args.backend, config, args.gpus)
    line = shape_line(fit)
    if fit.fits or not args.annotate:
        sys.stdout.write(line + "\n")
    else:
        annotation = Annotation("error", line.removeprefix("compilegate: "), title="compilegate")
        write_command(sys.stdout, annotation.format_workflow_command())
    return EXIT_OK if fit.fits else EXIT_USAGE
