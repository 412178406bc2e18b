"""`compilegate init` (cli/init_command.py, config/starter.py): the starting compilegate.yml
is valid, loads as the run loads it, explains every key, and suits the machine's device."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from compilegate.cli import init_command, main
from compilegate.config.loading import load_config_file, load_config_text
from compilegate.config.starter import Machine, starter_config_text, step_name_for
from compilegate.schemas import schema_dir, validation_errors

CPU = {"torch": "2.13.0+cpu", "device": "cpu", "cpu_count": 2, "gpu_name": None}
GPU = {"torch": "2.13.0+cu128", "device": "cuda", "cpu_count": 16, "gpu_name": "NVIDIA H200"}
STEP = "def make_step(device='cpu'):\n    return {}\n"


@pytest.fixture
def user_repo(tmp_path, monkeypatch):
    """A repository with train/step.py, the current folder; the measuring interpreter's
    probe answers CPU unless a test says otherwise."""
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "step.py").write_text(STEP)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(init_command, "_probe", lambda python: CPU)
    return tmp_path


def written(machine: Machine, entry: str = "train/step.py:make_step") -> str:
    return starter_config_text(
        entry, machine, name=step_name_for(entry), schema_path="/s.json", version="0.1.0"
    )


@pytest.mark.parametrize("environment", [CPU, GPU], ids=["cpu", "cuda"])
def test_the_starting_config_is_valid_and_loads_as_the_run_loads_it(environment, tmp_path):
    text = written(Machine.from_environment(environment))
    assert validation_errors(yaml.safe_load(text), "config") == []
    step = load_config_text(text, source="compilegate.yml", repo_root=tmp_path).steps[0]
    assert (step.name, step.entry) == ("step", "train/step.py:make_step")
    if environment is CPU:
        assert step.device == "cpu" and step.threads == 1
        assert [v.mode for v in step.variants] == ["default"]
    else:
        assert step.device == "cuda" and step.threads is None
        assert [v.mode for v in step.variants] == ["default", "reduce-overhead"]


@pytest.mark.parametrize("environment", [CPU, GPU], ids=["cpu", "cuda"])
def test_a_comment_above_every_key_says_what_it_is(environment):
    lines = written(Machine.from_environment(environment)).splitlines()
    assert lines[0] == "# yaml-language-server: $schema=/s.json"
    keys = [i for i, line in enumerate(lines) if line.lstrip(" -").split(":")[0].isidentifier()]
    keys = [i for i in keys if not lines[i].lstrip().startswith("#")]
    assert len(keys) == (7 if environment is CPU else 6), lines
    for index in keys:
        assert lines[index - 1].lstrip().startswith("# "), (lines[index], lines[index - 1])
    if environment is CPU:
        text = " ".join(line.strip("# ") for line in lines)
        assert "One thread gives steady numbers on a CPU" in text
        assert "±93–2732 % with torch's default threads" in text and "±2.8 % with one" in text


def test_entry_names_become_step_names_the_schema_takes():
    assert step_name_for("train/step.py:make_step") == "step"
    assert step_name_for("mypkg.steps.gpt:make_step") == "gpt"
    assert step_name_for("my step#1.py:f") == "my-step-1"
    assert step_name_for("__init__.py:f") == "init__"
    assert step_name_for("_.py:f") == "step"
    entry = 'odd: dir #x/"s".py:make_step'
    loaded = yaml.safe_load(written(Machine("cpu", "2.13.0"), entry))
    assert loaded["steps"][0]["entry"] == entry


def test_init_writes_the_file_and_says_what_to_run_next(user_repo, capsys):
    assert main(["init", "train/step.py:make_step"]) == 0
    out = capsys.readouterr().out
    assert "wrote compilegate.yml: step 'step' on cpu, threads: 1" in out
    assert out.splitlines()[-1] == "next: compilegate run"
    config = load_config_file(user_repo / "compilegate.yml")
    assert config.steps[0].device == "cpu" and config.steps[0].threads == 1


def test_init_names_the_interpreter_and_folder_in_the_next_command(user_repo, capsys, monkeypatch):
    elsewhere = user_repo / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    argv = ["init", "--repo", str(user_repo), "--python", "python3", "train/step.py:make_step"]
    assert main(argv) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == f"next: cd {user_repo} && compilegate run --python python3"


def test_init_takes_the_device_the_interpreter_sees_or_the_one_given(user_repo, monkeypatch):
    monkeypatch.setattr(init_command, "_probe", lambda python: GPU)
    assert main(["init", "train/step.py:make_step"]) == 0
    step = load_config_file(user_repo / "compilegate.yml").steps[0]
    assert step.device == "cuda" and len(step.variants) == 2
    text = (user_repo / "compilegate.yml").read_text()
    assert "cuda, because torch 2.13.0+cu128 sees a GPU (NVIDIA H200)" in " ".join(
        line.strip("# ") for line in text.splitlines()
    )
    assert main(["init", "--force", "--device", "cpu", "train/step.py:make_step"]) == 0
    step = load_config_file(user_repo / "compilegate.yml").steps[0]
    assert step.device == "cpu" and step.threads == 1
    text = " ".join(
        line.strip("# ") for line in (user_repo / "compilegate.yml").read_text().splitlines()
    )
    assert "cpu, as `compilegate init --device` was told (torch 2.13.0+cu128 sees a GPU" in text


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["train/missing.py:make_step"], "file 'train/missing.py' does not exist in"),
        (["train/step.py:train"], "train/step.py defines no function 'train'"),
        (["../outside.py:make_step"], "is outside the repository"),
        (["make_step"], "expected path/to/file.py:function or package.module:function"),
        (["--name", "bad name", "train/step.py:make_step"], "steps[0].name"),
        (["--repo", "nowhere", "train/step.py:make_step"], "--repo nowhere: not a directory"),
    ],
)
def test_a_wrong_entry_is_one_line_exit_2_and_writes_nothing(user_repo, capsys, argv, said):
    assert main(["init", *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1, err
    assert not (user_repo / "compilegate.yml").exists()


def test_an_existing_config_is_kept_unless_forced(user_repo, capsys):
    mine = user_repo / "compilegate.yml"
    mine.write_text("# mine\n")
    assert main(["init", "train/step.py:make_step"]) == 2
    assert "compilegate.yml exists; pass --force to overwrite it" in capsys.readouterr().err
    assert mine.read_text() == "# mine\n"
    assert main(["init", "--force", "train/step.py:make_step"]) == 0
    assert "entry: train/step.py:make_step" in mine.read_text()


def test_force_replaces_a_link_without_writing_through_it(user_repo, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside.yml"
    outside.write_text("# not the repository's\n")
    (user_repo / "compilegate.yml").symlink_to(outside)
    assert main(["init", "--force", "train/step.py:make_step"]) == 0
    assert outside.read_text() == "# not the repository's\n"
    assert not (user_repo / "compilegate.yml").is_symlink()


def test_an_interpreter_without_torch_is_one_line_exit_2(user_repo, monkeypatch, capsys):
    from compilegate.errors import UsageError

    def no_torch(python):
        raise UsageError(f"--python {python}: cannot use this interpreter: No module named 'torch'")

    monkeypatch.setattr(init_command, "_probe", no_torch)
    assert main(["init", "train/step.py:make_step"]) == 2
    assert "No module named 'torch'" in capsys.readouterr().err
    assert not (user_repo / "compilegate.yml").exists()


def _schema_line(config: Path) -> str:
    first = config.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    return first.split("$schema=", 1)[1]


def test_the_schema_line_of_a_repository_holding_the_schema_works_from_another_clone(
    user_repo, monkeypatch
):
    # compilegate's own schemas/ inside the repository (a source checkout vendored in it)
    schemas = user_repo / "tools" / "compilegate" / "schemas"
    schemas.mkdir(parents=True)
    shutil.copy(schema_dir() / "config.schema.json", schemas / "config.schema.json")
    monkeypatch.setattr("compilegate.schemas.schema_dir", lambda: schemas)
    assert main(["init", "train/step.py:make_step"]) == 0
    said = _schema_line(user_repo / "compilegate.yml")
    assert said == "tools/compilegate/schemas/config.schema.json"
    # the same files cloned somewhere else: the line still finds the schema
    clone = user_repo.parent / "another-clone"
    shutil.copytree(user_repo, clone)
    shutil.rmtree(user_repo)
    assert (clone / said).is_file()
    assert json.loads((clone / said).read_text())["title"]


def test_an_installed_schema_is_named_by_its_published_address_never_a_local_path(
    user_repo, monkeypatch, tmp_path_factory
):
    # an installation outside the repository (a virtual environment's share/): no path to it
    # works in another clone, so the line gives the schema's own $id
    venv = tmp_path_factory.mktemp("venv")
    schemas = venv / "share" / "compilegate" / "schemas"
    schemas.mkdir(parents=True)
    shutil.copy(schema_dir() / "config.schema.json", schemas / "config.schema.json")
    monkeypatch.setattr("compilegate.schemas.schema_dir", lambda: schemas)
    monkeypatch.setattr(init_command.sys, "prefix", str(venv))
    assert main(["init", "train/step.py:make_step"]) == 0
    said = _schema_line(user_repo / "compilegate.yml")
    published = json.loads((schemas / "config.schema.json").read_text())["$id"]
    assert said == published and said.startswith("https://")
    assert str(venv) not in (user_repo / "compilegate.yml").read_text()


def test_a_virtual_environment_inside_the_repository_is_not_part_of_it(user_repo, monkeypatch):
    # `.venv/` in the repository root is never committed: a path into it fails in a clone
    venv = user_repo / ".venv"
    schemas = venv / "share" / "compilegate" / "schemas"
    schemas.mkdir(parents=True)
    shutil.copy(schema_dir() / "config.schema.json", schemas / "config.schema.json")
    monkeypatch.setattr("compilegate.schemas.schema_dir", lambda: schemas)
    monkeypatch.setattr(init_command.sys, "prefix", str(venv))
    assert main(["init", "train/step.py:make_step"]) == 0
    assert _schema_line(user_repo / "compilegate.yml").startswith("https://")
