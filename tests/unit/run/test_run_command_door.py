"""`compilegate run` reads the run's own document through the door (results/model.parse)
once, right after the run, and decides from the typed document: its exit code, the class
baseline and the verdicts all read that one parse (issue 53, item 6)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gate_docs import result, step, variant

import compilegate.gate.documents as documents
import compilegate.results.model as model
import compilegate.run.checkout_credentials as checkout_credentials
import compilegate.run.orchestrate as orchestrate


@pytest.fixture
def measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, Any]], list]:
    """A stand-in for the run (no child starts): run_config returns `document`, and every
    check of a document through the door is recorded by its source."""
    (tmp_path / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: train\n    entry: model.py:make_step\n"
    )
    monkeypatch.setattr(checkout_credentials, "refuse_persisted_credentials", lambda root: None)
    checked: list[str] = []
    real_check = model.check

    def counting_check(raw: Any, source: str, role: str = "result") -> None:
        checked.append(source)
        real_check(raw, source, role)

    monkeypatch.setattr(model, "check", counting_check)
    monkeypatch.setattr(documents, "check", counting_check)

    def run_returning(document: dict[str, Any]) -> list[str]:
        monkeypatch.setattr(orchestrate, "run_config", lambda config, options: document)
        return checked

    return run_returning


def test_a_failed_variant_is_exit_3_read_from_the_typed_document(
    tmp_path: Path, measured: Callable, cli: Callable
) -> None:
    out = tmp_path / "r.json"
    checked = measured(result(step(variants=[variant(status="error", error="crashed")])))
    ran = cli("run", "--config", str(tmp_path / "compilegate.yml"), "--out", str(out))
    assert ran.returncode == 3, ran.stderr
    assert checked == [str(out)]


def test_an_ok_run_is_exit_0(tmp_path: Path, measured: Callable, cli: Callable) -> None:
    out = tmp_path / "r.json"
    checked = measured(result(step()))
    ran = cli("run", "--config", str(tmp_path / "compilegate.yml"), "--out", str(out))
    assert ran.returncode == 0, ran.stderr
    assert checked == [str(out)]


def test_with_a_baseline_each_document_passes_the_door_once(
    tmp_path: Path, measured: Callable, cli: Callable
) -> None:
    """The class baseline and the verdicts read the same typed result: before, the run's
    document was parsed twice (class_baseline's and judge_result's)."""
    out = tmp_path / "r.json"
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(result(step())))
    checked = measured(result(step(variants=[variant(speedup=1.0)])))
    ran = cli(
        "run", "--config", str(tmp_path / "compilegate.yml"), "--out", str(out),
        "--baseline", str(baseline),
    )  # fmt: skip
    assert ran.returncode == 1, ran.stderr
    assert sorted(checked) == sorted([str(baseline), str(out)])
