"""The composite action's steps, executed as a GitHub runner would run them: each `run:` in
bash with the step's `env:` resolved from the inputs, `INPUT_*`/`GITHUB_*` variables, a
fresh GITHUB_OUTPUT per step (its outputs feed `steps.<id>.outputs`), one
GITHUB_STEP_SUMMARY; against a local GitHub that checks every request against GitHub's own
API contract, and the real Docker engine.

The `uses:` step (upload-artifact) is GitHub's own action and is not run here.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

TESTS = Path(__file__).resolve().parents[2]
REPO_ROOT = TESTS.parent
for helper in ("integration/github", "contract/github", "unit"):
    sys.path.insert(0, str(TESTS / helper))

from fake_github import FakeGitHub  # noqa: E402
from gate_docs import result  # noqa: E402

pytestmark = pytest.mark.docker

REPO = "octo-org/trainer"
TOKEN = "ghs_action-test-token"
EVENT = json.loads((TESTS / "integration/github/data/pull_request.synchronize.json").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class Runner:
    """Just enough of the runner: contexts, expressions in the forms action.yml uses."""

    def __init__(self, inputs: dict[str, str], github: dict[str, Any]) -> None:
        action = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
        defaults = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
        self.inputs = {**defaults, **inputs}
        self.github = github
        self.steps: dict[str, dict[str, str]] = {}
        self.action = action
        self.failed = False

    def value(self, ref: str) -> str:
        ref = ref.strip()
        if ref.startswith("'") and ref.endswith("'"):
            return ref[1:-1]
        if " || " in ref:
            return next((v for v in map(self.value, ref.split(" || ")) if v), "")
        head, _, rest = ref.partition(".")
        if head == "inputs":
            return self.inputs.get(rest, "")
        if head == "steps":
            step_id, _, output = rest.partition(".outputs.")
            return self.steps.get(step_id, {}).get(output, "")
        if head == "github":
            node: Any = self.github
            for part in rest.split("."):
                node = node.get(part, "") if isinstance(node, dict) else ""
            return str(node)
        raise AssertionError(f"expression not understood by this test: {ref}")

    def condition(self, text: str) -> bool:
        expr = EXPRESSION.sub(r"\1", str(text)).strip()
        truth = True
        for part in expr.split(" && "):
            part = part.strip()
            if part in ("always()",):
                continue
            left, op, right = re.split(r"\s*(!=|==)\s*", part)
            equal = self.value(left) == self.value(right)
            truth = truth and (equal if op == "==" else not equal)
        return truth

    def render(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.value(m.group(1)), str(text))

    def run_steps(self, base_env: dict[str, str], workdir: Path, tmp: Path) -> list[dict]:
        done = []
        for index, step in enumerate(self.action["runs"]["steps"]):
            if "uses" in step:
                done.append({"name": step["name"], "skipped": "uses: not run here"})
                continue
            if "if" in step and not self.condition(step["if"]):
                done.append({"name": step["name"], "skipped": "if: false"})
                continue
            output = tmp / f"output-{index}"
            output.write_text("")
            env = {**base_env, "GITHUB_OUTPUT": str(output)}
            env.update({k: self.render(v) for k, v in (step.get("env") or {}).items()})
            cwd = workdir / self.render(step.get("working-directory", "."))
            # How GitHub runs `shell: bash`: bash --noprofile --norc -eo pipefail {0}
            command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]]
            proc = subprocess.run(
                command, cwd=cwd, env=env, capture_output=True, text=True, check=False,
                timeout=3000,
            )  # fmt: skip
            if "id" in step:
                self.steps[step["id"]] = parse_outputs(output.read_text())
            done.append({"name": step["name"], "env": env, "returncode": proc.returncode,
                         "stdout": proc.stdout, "stderr": proc.stderr})  # fmt: skip
            if proc.returncode != 0:
                self.failed = True
        return done


def parse_outputs(text: str) -> dict[str, str]:
    """`name=value` lines and `name<<DELIM` blocks, as GitHub reads GITHUB_OUTPUT."""
    out, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<")[0]:
            name, delimiter = line.split("<<", 1)
            out[name] = "\n".join(iter(lambda: next(lines), delimiter))
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


def repository(tmp: Path) -> Path:
    """A small user repository: the tiny MLP and its compilegate.yml."""
    repo = tmp / "repo"
    (repo / "train").mkdir(parents=True)
    for name in ("tiny_mlp.py", "classification.py"):  # the step and the helper it imports
        shutil.copy(REPO_ROOT / "examples/test_steps" / name, repo / "train" / name)
    (repo / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: tiny\n    entry: train/tiny_mlp.py:make_step\n"
        "    device: cpu\n    variants: [{mode: default}]\n    warmup: 2\n    iterations: 6\n"
        "    rounds: 2\n    threads: 1\n    timeout_s: 600\n    numerics: {enabled: false}\n"
        "    variant_processes: 1\n"
    )
    return repo


def zipped(document: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("baseline.json", json.dumps(document))
    return buffer.getvalue()


def test_the_composite_action_measures_publishes_and_fails_per_the_verdict(
    tmp_path: Path, local_torch_image: Any, base_image: str
) -> None:
    fake = FakeGitHub(REPO, token=TOKEN)
    try:
        pr, head_sha = EVENT["number"], EVENT["pull_request"]["head"]["sha"]
        fake.open_pull_request(pr, head_sha, REPO)
        # A baseline from another machine: the gate cannot judge against it and must say so.
        fake.add_artifact("compilegate-baseline", zipped(result()), head_branch="main")
        event_path = tmp_path / "event.json"
        event_path.write_text(json.dumps(EVENT))
        runner_temp = tmp_path / "runner-temp"
        runner_temp.mkdir()
        summary = tmp_path / "summary.md"
        runner = Runner(
            {"torch": "2.13.0", "backend": "docker", "gpus": "", "base-image": base_image,
             "baseline-artifact": "compilegate-baseline", "comment-key": "action-test",
             "github-token": TOKEN},
            {"action_path": str(REPO_ROOT), "event": {"repository": {"default_branch": "main"}}},
        )  # fmt: skip
        base_env = {  # what a runner gives every step; GITHUB_TOKEN is not among them
            "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"),
            "LANG": "C.UTF-8", "RUNNER_TEMP": str(runner_temp), "GITHUB_ACTIONS": "true",
            "GITHUB_API_URL": fake.api_url, "GITHUB_SERVER_URL": fake.web_url,
            "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event_path), "GITHUB_SHA": "5" * 40,
            "GITHUB_RUN_ID": "77", "GITHUB_STEP_SUMMARY": str(summary), "NO_PROXY": "127.0.0.1",
            **{k: v for k, v in os.environ.items() if k.startswith(("PIP_", "DOCKER_"))},
        }  # fmt: skip
        steps = runner.run_steps(base_env, repository(tmp_path), tmp_path)
    finally:
        fake.close()
    by_name = {s["name"].split(" (")[0]: s for s in steps}
    for name in ("Install compilegate", "Fetch the baseline artifact"):
        assert by_name[name]["returncode"] == 0, by_name[name]["stderr"][-3000:]
    measure = by_name["Measure"]
    assert "GITHUB_TOKEN" not in measure["env"] and TOKEN not in measure["env"].values()
    assert runner.steps["measure"]["exit-code"] == "4", measure["stdout"][-3000:]
    assert by_name["Publish"]["returncode"] == 0
    assert runner.steps["publish"]["verdict"] in ("incomparable", "removed", "missing")
    comments = fake.comments_on(pr)
    assert len(comments) == 1 and comments[0]["body"].startswith(
        "<!-- compilegate: action-test -->"
    )
    assert "| 2.13.0 |" in comments[0]["body"]
    assert runner.steps["publish"]["comment-url"] == comments[0]["html_url"]
    assert "### ❌ compilegate fails" in summary.read_text()
    assert by_name["Upload the result documents"]["skipped"].startswith("uses:")
    final = by_name["Fail the job per the verdict"]
    assert final["returncode"] == 4 and "::error title=compilegate::" in final["stdout"]
    assert fake.violations == []
