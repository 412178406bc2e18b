"""`compilegate plan`: a config's fan-out over a runner pool as a GitHub job matrix, and a
merge that makes every planned leg a row (a leg that failed or never ran says so)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_docs import environment, result, step

from compilegate.cli import main
from compilegate.config.pool_plan import GITHUB_MATRIX_MAX_JOBS

THREE_STEPS = """\
version: 1
torch: ["2.12.0", "2.13.0"]
steps:
  - name: mlp
    entry: steps.py:make_mlp
  - name: transformer
    entry: steps.py:make_transformer
    device: cuda
  - name: ddp_mlp
    entry: steps.py:make_mlp
    distributed: {wrapper: ddp, world_size: 2}
"""


def leg(step: str, torch: str, gpus: int) -> dict[str, object]:
    leg_id = f"{step}-torch{torch}-gpu{gpus}"
    return {
        "leg": leg_id,
        "step": step,
        "torch": torch,
        "gpus": gpus,
        "runs_on": [f"compilegate-gpu{gpus}"],
        "artifact": f"compilegate-leg-{leg_id}",
    }


# The matrix for THREE_STEPS: six legs; the DDP step's on the scale set of two GPUs.
THREE_STEPS_MATRIX = {
    "include": [
        leg("mlp", "2.12.0", 1),
        leg("mlp", "2.13.0", 1),
        leg("transformer", "2.12.0", 1),
        leg("transformer", "2.13.0", 1),
        leg("ddp_mlp", "2.12.0", 2),
        leg("ddp_mlp", "2.13.0", 2),
    ]
}


def plan(
    tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str], *flags: str
) -> tuple[int, str, str]:
    config = tmp_path / "compilegate.yml"
    config.write_text(text, encoding="utf-8")
    code = main(["plan", "--config", str(config), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_three_steps_two_versions_and_a_ddp_step_make_six_legs(tmp_path, capsys):
    code, out, err = plan(tmp_path, THREE_STEPS, capsys)
    assert (code, err) == (0, "")
    assert out.count("\n") == 1, "one line, for $GITHUB_OUTPUT"
    assert json.loads(out) == THREE_STEPS_MATRIX


def test_a_cpu_step_goes_to_the_cpu_scale_set_and_each_leg_names_its_image(tmp_path, capsys):
    text = THREE_STEPS.replace("    device: cuda\n", "    device: cpu\n")
    code, out, _ = plan(
        tmp_path, text, capsys, "--torch", "2.13.0", "--step", "transformer",
        "--image", "registry.example.com/org/compilegate:torch-{torch}",
        "--scale-set-prefix", "arc",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)["include"] == [
        {
            "leg": "transformer-torch2.13.0-cpu",
            "step": "transformer",
            "torch": "2.13.0",
            "gpus": 0,
            "runs_on": ["arc-cpu"],
            "artifact": "compilegate-leg-transformer-torch2.13.0-cpu",
            "image": "registry.example.com/org/compilegate:torch-2.13.0",
        }
    ]


def many_steps(count: int) -> str:
    steps = "".join(f"  - name: s{i}\n    entry: steps.py:make_mlp\n" for i in range(count))
    return f'version: 1\ntorch: ["2.12.0", "2.13.0"]\nsteps:\n{steps}'


def test_past_256_legs_the_plan_is_refused_in_one_line_that_says_how_to_split(tmp_path, capsys):
    fits = GITHUB_MATRIX_MAX_JOBS // 2  # 128 steps x 2 versions: 256 legs, exactly the limit
    code, out, _ = plan(tmp_path, many_steps(fits), capsys)
    assert code == 0 and len(json.loads(out)["include"]) == GITHUB_MATRIX_MAX_JOBS

    code, out, err = plan(tmp_path, many_steps(fits + 1), capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err == (
        f"compilegate: error: {tmp_path / 'compilegate.yml'}: 258 legs (129 steps x 2 PyTorch "
        "versions), more than the 256 jobs a GitHub matrix makes: split it into one plan per "
        "PyTorch version (--torch VERSION), each the matrix of its own job or workflow, "
        "2 matrices of 129 legs\n"
    )
    # The split it names fits.
    code, out, _ = plan(tmp_path, many_steps(fits + 1), capsys, "--torch", "2.13.0")
    assert code == 0 and len(json.loads(out)["include"]) == fits + 1


@pytest.mark.parametrize(
    ("text", "flags", "named"),
    [
        (THREE_STEPS.replace('torch: ["2.12.0", "2.13.0"]\n', ""), (), "declare `torch:`"),
        (THREE_STEPS, ("--image", "registry/cg:latest"), "put {torch}"),
        (THREE_STEPS, ("--scale-set-prefix", "a b"), "--scale-set-prefix 'a b'"),
        (THREE_STEPS, ("--step", "nope"), "--step 'nope' is not declared"),
    ],
)
def test_a_plan_that_cannot_be_made_is_one_line_and_exit_2(tmp_path, capsys, text, flags, named):
    code, out, err = plan(tmp_path, text, capsys, *flags)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and named in err


# -- the merge: every planned leg is a row --------------------------------------------------


def test_the_merge_makes_a_row_of_every_leg_also_one_that_failed_or_never_ran(tmp_path, capsys):
    code, out, _ = plan(tmp_path, THREE_STEPS, capsys)
    assert code == 0
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(out, encoding="utf-8")
    results = tmp_path / "results"
    # Two legs measured, paired (each its base beside it), one failed (its error.txt), and
    # three never uploaded anything.
    for leg_id, torch in (("mlp-torch2.12.0-gpu1", "2.12.0"), ("mlp-torch2.13.0-gpu1", "2.13.0")):
        folder = results / leg_id
        folder.mkdir(parents=True)
        document = result(step(name="mlp"), env=environment(torch=torch))
        (folder / "result.json").write_text(json.dumps(document), encoding="utf-8")
        (folder / "result.base.json").write_text(json.dumps(document), encoding="utf-8")
    failed = results / "transformer-torch2.12.0-gpu1"
    failed.mkdir()
    (failed / "error.txt").write_text("pulling the image\nimage not found\n", encoding="utf-8")

    code = main(["report", "--results-dir", str(results), "--plan", str(plan_file),
                 "--format", "json"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    rows = {v["label"]: (v["overall"], v["error"]) for v in report["versions"]}
    never_ran = (
        "error",
        "this leg never ran: no artifact from its job (cancelled, failed before its first "
        "step, or no runner took it)",
    )
    assert rows == {
        "mlp-torch2.12.0-gpu1": ("pass", None),
        "mlp-torch2.13.0-gpu1": ("pass", None),
        "transformer-torch2.12.0-gpu1": ("error", "image not found"),
        "transformer-torch2.13.0-gpu1": never_ran,
        "ddp_mlp-torch2.12.0-gpu2": never_ran,
        "ddp_mlp-torch2.13.0-gpu2": never_ran,
    }
    assert code == 3  # a run error: legs did not run, never a silent pass

    # Each leg was judged against the base measured beside it (its own torch): no leg is an
    # upgrade check against the first leg's base.
    main(["report", "--results-dir", str(results), "--plan", str(plan_file),
          "--format", "markdown"])  # fmt: skip
    comment = capsys.readouterr().out
    assert "upgrade check" not in comment and "2.12.0 → 2.13.0" not in comment
    assert comment.count("this leg never ran") == 3

    # Without the plan the three legs that never ran would be no row at all.
    main(["report", "--results-dir", str(results), "--format", "json"])
    assert len(json.loads(capsys.readouterr().out)["versions"]) == 3


def test_the_merge_of_a_plan_none_of_whose_legs_ran(tmp_path, capsys):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(THREE_STEPS_MATRIX), encoding="utf-8")
    code = main(["report", "--results-dir", str(tmp_path / "none-came"), "--plan",
                 str(plan_file), "--format", "json"])  # fmt: skip
    versions = json.loads(capsys.readouterr().out)["versions"]
    assert code == 3
    planned = sorted(str(leg["leg"]) for leg in THREE_STEPS_MATRIX["include"])
    assert [v["label"] for v in versions] == planned
    assert all(v["error"].startswith("this leg never ran:") for v in versions)


@pytest.mark.parametrize(
    ("plan_text", "named"),
    [
        ("[]", "include: expected the list"),
        ('{"include": [{"leg": "../x"}]}', "include[0].leg"),
        ('{"include": [{"leg": "a"}, {"leg": "a"}]}', "include[1].leg"),
        ("{", "not a plan's JSON"),
    ],
)
def test_a_bad_plan_is_one_line_and_exit_2(tmp_path, capsys, plan_text, named):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(plan_text, encoding="utf-8")
    code = main(["report", "--results-dir", str(tmp_path), "--plan", str(plan_file)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and named in err


def test_a_plan_of_more_legs_than_a_run_set_reads_by_default_is_merged_whole(tmp_path, capsys):
    """A run set reads at most MAX_RESULT_FILES (64) documents; a plan's legs, up to 256."""
    code, out, _ = plan(tmp_path, many_steps(50), capsys)
    assert code == 0
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(out, encoding="utf-8")
    main(["report", "--results-dir", str(tmp_path / "r"), "--plan", str(plan_file),
          "--format", "json"])  # fmt: skip
    assert len(json.loads(capsys.readouterr().out)["versions"]) == 100
