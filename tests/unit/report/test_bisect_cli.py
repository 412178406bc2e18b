"""The bisect commands we print or ship parse with the real parser: the comment's offer and
the example workflow's (examples/workflows/bisect.yml)."""

from __future__ import annotations

import shlex

import pytest
import yaml

from compilegate.cli import build_parser
from compilegate.gate.verdict import Verdict
from compilegate.report.bisect_offer import bisect_offer
from compilegate.report.links import LinkContext
from repo_helpers import REPO_ROOT


def test_the_example_workflow_s_command_parses() -> None:
    workflow = yaml.safe_load((REPO_ROOT / "examples/workflows/bisect.yml").read_text())
    (script,) = [s["run"] for s in workflow["jobs"]["bisect"]["steps"] if "run" in s]
    line = script.split("compilegate bisect", 1)[1].replace("\\\n", " ").splitlines()[0]
    env = {"$CONFIG": "c.yml", "$GOOD": "v1", "$BAD": "HEAD", "$GITHUB_STEP_SUMMARY": "s.md"}
    argv = [env.get(word, word) for word in shlex.split(line)]
    args = build_parser().parse_args(["bisect", *argv])
    assert (args.good, args.bad, str(args.summary), str(args.config)) == (
        "v1",
        "HEAD",
        "s.md",
        "c.yml",
    )


class Row:
    def __init__(self, metric: str) -> None:
        self.metric, self.verdict, self.step = metric, Verdict.REGRESSION, "train"


class Report:
    def __init__(self, *metrics: str) -> None:
        self.verdicts = tuple(Row(m) for m in metrics)


@pytest.mark.parametrize(
    ("metrics", "counts"),
    [(("recompiles", "graph_break_sites"), ["graph_breaks", "recompiles"]), (("step_work",), [])],
)
def test_the_offered_command_parses(metrics: tuple[str, ...], counts: list[str]) -> None:
    links = LinkContext(head_sha="c" * 40, pr_commits=2, base_sha="b" * 40)
    offer = bisect_offer(Report(*metrics), links, "ci/compilegate.yml")  # type: ignore[arg-type]
    assert offer is not None
    line = offer.split("```sh\n")[1].split("\n")[0]
    line = line.replace(f'"$(git merge-base {"b" * 40} {"c" * 40})"', "b" * 40)
    args = build_parser().parse_args(shlex.split(line)[1:])
    assert args.count == counts and args.step == ["train"] and args.good == "b" * 40
