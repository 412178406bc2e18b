"""How tall the PR comment is, closed (every <details> shut) in GitHub's 780 px column.

stdout: one line per case of tests/browser/test_comment_in_browser.py (the committed example,
the report_runs makers, and the word-language-model and nanoGPT comments of
tests/unit/report/test_comment_word_language_model.py and test_comment_nanogpt.py): the height in
CSS pixels closed, the height with every <details> open, and the lines of the first screen's
text (everything before the first <details>; the browser's innerText, so a paragraph or a
table row is one line however it wraps).

Rendered by tests/browser/render_comment.py (cmarkgfm, the vendored github-markdown-css,
headless Chromium), so heights match what the browser tests assert on. Cases are made in a
temporary folder entered as the working directory, so accept commands carry relative paths
as the action's do.

Run: `PYTHONPATH=runner python bench/comment_heights.py [--case NAME] [--keep DIR]`
(--keep writes each case's comment.md and closed.png to DIR).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
for folder in ("tests", "tests/unit", "tests/unit/report", "tests/browser"):
    sys.path.insert(0, str(REPO_ROOT / folder))

from render_comment import COLUMN_PX, find_chromium, render  # noqa: E402
from test_comment_in_browser import MAKERS  # noqa: E402  (the browser tests' cases)

from compilegate.report.comment import render_comment  # noqa: E402

EXAMPLE = REPO_ROOT / "examples" / "report" / "comment.md"


def comment_for(name: str) -> str:
    if name == "committed example":
        return EXAMPLE.read_text(encoding="utf-8")
    return render_comment(MAKERS[name](Path("docs") / name.replace(" ", "_")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", choices=["committed example", *MAKERS])
    ap.add_argument("--keep", type=Path, help="write each case's comment.md and closed.png here")
    args = ap.parse_args()
    if find_chromium() is None:
        sys.exit("no Chromium: `make browser-env` installs it")
    keep = args.keep.resolve() if args.keep else None
    names = args.case or ["committed example", *MAKERS]
    print(f"{'case':<30} {'closed_px':>9} {'open_px':>8} {'first_screen_lines':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        for name in names:
            markdown = comment_for(name)
            out = keep / name.replace(" ", "_") if keep else Path(tmp, "png")
            out.mkdir(parents=True, exist_ok=True)
            if keep:
                (out / "comment.md").write_text(markdown, encoding="utf-8")
            closed = render(markdown, out / "closed.png", width_px=COLUMN_PX)
            opened = render(markdown, out / "open.png", width_px=COLUMN_PX, expand=True)
            lines = len(closed["first_screen_text"].splitlines())
            print(f"{name:<30} {closed['height_px']:>9} {opened['height_px']:>8} {lines:>18}")


if __name__ == "__main__":
    main()
