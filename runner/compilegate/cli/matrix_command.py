"""`compilegate matrix`: the same run once per PyTorch version, then one report.

Per version an environment is built or reused (a Docker image, or a cached virtual
environment with `--backend venv`), `compilegate run` measures in it, and the result lands in
`OUT_DIR/torch-VERSION/result.json` (or `error.txt` when the version failed). The run set is
then judged against the baseline with the gate's rules, and the exit code is the gate's.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..config.limits import under_baseline
from ..config.loading import load_config_file
from ..containers.matrix import check_version, run_matrix
from ..containers.outcome import VersionOutcome
from ..containers.requirements import ALLOW_SOURCE_BUILDS_FLAG, read_requirements
from ..errors import BaselineError, RunInterrupted, UsageError
from ..gate.documents import read_document
from ..gate.run_set import ERROR_NAME, RESULT_NAME, ResultSource, judge_run_set
from ..report.comment import render_comment
from ..report.run_set_text import render_run_set_text, requirements_hint
from ..results.model import ResultDocument, parse
from ..run.checkout_credentials import refuse_persisted_credentials
from ..run.env_policy import trusts_config_env
from .images_command import add_keep_images_argument
from .matrix_backends import BACKENDS, matrix_backend, paired_launchers
from .report_commands import links_from_environment
from .run_command import add_env_arguments, config_under_env_policy, refuse_opted_in_credentials

if TYPE_CHECKING:
    pass

# The build network's default when --build-network is not given: for an engine without a
# bridge (scripts/docker-setup.sh's, this project's tests and CI: `host`).
BUILD_NETWORK_ENV = "COMPILEGATE_BUILD_NETWORK"
PARTIAL_NAME = "partial-result.json"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # pip colours its errors inside a build log


def add_parser(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "matrix",
        help="run the steps under several PyTorch versions (one image or venv each), one report",
        description=(
            "For each --torch version: build or reuse its environment, measure the declared "
            "steps in it (repository read-only, no network, no token), then judge every "
            "version against the baseline in one report. A version that cannot be installed "
            "or fails is an error row; the others still run."
        ),
    )
    cmd.add_argument(
        "--torch",
        action="append",
        required=True,
        metavar="VERSION",
        help="a PyTorch version, e.g. 2.13.0 (repeatable)",
    )
    cmd.add_argument("--config", type=Path, default=Path("compilegate.yml"))
    cmd.add_argument(
        "--repo", type=Path, default=None, help="repository root (default: the config's folder)"
    )
    cmd.add_argument("--step", action="append", default=[], metavar="NAME")
    cmd.add_argument(
        "--backend",
        choices=BACKENDS,
        default="docker",
        help="docker: an image per version, each run in a locked container; venv: a virtual "
        "environment per version on this host (trusted code only); image: the torch of the "
        "image compilegate runs in, one version, no Docker (the image as a job container: "
        "docs/security.md); `compilegate where` says which fits here",
    )
    cmd.add_argument("--out-dir", type=Path, default=Path("compilegate-results"), metavar="DIR")
    cmd.add_argument("--baseline", type=Path, default=None)
    cmd.add_argument(
        "--gpus",
        default=None,
        metavar="SPEC",
        help="docker: GPUs as `docker run --gpus` takes them (all, N, device=0,1)",
    )
    cmd.add_argument(
        "--base-image",
        default=None,
        metavar="IMAGE",
        help="docker: the image each version's image is built on",
    )
    cmd.add_argument(
        "--index-url",
        default=None,
        metavar="URL",
        help="where torch is installed from (a CUDA or CPU build index)",
    )
    cmd.add_argument(
        "--requirements",
        type=Path,
        default=None,
        metavar="FILE",
        help="a pip requirements file of the repository (no link, at most 1 MiB), installed "
        "beside each version's torch, which it may not replace: docker, into each image at "
        "build time (with the network; the measured run has none); venv, into each version's "
        "environment (torch-X-req-DIGEST): wheels only",
    )
    cmd.add_argument(
        ALLOW_SOURCE_BUILDS_FLAG,
        dest="requirements_allow_source_builds",
        action="store_true",
        help="let pip build --requirements from source (sdists, URLs, VCS): each such "
        "package's build code then runs at image or environment build time, with the network",
    )
    cmd.add_argument(
        "--build-network",
        default=os.environ.get(BUILD_NETWORK_ENV) or "default",
        metavar="NETWORK",
        help="docker: the network image builds use: default (the engine's: on Docker's bridge "
        "the build cannot reach the runner's localhost services), host (an engine without a "
        "bridge; the build then reaches everything the host does), none (offline builds), "
        f"or a network's name (default: ${BUILD_NETWORK_ENV}, else default)",
    )
    cmd.add_argument(
        "--paired",
        action="store_true",
        help="measure the versions side by side on this machine, their processes alternating, "
        "and judge each later version against the first on paired differences (instead of "
        "against --baseline)",
    )
    cmd.add_argument(
        "--against",
        default=None,
        metavar="REF",
        help="per version, measure REF (its config is the policy) and this checkout side by "
        "side, their processes alternating, and judge the checkout against it",
    )
    cmd.add_argument(
        "--rebuild",
        action="store_true",
        help="rebuild images / venvs even when one with the same inputs exists",
    )
    cmd.add_argument(
        "--keep-old-images",
        action="store_true",
        help="--backend docker: keep the images an earlier compilegate built (by default a "
        "build first removes them: this compilegate never reuses them)",
    )
    add_keep_images_argument(cmd)
    cmd.add_argument(
        "--timeout-s",
        type=float,
        default=3600.0,
        help="wall-clock limit of each version's run; with --paired or --against, of the "
        "whole paired run, the images built first (default 3600)",
    )
    add_env_arguments(cmd)
    cmd.set_defaults(func=command_matrix, requirements_bytes=None)


def command_matrix(args: argparse.Namespace) -> int:
    versions = [check_version(v) for v in args.torch]
    config = load_config_file(args.config, repo_root=args.repo).select(args.step)
    refuse_persisted_credentials(config.repo_root)  # a token in .git/config: never measured
    baseline = None
    if args.baseline is not None:  # a bad baseline is found before hours of measuring
        baseline = read_document(args.baseline, role="baseline")
    if args.against:  # the base's config gives the opt-ins (run/paired.py)
        if args.env:
            raise UsageError("--env and --against: in paired mode the base's config gives the "
                             "opt-ins; add the name to its `env:`")  # fmt: skip
        refuse_opted_in_credentials(args.config, config)
    else:  # a credential under a given name is refused before anything runs
        config = config_under_env_policy(args, config, baseline)
    if args.requirements is not None:  # read once, here: the builds get these bytes
        args.requirements_bytes = read_requirements(
            args.requirements,
            config.repo_root,
            allow_source_builds=args.requirements_allow_source_builds,
        )
    if args.out_dir.exists() and not args.out_dir.is_dir():
        raise UsageError(f"--out-dir {args.out_dir}: exists and is not a directory")
    if args.paired or args.against:
        return _command_matrix_paired(args, versions, config)
    opt_in = sorted({name for step in config.steps for name in step.env})
    backend, env = matrix_backend(args, config, opt_in, _log)
    outcomes = run_matrix(
        versions,
        backend,
        config=args.config.resolve(),
        repo=config.repo_root,
        out_dir=args.out_dir,
        env=env,
        steps=args.step,
        extra_args=_inner_env_arguments(args, baseline, opt_in),
        timeout_s=args.timeout_s,
        limits=under_baseline(
            [(s.name, s.limits) for s in config.steps],
            baseline.recorded_settings("limits") if baseline is not None else None,
        ),
        log=_log,
    )
    for outcome in outcomes:
        if not outcome.ok:
            _keep_error(outcome, args.out_dir)
    sources = [  # this run's versions only, not what an earlier run left in the folder
        ResultSource(args.out_dir / f"torch-{v}" / RESULT_NAME, f"torch-{v}") for v in versions
    ]
    baseline_name = str(args.baseline) if args.baseline else None
    if baseline is not None and args.baseline is not None:
        baseline, used = _class_baseline(args.baseline, baseline, sources)
        baseline_name = str(used)
    run_set = judge_run_set(sources, baseline, baseline_name)
    markdown = render_comment(run_set, links=links_from_environment())
    (args.out_dir / "report.md").write_text(markdown, encoding="utf-8")
    sys.stdout.write("\n" + render_run_set_text(run_set))
    hint = requirements_hint(run_set) if args.requirements is None else None
    if hint is not None:
        sys.stdout.write(hint + "\n")
    for outcome in outcomes:
        sys.stdout.write(
            f"torch {outcome.torch_version}: {outcome.status}, environment "
            f"{outcome.prepare_s:.0f} s, run {outcome.run_s:.0f} s\n"
        )
    sys.stdout.write(f"report: {args.out_dir / 'report.md'}\n")
    return run_set.exit_code


def _class_baseline(
    named: Path, held: ResultDocument, sources: list[ResultSource]
) -> tuple[ResultDocument, Path]:
    """The baseline of the machine's hardware class (every version ran on this machine:
    the first result that reads says which), when its own file lies beside `named`
    (gate/class_baselines.py); else the named one. A result that does not read is the run
    set's to report."""
    from ..gate.class_baselines import class_baseline

    for source in sources:
        if source.path.is_file():
            try:
                result = read_document(source.path, role="result")
            except BaselineError:
                continue
            return class_baseline(named, held, result)
    return held, named


def _inner_env_arguments(
    args: argparse.Namespace, baseline: ResultDocument | None, given: list[str]
) -> list[str]:
    """The same opt-in policy for each version's `compilegate run` (which has no baseline):
    a trusted config keeps its own opt-ins; otherwise every name the policy gave a step."""
    if trusts_config_env(args.config_env, has_baseline=baseline is not None):
        return ["--config-env", "trust", *(a for name in args.env for a in ("--env", name))]
    return ["--config-env", "ignore", *(a for name in given for a in ("--env", name))]


def _command_matrix_paired(args: argparse.Namespace, versions: list[str], config: Config) -> int:
    """`matrix --paired` or `matrix --against REF` (run/paired.py): every version's image or
    venv first, then the children of the sides alternating, each child in a fresh container
    of its side's image (docker) or under its venv's interpreter (venv).

    --paired      one run, the versions alternating; each later version judged against the
                  first (`OUT_DIR/torch-V/result.json` each)
    --against     per version, REF and this checkout alternating; each version's head judged
                  against its own base (`result.json` and `result.base.json`)
    """
    from ..run.interrupts import signals_interrupt_the_run
    from ..run.orchestrate import RunOptions
    from ..run.paired import run_against, run_versions_paired
    from .run_command import warn_too_few_pairs

    ordered = list(dict.fromkeys(versions))
    if args.paired and args.against:
        raise UsageError("--paired and --against: give one (versions side by side, or commits)")
    if args.paired and len(ordered) < 2:
        raise UsageError("--paired: give at least two --torch versions (the first is the base)")
    if args.baseline is not None:
        flag = "--paired" if args.paired else "--against"
        raise UsageError(f"{flag} and --baseline: give one (paired or stored baseline)")
    from ..run.launcher import DeadlineLauncher

    # Building them does not count against the limit.
    built = paired_launchers(args, config, ordered, _log)
    deadline = DeadlineLauncher(None, args.timeout_s).deadline
    launchers = [(v, DeadlineLauncher(launcher, args.timeout_s, deadline)) for v, launcher in built]
    out_paths = [args.out_dir / f"torch-{v}" / RESULT_NAME for v in ordered]
    for path in out_paths:
        path.parent.mkdir(parents=True, exist_ok=True)
    sources = []
    base: ResultDocument | None  # with --against each version carries its own
    try:
        with signals_interrupt_the_run():
            if args.paired:
                warn_too_few_pairs(config)
                documents = run_versions_paired(config, launchers, out_paths, sys.stderr)
                baseline_source = str(out_paths[0])
                base = parse(documents[0], baseline_source, "baseline")
                sources = [ResultSource(p, p.parent.name) for p in out_paths[1:]]
            else:
                for (_, launcher), path in zip(launchers, out_paths):
                    options = RunOptions(out_path=path, launcher=launcher)
                    paired = run_against(
                        config, args.against, options, before_measuring=warn_too_few_pairs
                    )
                    own_base = parse(paired.base, str(paired.base_path), "baseline")
                    sources.append(ResultSource(path, path.parent.name, own_base))
                    for note in paired.notes:
                        _log(f"note: {note}")
                base = sources[0].baseline
                baseline_source = str(out_paths[0].with_name("result.base.json"))
    except RunInterrupted as stop:
        sys.stderr.write(f"compilegate: {stop}; what was measured is in {args.out_dir}\n")
        return stop.exit_code
    run_set = judge_run_set(sources, base, baseline_source)
    markdown = render_comment(run_set, links=links_from_environment())
    (args.out_dir / "report.md").write_text(markdown, encoding="utf-8")
    sys.stdout.write("\n" + render_run_set_text(run_set))
    sys.stdout.write(f"report: {args.out_dir / 'report.md'}\n")
    return run_set.exit_code


def _keep_error(outcome: VersionOutcome, out_dir: Path) -> None:
    """A failed version leaves error.txt for the report: the build or run log's last lines,
    then its one-line reason (the report shows the last line). The folder is the host's own
    (the run wrote into a staging folder, containers/collect.py)."""
    folder = out_dir / f"torch-{outcome.torch_version}"
    folder.mkdir(parents=True, exist_ok=True)
    if outcome.result_path is not None and outcome.result_path.is_file():
        # A partial document of a run that errored (killed, timed out) is kept for reading,
        # under another name: the version is judged an error, never on what it got through.
        outcome.result_path.replace(folder / PARTIAL_NAME)
    tail = "\n".join(_ANSI.sub("", line) for line in outcome.log_tail[-20:])
    text = f"{tail}\n{outcome.error}\n{_reason(outcome)}\n".lstrip()
    (folder / ERROR_NAME).write_text(text, encoding="utf-8")


def _reason(outcome: VersionOutcome) -> str:
    """pip's or the build's own error line when the log has one (`ERROR: No matching
    distribution found for torch==0.0.0`), else the outcome's error, shortened."""
    for line in reversed(outcome.log_tail):
        text = _ANSI.sub("", line).strip().removeprefix(f"[torch {outcome.torch_version}]").strip()
        if text.startswith(("ERROR:", "error:", "E: ")):
            return f"torch {outcome.torch_version}: {text}"[:300]
    return " ".join(str(outcome.error).split())[:300]


def _log(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")
    sys.stderr.flush()
