"""The comment's trend chart as a pull request draws it: each ```mermaid block of a comment
with a stored history, drawn by Mermaid's own bundle in headless Chromium
(render_mermaid.py), for the newest Mermaid 11 and the newest release, since GitHub does not
say which one it runs. Each chart must draw (a chart Mermaid cannot parse shows as an error
box on the pull request), with one line per metric in the colour the legend under it names.

Without Chromium or the Mermaid bundle the tests skip, loudly; REQUIRE_BROWSER=1 (CI) makes
that a failure. `make browser-env` installs both.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from render_comment import find_chromium
from render_mermaid import MERMAID_VERSIONS, draw, mermaid_script
from report_runs import with_history

from compilegate.report.comment import render_comment

pytestmark = pytest.mark.browser


def missing(what: str) -> None:
    message = f"{what}: the trend charts were not drawn (make browser-env)"
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(message + "; REQUIRE_BROWSER=1")
    pytest.skip("SKIPPED LOUDLY: " + message)


@pytest.fixture(scope="module")
def charts(tmp_path_factory) -> list[str]:
    markdown = render_comment(with_history(tmp_path_factory.mktemp("docs"), stored_runs=6))
    found = re.findall(r"```mermaid\n(.*?)\n```", markdown, flags=re.S)
    assert len(found) == 3  # one a step: transformer, mlp, gpt
    return found


@pytest.mark.parametrize("version", MERMAID_VERSIONS)
def test_every_trend_chart_draws_with_the_colours_its_legend_names(charts, version):
    if find_chromium() is None:
        missing("no Chromium")
    script = mermaid_script(version)
    if script is None:
        missing(f"no Mermaid {version} bundle")
    drawn = draw(charts, script)
    assert [d["ok"] for d in drawn] == [True] * len(charts), [d.get("error") for d in drawn]
    for chart, result in zip(charts, drawn):
        svg = result["svg"]
        directive = json.loads(chart.splitlines()[0].removeprefix("%%{init: ").removesuffix("}%%"))
        palette = directive["themeVariables"]["xyChart"]["plotColorPalette"].split(", ")
        lines = [line for line in chart.splitlines() if line.strip().startswith("line [")]
        # each metric's line is drawn, in the palette's colour at its place (the legend's)
        strokes = re.findall(r'stroke="(#[0-9a-fA-F]{6})"', svg)
        for colour in palette[: len(lines)]:
            assert colour in strokes, (version, colour, sorted(set(strokes)))
        assert "this run" in svg
