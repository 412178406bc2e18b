"""Paired runs: both sides of the question measured in one job, on one machine, their
processes alternating A B B A (orchestrate.run_sides).

`compilegate run --against REF`: the base (REF) and the head (this checkout).
`compilegate matrix --paired --torch A --torch B`: the same code under each version
(run_versions_paired), each later version judged against the first.

- REF is checked out into a temporary worktree that goes with the run; the head is the
  checkout as it is. git runs against the checkout's own `.git` only, never one it would
  discover in the checkout, with hooks and fsmonitor off (run/host_git.py). Each side's
  children run in their own tree, with their own Inductor caches and output folders:
  nothing the head writes reaches the base's side.
- The policy is REF's: each step the head shares with REF is measured with REF's settings
  (warm-up, iterations, rounds, seed, amp, threads, numerics, process counts, cold
  compiles, timeout, the opted-in environment, the epoch), so that both sides run the same
  schedule and the head cannot ask for less power or for a host variable REF does not
  give; the head keeps its own entry and variants (what the pull request changes). The
  gate reads the thresholds from the base's document (gate/policy.py), where REF's config
  put them; the head's differing settings are named in a note, never applied.
- A step only the head declares is measured on the head alone (`new`), given no host
  variable it opts in (no policy gives one); one only REF declares is not measured and
  reads `removed`.

REF's own config is the base's: the file at the head config's path as named (never a link's
target) inside REF's tree. When REF has none there is no policy to judge the head by: the run
stops before measuring, not judged (BaselineMissing, exit 4), never every step `new`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..checkout_files import path_in_repository
from ..config import Config, StepConfig
from ..config.limits import ResourceLimits
from ..config.loading import load_config_file
from ..errors import BaselineMissing, UsageError
from ..results.document import pairing_entry
from ..results.step_record import not_run
from .child_failure import HEAD_LACKS_STEP, ChildFailure, NotRun
from .child_user import ChildUser, open_folder
from .host_git import GitRepository, repository_of, run_git
from .launcher import Launcher
from .orchestrate import RunOptions, RunSide, run_sides

# What REF's step decides for a head step of the same name: everything but what the pull
# request is about (its entry, its variants) and the thresholds it asks for (shown, not
# applied: the gate reads the thresholds from the base's document).
HEAD_OWN_FIELDS = ("name", "entry", "variants", "thresholds")


@dataclass(frozen=True)
class PairedConfigs:
    """What each side measures: the base only the steps the head shares with it; `removed`
    the base's steps the head does not declare (not measured: they read `removed`)."""

    base: Config
    head: Config
    notes: tuple[str, ...]
    removed: tuple[StepConfig, ...] = ()


@dataclass(frozen=True)
class PairedRun:
    """What a paired run measured: both sides' documents and where they were written."""

    base: dict[str, Any]
    head: dict[str, Any]
    base_path: Path
    head_path: Path
    notes: tuple[str, ...]


PAIRING_MODES = ("processes", "in-process")


def run_against(
    head: Config,
    ref: str,
    options: RunOptions,
    pairing: str = "processes",
    before_measuring: Callable[[Config], None] | None = None,
) -> PairedRun:
    """Measure REF and the head side by side (module docstring). The head's document goes
    to options.out_path, the base's beside it (base_result_path). An interruption marks
    both, as run_sides says.

    `pairing` "in-process": each eager reference and each warm timing process measures
    base and head in one child, interleaved in the same rounds (child/measure_pair.py).
    Only where one process can hold both: one interpreter on the host; with a launcher of
    its own (one container per child) the sides alternate processes, and a note says so.
    `before_measuring`: called with the config both sides measure under (REF's policy)
    once it is known, before anything is measured (the CLI's warnings)."""
    base_path = base_result_path(options.out_path)
    notes: list[str] = []
    if pairing not in PAIRING_MODES:
        raise UsageError(f"--pairing {pairing!r}: expected one of {', '.join(PAIRING_MODES)}")
    if pairing == "in-process" and options.launcher is not None:
        notes.append(
            "pairing: in-process asked for, but each child runs in its own container: "
            "base and head alternate processes"
        )
        pairing = "processes"
    with checkout(head.repo_root, ref, readable_by=options.child_user) as (tree, _):
        configs = paired_configs(tree, head)
        pairing_id = new_pairing_id()
        sides = []
        for config, role, path in (
            (configs.base, "base", base_path),
            (configs.head, "head", options.out_path),
        ):
            launcher = _launcher(options, role)
            entry = pairing_entry(pairing_id, role, "base", "head", pairing)
            sides.append(
                RunSide(config, launcher, path, role, python=launcher.python, pairing=entry)
            )
        if before_measuring is not None:
            before_measuring(configs.base)
        options.stream.write(
            "paired: base and head in one process (eager references and warm timing "
            "processes; cold compiles alternate)\n"
            if pairing == "in-process"
            else "paired: base and head in alternating processes (A B B A)\n"
        )
        run_sides(sides, options.stream, in_process=pairing == "in-process")
    for step in configs.removed:  # in the base only: not measured, read as removed
        lacks = ChildFailure(NotRun(HEAD_LACKS_STEP)).recorded()
        sides[0].steps.append(not_run(step, *lacks))
    sides[0].save()
    return PairedRun(
        sides[0].document,
        sides[1].document,
        base_path,
        options.out_path,
        (*configs.notes, *notes),
    )


def run_versions_paired(
    config: Config,
    launchers: Sequence[tuple[str, Launcher]],
    out_paths: Sequence[Path],
    stream: TextIO,
) -> list[dict[str, Any]]:
    """`matrix --paired`: the same config under each (torch version, its launcher: a venv's
    interpreter or a container image), one machine, the versions' processes alternating
    (A B C, C B A, …); the first version is the base every later one is judged against. One
    document per version, at `out_paths`."""
    pairing_id = new_pairing_id()
    base_label = f"torch {launchers[0][0]}"
    sides = []
    for index, ((version, launcher), path) in enumerate(zip(launchers, out_paths)):
        label = f"torch {version}"
        role = "base" if index == 0 else "head"
        entry = pairing_entry(pairing_id, role, base_label, label if index else "later versions")
        sides.append(RunSide(config, launcher, path, label, python=launcher.python, pairing=entry))
    run_sides(sides, stream)
    return [side.document for side in sides]


def _launcher(options: RunOptions, role: str) -> Launcher:
    """Each side its own launcher; a shared Inductor cache (--inductor-cache DIR) becomes one
    folder per side (DIR/base, DIR/head), so the head never compiles into the base's."""
    if options.launcher is not None:
        return options.launcher
    cache = options.inductor_cache_dir / role if options.inductor_cache_dir else None
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    return dataclasses.replace(options, inductor_cache_dir=cache).make_launcher()


def base_result_path(out_path: Path) -> Path:
    """Where the base's result goes beside the head's: result.json → result.base.json."""
    return out_path.with_name(f"{out_path.stem}.base.json")


def new_pairing_id() -> str:
    return uuid.uuid4().hex


@contextlib.contextmanager
def checkout(
    repo_root: Path, ref: str, *, readable_by: ChildUser | None = None
) -> Iterator[tuple[Path, str]]:
    """REF's tree in a temporary worktree, and REF's commit; removed afterwards. The tree
    yielded is REF's copy of `repo_root`: the worktree's own folder when `repo_root` is the
    repository's top level, else the same subfolder inside it. `readable_by`: the user the
    children run as, when not ours (run/child_user.py): the tree is opened to it."""
    repo = repository_of(repo_root)
    sha = resolve_commit(repo, repo_root, ref)
    inside = Path(os.path.abspath(repo_root)).resolve().relative_to(repo.work_tree)
    folder = Path(tempfile.mkdtemp(prefix="compilegate-base-"))
    tree = folder / "tree"
    try:
        run_git(repo, "worktree", "add", "--detach", "--force", str(tree), sha)
        open_folder(folder, readable_by)
        yield tree / inside, sha
    finally:
        with contextlib.suppress(UsageError):
            run_git(repo, "worktree", "remove", "--force", str(tree))
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(UsageError):
            run_git(repo, "worktree", "prune")


def resolve_commit(repo: GitRepository, repo_root: Path, ref: str) -> str:
    if not ref or ref.startswith("-"):
        raise UsageError(f"--against {ref!r}: expected a commit, branch or tag")
    try:
        return run_git(
            repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"
        )
    except UsageError:
        raise UsageError(
            f"--against {ref}: not a commit of the repository at {repo_root} (a shallow clone "
            "may not have it: fetch it, e.g. actions/checkout with fetch-depth: 0)"
        ) from None


def paired_configs(base_tree: Path, head: Config) -> PairedConfigs:
    """REF's config (from its tree) and the head's (after --step) under REF's policy, with
    the notes. A base step the head declares but did not select is left out of the base
    too (the gate reads it as `skipped`, from the head's declared steps)."""
    relative = path_in_repository(head.path, head.repo_root)
    if relative is None or not relative.parts:
        raise UsageError(
            f"--against: the config {head.path} is outside the repository {head.repo_root}: "
            "paired mode reads the base's config from the same path in the base's tree"
        )
    # The path as named, never a link's target: the head's config was read without following
    # links (checkout_files), and the base's is read the same way at the same name.
    base_file = base_tree / relative
    if not os.path.lexists(base_file):
        raise BaselineMissing(
            f"--against: the base commit has no {relative.as_posix()}: no policy to judge the "
            "head by (a pull request that adds the config: judge it against a stored baseline, "
            "e.g. the action's `against: none` with `allow-missing-baseline: true`)"
        )
    notes: list[str] = []
    base = load_config_file(base_file, repo_root=base_tree)
    base_steps = {step.name: step for step in base.steps}
    steps = []
    head_names = {step.name for step in head.steps}
    measured_base = tuple(s for s in base.steps if s.name in head_names)
    only_base = tuple(s for s in base.steps if s.name not in head_names)
    for step in head.steps:
        ref_step = base_steps.get(step.name)
        if ref_step is None and step.env:  # no policy gives a new step a host variable
            notes.append(
                f"step {step.name}: env {', '.join(step.env)} not given to the child: a step "
                "the base does not declare gets no opt-in (the base's config gives them)"
            )
            step = dataclasses.replace(step, env=())
        if ref_step is None:  # the head's own step: its limits no looser than the defaults
            steps.append(dataclasses.replace(step, limits=step.limits.capped_by(ResourceLimits())))
            continue
        adopted = dataclasses.replace(
            ref_step, **{name: getattr(step, name) for name in HEAD_OWN_FIELDS}
        )
        changed = [
            f"{f.name} {getattr(step, f.name)!r} (base: {getattr(ref_step, f.name)!r})"
            for f in dataclasses.fields(StepConfig)
            if f.name not in HEAD_OWN_FIELDS and getattr(step, f.name) != getattr(ref_step, f.name)
        ]
        if changed:
            notes.append(
                f"step {step.name}: measured with the base's settings, not the head's "
                f"{', '.join(changed)}: the policy comes from the base"
            )
        steps.append(adopted)
    return PairedConfigs(
        dataclasses.replace(base, steps=measured_base),
        dataclasses.replace(head, steps=tuple(steps)),
        tuple(notes),
        only_base,
    )
