"""Who opts host variables into the children (run/env_policy.py): the stored baseline's
recorded opt-ins, the operator's --env, and the config's own only when it is trusted; in
paired mode the base's config, and nothing for a step only the head declares."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_docs import result, step

from compilegate.config import Config
from compilegate.config.loading import load_config_file
from compilegate.errors import UsageError
from compilegate.results.model import ResultDocument, parse
from compilegate.run.env_policy import apply_env_policy, checked_operator_env, trusts_config_env
from compilegate.run.paired import paired_configs

PR_CONFIG = """\
version: 1
steps:
  - name: train
    entry: step.py:make_step
    env: [HF_HOME, TEAM_DEPLOY_SETTING]
  - name: added
    entry: step.py:make_step
    env: [TEAM_DEPLOY_SETTING]
"""


def recorded_baseline() -> ResultDocument:
    """A stored baseline whose steps recorded the names they were given (settings.env)."""
    document = result(step(name="train"), step(name="gone"))
    document["steps"][0]["settings"]["env"] = ["HF_HOME", "TORCH_HOME", "CI_JOB_JWT"]
    document["steps"][1]["settings"]["env"] = ["DATA_DIR"]
    return parse(document, "baseline.json", "baseline")


BASELINE = recorded_baseline()


@pytest.fixture
def pr_config(tmp_path: Path) -> Config:
    (tmp_path / "step.py").write_text("def make_step(device='cpu'):\n    pass\n")
    (tmp_path / "compilegate.yml").write_text(PR_CONFIG)
    return load_config_file(tmp_path / "compilegate.yml")


def envs(config: Config) -> dict[str, tuple[str, ...]]:
    return {step.name: step.env for step in config.steps}


def test_stored_baseline_mode_gives_the_baselines_names_never_the_configs(pr_config):
    config, notes = apply_env_policy(pr_config, baseline=BASELINE, trust_config=False)
    # CI_JOB_JWT: recorded under older rules, refused by today's deny-list
    assert envs(config) == {"train": ("HF_HOME", "TORCH_HOME"), "added": ()}
    assert len(notes) == 2 and all("TEAM_DEPLOY_SETTING not given" in n for n in notes)
    assert "stored baseline's recorded opt-ins" in notes[0]


def test_the_operators_env_is_given_to_every_step(pr_config):
    config, notes = apply_env_policy(
        pr_config, baseline=None, operator_env=["TEAM_DEPLOY_SETTING"], trust_config=False
    )
    assert envs(config) == {"train": ("TEAM_DEPLOY_SETTING",), "added": ("TEAM_DEPLOY_SETTING",)}
    assert notes == ["step train: env HF_HOME not given to the child: the config asks for it, "
                     "but only --env (the action's env input) can opt in a host variable, "
                     "never a pull request's config alone"]  # fmt: skip


def test_a_trusted_config_keeps_its_own_names(pr_config):
    config, notes = apply_env_policy(pr_config, baseline=BASELINE, trust_config=True)
    assert envs(config)["train"] == ("HF_HOME", "TORCH_HOME", "TEAM_DEPLOY_SETTING")
    assert notes == []


def test_the_config_is_trusted_by_default_only_without_a_baseline():
    assert trusts_config_env(None, has_baseline=False)
    assert not trusts_config_env(None, has_baseline=True)
    assert trusts_config_env("trust", has_baseline=True)
    assert not trusts_config_env("ignore", has_baseline=False)


@pytest.mark.parametrize("name", ["CI_JOB_JWT", "GITHUB_TOKEN", "DEPLOY_KEY_PEM", "PYTHONPATH"])
def test_the_operator_cannot_opt_in_a_secret_either(name):
    with pytest.raises(UsageError, match=f"--env {name}: {name} is never passed"):
        checked_operator_env([name])


def test_paired_mode_gives_a_step_only_the_head_declares_no_opt_in(pr_config, tmp_path):
    base_tree = tmp_path / "base"
    base_tree.mkdir()
    (base_tree / "step.py").write_text("def make_step(device='cpu'):\n    pass\n")
    (base_tree / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: train\n    entry: step.py:make_step\n    env: [HF_HOME]\n"
    )
    configs = paired_configs(base_tree, pr_config)
    assert envs(configs.head) == {"train": ("HF_HOME",), "added": ()}
    assert any("step added: env TEAM_DEPLOY_SETTING not given" in n for n in configs.notes)


def test_matrix_gives_each_versions_run_only_the_policys_names(
    pr_config, tmp_path, monkeypatch, capsys
):
    """`matrix --baseline` (the action's stored-baseline mode): the environment each version
    runs with and the arguments of its `compilegate run` carry the baseline's names only."""
    import json

    from compilegate.cli import build_parser, matrix_command

    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(minimal_baseline()))
    seen: dict = {}
    monkeypatch.setattr(
        matrix_command,
        "matrix_backend",
        lambda args, config, opt_in, log: (seen.update(opt_in=opt_in), {}),
    )
    monkeypatch.setattr(
        matrix_command,
        "run_matrix",
        lambda *a, **kw: seen.update(extra_args=kw["extra_args"]) or [],
    )
    args = build_parser().parse_args([
        "matrix", "--config", str(pr_config.path), "--torch", "2.13.0", "--backend", "venv",
        "--out-dir", str(tmp_path / "out"), "--baseline", str(baseline),
    ])  # fmt: skip
    (tmp_path / "out").mkdir()
    args.func(args)
    assert seen["opt_in"] == ["HF_HOME"]
    assert seen["extra_args"] == ["--config-env", "ignore", "--env", "HF_HOME"]
    assert "TEAM_DEPLOY_SETTING not given" in capsys.readouterr().err


def minimal_baseline() -> dict:
    """A schema-valid baseline whose step `train` recorded `env: [HF_HOME]`."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from gate_docs import result, step

    document = result(step(name="train"))
    document["steps"][0]["settings"]["env"] = ["HF_HOME"]
    return document
