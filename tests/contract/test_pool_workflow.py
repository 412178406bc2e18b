"""examples/workflows/pool.yml, the job-container shape (issue 52, item 1), holds its rule: the
job that runs the pull request's code in the compilegate image holds nothing worth taking
(no permission, no secret, no token, no persisted credential) and measures with the image's
torch; the job that judges and posts runs none of it and reads the artifact as untrusted.
(Its lint, schema, zizmor and pinning: test_workflow_lint.py, test_actions_metadata.py.)"""

from __future__ import annotations

from typing import Any

import yaml

from repo_helpers import REPO_ROOT

POOL = REPO_ROOT / "examples/workflows/pool.yml"


def workflow() -> dict[str, Any]:
    return yaml.safe_load(POOL.read_text())


def test_the_measuring_job_runs_in_the_image_and_holds_nothing_worth_taking() -> None:
    document = workflow()
    assert document["permissions"] == {}
    measure = document["jobs"]["measure"]
    assert measure["permissions"] == {}
    assert measure["container"]["image"].split("/")[-1].startswith("compilegate-torch:")
    text = yaml.safe_dump(measure)
    for holder in ("secrets.", "github.token", "GITHUB_TOKEN", "token:"):
        assert holder not in text, holder
    runs = " ".join(step.get("run", "") for step in measure["steps"])
    assert "compilegate where --backend image" in runs
    assert "compilegate run --backend image" in runs and "--config-env" in runs
    uploads = [s for s in measure["steps"] if str(s.get("uses", "")).startswith(
        "actions/upload-artifact@")]  # fmt: skip
    assert uploads and uploads[0]["with"]["name"] == "compilegate-results-pool"


def test_the_judging_job_runs_no_pull_request_code_and_reads_the_result_as_untrusted() -> None:
    judge = workflow()["jobs"]["judge"]
    assert judge["needs"] == "measure" and judge["runs-on"] == "ubuntu-latest"
    checkouts = [s for s in judge["steps"] if str(s.get("uses", "")).startswith(
        "actions/checkout@")]  # fmt: skip
    assert checkouts and all(
        s["with"]["repository"] == "compilegate/compilegate" for s in checkouts
    )
    publish = next(s for s in judge["steps"] if "compilegate publish" in s.get("run", ""))
    assert "--untrusted-results" in publish["run"] and "--baseline baseline.json" in publish["run"]
    assert "baseline fetch --artifact compilegate-baseline-pool" in publish["run"]
    assert judge["permissions"]["pull-requests"] == "write"
