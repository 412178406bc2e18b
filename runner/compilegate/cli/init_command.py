"""`compilegate init ENTRY`: write a starting compilegate.yml for one step factory.

The device and threads are chosen for the machine the measuring interpreter (`--python`)
sees: it is started once, as `compilegate run` starts it (run/orchestrate.probe_environment),
so torch is never imported into this process and init's choice is the run's. The entry is
checked statically (run/entry_check.py), as the run checks it, without importing user code.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from ..errors import EXIT_OK, ConfigError, UsageError

CONFIG_NAME = "compilegate.yml"


def add_parser(commands: Any) -> None:
    init = commands.add_parser(
        "init",
        help="write a starting compilegate.yml for a step factory",
        description="Write compilegate.yml at the repository root for one step factory, with "
        "the device and threads chosen for this machine and a comment above every key.",
    )
    init.add_argument(
        "entry",
        metavar="ENTRY",
        help="the step factory: path/to/file.py:function or package.module:function, "
        "relative to the repository root",
    )
    init.add_argument(
        "--repo",
        type=Path,
        default=Path("."),
        help="repository root: the entry is relative to it and compilegate.yml is written "
        "in it (default: the current folder)",
    )
    init.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter that imports torch and will run the steps; its torch decides the "
        "device (default: this one)",
    )
    init.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default=None,
        help="write this device instead of the one the interpreter's torch sees",
    )
    init.add_argument("--name", default=None, help="the step's name (default: the entry's file)")
    init.add_argument("--force", action="store_true", help="overwrite an existing compilegate.yml")
    init.set_defaults(func=command_init)


def command_init(args: argparse.Namespace) -> int:
    from .. import __version__
    from ..config.loading import load_config_text
    from ..config.starter import Machine, schema_reference, starter_config_text, step_name_for
    from ..run.entry_check import resolve_entry
    from ..schemas import schema_dir

    root = args.repo
    if not root.is_dir():
        raise UsageError(f"--repo {root}: not a directory")
    target = root / CONFIG_NAME
    if os.path.lexists(target) and not args.force:
        raise UsageError(f"{target} exists; pass --force to overwrite it")
    _check_entry_form(args.entry)
    try:
        resolve_entry(args.entry, root, f"entry {args.entry}")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    name = args.name or step_name_for(args.entry)
    python = _check_python(args.python)
    machine = Machine.from_environment(_probe(python), device=args.device)
    text = starter_config_text(
        args.entry,
        machine,
        name=name,
        schema_path=schema_reference(schema_dir() / "config.schema.json", root, Path(sys.prefix)),
        version=__version__,
    )
    # The file must load as `compilegate run` will load it: a name or entry the schema
    # refuses is the user's one-line error now, and no file is left behind.
    load_config_text(text, source=str(target), repo_root=root.resolve())
    if os.path.lexists(target):
        os.unlink(target)  # --force: a link is replaced, never written through
    with open(target, "x", encoding="utf-8") as out:
        out.write(text)
    sys.stdout.write(
        f"wrote {target}: step {name!r} on {machine.device}"
        + (", threads: 1" if machine.device == "cpu" else "")
        + f" ({machine.described()}); each key is explained in a comment above it\n"
        + f"next: {_next_command(root, args.python)}\n"
    )
    return EXIT_OK


def _check_entry_form(entry: str) -> None:
    target, colon, function = entry.rpartition(":")
    if not colon or not target or not function.isidentifier():
        raise UsageError(
            f"entry {entry!r}: expected path/to/file.py:function or package.module:function"
        )


def _check_python(python: str) -> str:
    found = shutil.which(python)
    if found is None:
        raise UsageError(f"--python {python}: no such interpreter")
    return found


def _probe(python: str) -> dict[str, Any]:
    """The measuring interpreter's environment (torch version, device, cores), from one
    child started as the run starts it."""
    from ..run.launcher import ChildLauncher
    from ..run.orchestrate import probe_environment

    return probe_environment(ChildLauncher(python=python, ahead=False), python)


def _next_command(root: Path, python_given: str) -> str:
    """The command that measures the step just declared, as the user would type it."""
    words = ["compilegate", "run"]
    if python_given != sys.executable:
        words += ["--python", python_given]
    command = " ".join(shlex.quote(w) for w in words)
    if root.resolve() != Path.cwd().resolve():
        return f"cd {shlex.quote(str(root))} && {command}"
    return command
