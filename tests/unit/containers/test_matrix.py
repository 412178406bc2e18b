"""run_matrix: one outcome per version; a failing version never takes the others down."""

from __future__ import annotations

from pathlib import Path

import pytest

from compilegate.containers.matrix import check_version, run_matrix
from compilegate.containers.outcome import EnvironmentBuildError, RunCompleted, RunRequest
from compilegate.errors import UsageError


class FakeBackend:
    name = "fake"

    def __init__(self, broken: set[str], no_result: set[str] = frozenset()) -> None:
        self.broken, self.no_result = broken, no_result
        self.requests: list[RunRequest] = []

    def prepare(self, torch_version: str) -> str:
        if torch_version in self.broken:
            raise EnvironmentBuildError(torch_version, "image build failed", ("pip: no torch",))
        return f"env-{torch_version}"

    def run(self, torch_version: str, request: RunRequest) -> RunCompleted:
        self.requests.append(request)
        if torch_version in self.no_result:
            return RunCompleted(3, 1.0, "compilegate exited 3: crashed")
        request.result_path.write_text("{}")
        return RunCompleted(0, 2.0)


def test_broken_version_is_an_error_outcome_and_others_run(tmp_path: Path) -> None:
    backend = FakeBackend(broken={"2.4.1"}, no_result={"2.9.1"})
    outcomes = run_matrix(
        ["2.13.0", "2.4.1", "2.9.1", "2.13.0"], backend, config=tmp_path / "c.yml",
        repo=tmp_path, out_dir=tmp_path / "out", env={"A": "1"}, log=lambda _: None,
    )  # fmt: skip
    assert [o.torch_version for o in outcomes] == ["2.13.0", "2.4.1", "2.9.1"]
    good, broken, crashed = outcomes
    assert good.ok and good.result_path == tmp_path / "out/torch-2.13.0/result.json"
    assert good.environment == "env-2.13.0" and good.exit_code == 0
    assert not broken.ok and broken.result_path is None
    assert broken.error.startswith("torch 2.4.1: image build failed")
    assert broken.log_tail == ("pip: no torch",)
    assert not crashed.ok and crashed.exit_code == 3
    assert "no result written" in crashed.error and "crashed" in crashed.error
    assert all(r.env == {"A": "1"} for r in backend.requests)


def test_a_stale_result_does_not_pass_for_a_new_one(tmp_path: Path) -> None:
    stale = tmp_path / "out" / "torch-2.9.1" / "result.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    (outcome,) = run_matrix(
        ["2.9.1"], FakeBackend(set(), no_result={"2.9.1"}), config=tmp_path / "c.yml",
        repo=tmp_path, out_dir=tmp_path / "out", log=lambda _: None,
    )  # fmt: skip
    assert not outcome.ok and not stale.exists()


@pytest.mark.parametrize("good", ["2.13.0", "2.6.0rc1", "2.5.0.dev20240901", "2.13.0+cpu"])
def test_release_strings_pass(good: str) -> None:
    assert check_version(good) == good


@pytest.mark.parametrize("bad", ["", "latest", "../x", "2.13.0; rm -rf /", "2.13 .0"])
def test_anything_else_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError):
        check_version(bad)
