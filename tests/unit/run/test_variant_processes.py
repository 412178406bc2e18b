"""A variant is timed in variant_processes children: the first compiles cold, the others reuse
its Inductor cache and only time (run/orchestrate.py), with a fake launcher."""

from __future__ import annotations

import io
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from compilegate.child.protocol import ChildReport, ChildSpec, EntryPoint
from compilegate.config import Config
from compilegate.config.loading import load_config_file
from compilegate.errors import ConfigError
from compilegate.report.child_failure_words import said_error
from compilegate.results.step_record import StepRecord
from compilegate.run.child_process import ChildOutcome
from compilegate.run.step_measurement import StepSide, measure_step

CONFIG = """\
version: 1
steps:
  - name: s
    entry: a.py:f
    iterations: 12
    rounds: 4
{extra}"""


def config(tmp_path: Path, extra: str = "") -> Config:
    path = tmp_path / "compilegate.yml"
    path.write_text(CONFIG.format(extra=extra))
    return load_config_file(path)


def timed(ms: float, seed: int) -> dict[str, list]:
    rng = random.Random(seed)
    return {"samples": [ms * rng.uniform(1.0, 1.3) for _ in range(12)], "rounds": [0] * 12}


def sides(seed: int, compiled: bool) -> dict[str, Any]:
    out = {"eager": timed(10, seed), "eager_b": timed(10, seed + 1), "yardstick": timed(2, seed)}
    if compiled:
        out["compiled"] = timed(8, seed + 2)
    return out


@dataclass
class FakeLauncher:
    """Answers like a child would; remembers every call. `fail_at` fails that call."""

    python = "python"  # the other members of a run.launcher.Launcher
    host_env = MappingProxyType({"PATH": "/bin"})
    stream = sys.stderr
    shares_host_paths = False
    children_local = True
    shared_cache_dir: Path | None = None
    fail_at: int | None = None
    cold_hits: bool = False  # every child reports no compile-cache hit (torch 2.4)
    calls: list[dict[str, Any]] = field(default_factory=list)

    def run(self, spec, *, label, timeout_s, cache_dir=None, env_opt_in=()) -> ChildOutcome:
        assert ChildSpec.from_json(spec.to_json()) == spec  # the child reads what was sent
        spec = spec.to_json()  # what the child would read
        self.calls.append({"spec": spec, "label": label, "cache_dir": cache_dir})
        number = len(self.calls)
        if number == self.fail_at:
            from compilegate.child.protocol import Phase
            from compilegate.run.child_failure import Crashed

            return ChildOutcome(None, Crashed("SIGKILL", 9), Phase.COMPILE, "compiling: reworded")
        measured = {
            "warmup_s": [5.0, 0.01],
            "eager_warmup_s": [0.01, 0.01],
            "timed": sides(number, spec["kind"] == "variant"),
            "peak_bytes": None,
            "eager_peak_bytes": None,
            "compile": {
                "window": {"wall_s": 6.0 + number, "cpu_s": 9.0 + number},
                "eager_window": {"wall_s": 1.0, "cpu_s": 1.5},
                "cache_hits": 0 if self.cold_hits else 3,
            },
        }
        key = "eager" if spec["kind"] == "eager" else "variant"
        return ChildOutcome(
            ChildReport.from_json({"status": "ok", "device": "cpu", key: measured}), None
        )


def measure(cfg: Config, launcher: FakeLauncher) -> dict[str, Any]:
    step = cfg.steps[0]
    record = StepRecord(step)
    entry = EntryPoint("a.py:f", "a.py", "f", 1)
    measure_step([StepSide(step, entry, cfg.repo_root, launcher, record)], stream=io.StringIO())
    return record.to_json()


def test_defaults_one_eager_process_and_four_per_variant(tmp_path: Path) -> None:
    step = config(tmp_path).steps[0]
    assert (step.eager_processes, step.variant_processes) == (1, 4)


def test_later_processes_reuse_the_first_ones_cache_and_only_time(tmp_path: Path) -> None:
    launcher = FakeLauncher()
    step_doc = measure(config(tmp_path), launcher)
    eager, first, *later = launcher.calls
    assert eager["spec"]["kind"] == "eager" and len(later) == 3
    assert first["cache_dir"] is not None and not first["spec"].get("timing_only")
    assert all(c["cache_dir"] == first["cache_dir"] for c in later)
    assert all(c["spec"]["timing_only"] for c in later)
    assert [c["label"] for c in later] == ["s/default#2", "s/default#3", "s/default#4"]
    assert not first["cache_dir"].exists(), "the variant's cache goes with its processes"
    variant = step_doc["variants"][0]
    assert len(variant["processes"]) == 4 and len(step_doc["eager"]["processes"]) == 1
    assert variant["compiled_process_noise_pct"] is not None
    assert step_doc["settings"]["variant_processes"] == 4


def test_cold_compiles_gives_the_first_processes_fresh_caches_and_a_cpu_noise(
    tmp_path: Path,
) -> None:
    launcher = FakeLauncher()
    step_doc = measure(config(tmp_path, "    cold_compiles: 2\n"), launcher)
    _, first, second, *later = launcher.calls
    assert second["cache_dir"] not in (None, first["cache_dir"])
    assert all(c["cache_dir"] == first["cache_dir"] for c in later)
    variant = step_doc["variants"][0]
    assert [p["cache"] for p in variant["processes"]] == ["cold", "cold", "warm", "warm"]
    cost = variant["compile_cost"]
    assert [s["cpu_s"] for s in cost["cold_samples"]] == [9.5, 10.5]
    assert cost["cpu_noise_pct"] is not None and cost["warm_wall_s"] == 9.5
    assert step_doc["settings"]["cold_compiles"] == 2


def test_a_reused_cache_that_torch_never_hit_counts_as_cold(tmp_path: Path) -> None:
    """torch 2.4 keeps the FX-graph cache off: every process compiles cold."""
    step_doc = measure(config(tmp_path), FakeLauncher(cold_hits=True))
    cost = step_doc["variants"][0]["compile_cost"]
    assert len(cost["cold_samples"]) == 4 and cost["warm_wall_s"] is None


def test_more_cold_compiles_than_processes_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        config(tmp_path, "    variant_processes: 2\n    cold_compiles: 3\n")
    assert "steps[0].cold_compiles" in str(info.value) and "\n" not in str(info.value)


def test_a_shared_cache_is_used_as_it_is(tmp_path: Path) -> None:
    launcher = FakeLauncher(shared_cache_dir=tmp_path / "shared")
    measure(config(tmp_path), launcher)
    assert {c["cache_dir"] for c in launcher.calls} == {None}


def test_a_later_process_that_dies_fails_the_variant(tmp_path: Path) -> None:
    step_doc = measure(config(tmp_path), FakeLauncher(fail_at=4))
    variant = step_doc["variants"][0]
    assert variant["status"] == "error"
    said = "timing process 3/4: child process crashed with signal SIGKILL (9) while compiling"
    assert str(said_error(variant)).startswith(said)
    # the cause and phase as facts, from the fields (the words could say anything)
    assert variant["failure"] == {
        "cause": "crashed",
        "phase": "compile",
        "signal": "SIGKILL",
        "stage": "timing_process",
        "process": 3,
        "processes": 4,
        "figures": {"signal_number": 9},
        "doing": "compiling: reworded",
    }
    assert variant["error"] == "crashed"  # nothing said by others: the cause's code


@pytest.mark.parametrize("value", [0, 11, "two"])
def test_variant_processes_out_of_range_is_a_one_line_error(tmp_path: Path, value) -> None:
    with pytest.raises(ConfigError) as info:
        config(tmp_path, f"    variant_processes: {value}\n")
    message = str(info.value)
    assert "\n" not in message and "steps[0].variant_processes" in message


@dataclass
class HostLauncher(FakeLauncher):
    """A fake launcher whose children could read the host's files (as ChildLauncher's)."""

    shares_host_paths = True


def test_a_later_process_only_times(tmp_path: Path) -> None:
    """No numerics, no epoch end, no float64 reference: the first process did them."""
    launcher = HostLauncher()
    measure(config(tmp_path, "    epoch: {length: 10}\n"), launcher)
    _, first, *later = launcher.calls
    assert first["spec"]["settings"]["numerics"]["enabled"]
    assert first["spec"]["settings"]["epoch_length"] == 10
    for call in later:
        assert call["spec"]["timing_only"] and "numerics_reference" not in call["spec"]
        assert call["spec"]["settings"]["numerics"]["enabled"] is False
        assert call["spec"]["settings"]["epoch_length"] is None


def test_the_float64_reference_is_computed_once_for_every_variant(tmp_path: Path) -> None:
    launcher = HostLauncher()
    variants = "    variants: [{mode: default}, {mode: reduce-overhead}]\n"
    measure(config(tmp_path, variants + "    eager_processes: 2\n"), launcher)
    eager = [c for c in launcher.calls if c["spec"]["kind"] == "eager"]
    firsts = [c for c in launcher.calls if "#" not in c["label"] and c["spec"]["kind"] != "eager"]
    writers = [c for c in launcher.calls if "numerics_reference_out" in c["spec"]]
    assert writers == eager[:1], "only the first eager process computes it"
    path = writers[0]["spec"]["numerics_reference_out"]
    assert len(firsts) == 2
    assert all(c["spec"]["numerics_reference"] == path for c in firsts)
    assert not Path(path).parent.exists(), "the reference goes with the step"


def test_no_shared_reference_without_numerics_or_host_files(tmp_path: Path) -> None:
    """A container's children cannot read the host's folders: each variant computes its own."""
    no_numerics = "    numerics: {enabled: false}\n"
    for launcher, extra in ((FakeLauncher(), ""), (HostLauncher(), no_numerics)):
        measure(config(tmp_path, extra), launcher)
        keys = {k for c in launcher.calls for k in c["spec"]}
        assert not keys & {"numerics_reference", "numerics_reference_out"}
