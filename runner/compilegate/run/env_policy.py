"""Which host variables each step's child may be given: the policy's opt-ins, never what a
pull request's config asks for on its own.

A step's `env: [NAME]` (run/child_env.py) passes a host variable into the process that
imports pull-request code. In the action the config is the pull request's, so its list is no
policy: a pull request would name the runner's variable it wants to read. The names a step's
child is given are the union of

- the stored baseline's: what the baseline's step recorded (`settings.env`, written by the
  default branch's run), when there is a baseline;
- the operator's: `--env NAME` (the action's `env` input), for every step;
- the config's own `env:`, only when the config is trusted (`--config-env trust`: your own
  config, or the default branch's run of the baseline workflow). It is trusted by default
  without a baseline and ignored by default with one; the action says which by the event.

Paired mode has its own rule (run/paired.py): the base's config gives the shared steps' names.
A name the config asks for that the policy does not give is left out, and a note says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..config import Config
from ..config.env_names import opt_in_refusal
from ..errors import UsageError
from ..results.model import ResultDocument

CONFIG_ENV_CHOICES = ("trust", "ignore")


def checked_operator_env(names: Sequence[str]) -> tuple[str, ...]:
    """The operator's `--env` names, each one a name a step may opt in (a secret-looking
    name is a usage error even from the operator: the child imports pull-request code)."""
    for name in names:
        refusal = opt_in_refusal(name)
        if refusal is not None:
            raise UsageError(f"--env {name}: {refusal}")
    return tuple(dict.fromkeys(names))


def trusts_config_env(choice: str | None, *, has_baseline: bool) -> bool:
    """`--config-env`: given, or by default trusted only without a stored baseline."""
    if choice is None:
        return not has_baseline
    if choice not in CONFIG_ENV_CHOICES:
        raise UsageError(f"--config-env {choice}: expected one of {', '.join(CONFIG_ENV_CHOICES)}")
    return choice == "trust"


def apply_env_policy(
    config: Config,
    *,
    baseline: ResultDocument | None,
    operator_env: Sequence[str] = (),
    trust_config: bool,
) -> tuple[Config, list[str]]:
    """The config with each step's `env` replaced by the names the policy gives (module
    docstring), and one note per step whose config asked for a name it does not get."""
    recorded = _recorded_env(baseline)
    steps, notes = [], []
    for step in config.steps:
        given = list(recorded.get(step.name, ()))
        if trust_config:
            given.extend(step.env)
        given.extend(operator_env)
        env = tuple(dict.fromkeys(given))
        refused = [name for name in step.env if name not in env]
        if refused:
            source = "--env (the action's env input)"
            if baseline is not None:
                source = "the stored baseline's recorded opt-ins or " + source
            notes.append(
                f"step {step.name}: env {', '.join(refused)} not given to the child: the "
                f"config asks for it, but only {source} can opt in a host variable, never a "
                "pull request's config alone"
            )
        steps.append(step if env == step.env else dataclasses.replace(step, env=env))
    return dataclasses.replace(config, steps=tuple(steps)), notes


def _recorded_env(baseline: ResultDocument | None) -> dict[str, tuple[str, ...]]:
    """Step name → the names the baseline's step was given, as it recorded them; a name
    today's deny-list refuses (a baseline recorded under older rules) is not given. A
    step's settings are an open object: `env` is read only when it is a list."""
    recorded = baseline.recorded_settings("env") if baseline is not None else {}
    return {
        step: tuple(
            name
            for name in (names if isinstance(names, list | tuple) else ())
            if isinstance(name, str) and opt_in_refusal(name) is None
        )
        for step, names in recorded.items()
    }
