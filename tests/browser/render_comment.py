#!/usr/bin/env python3
"""Render a PR comment the way a pull request shows it, in a real browser, and report what a
reader meets: a screenshot, each table's width against the column, and the text of the
first screen (everything before the first `<details>`).

    .venv/bin/python tests/browser/render_comment.py COMMENT.md OUT.png [--width 780] [--open]

Prints one JSON line: {"png", "height_px", "column_px", "tables": [{"columns", "scroll_width",
"client_width", "overflows"}], "overflowing_tables", "first_screen_text"}.

Adapted from the team's render-comment tool: markdown → HTML by cmarkgfm (GitHub's own
renderer, the `cmarkgfm` test dependency), styled by github-markdown-css (vendored in
vendor/, see vendor/PROVENANCE), laid out and photographed by headless Chromium (the
`chromium` Debian package; `make browser-env` installs it). A PR's conversation column is
about 780 CSS pixels wide on a laptop.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

VENDOR = Path(__file__).resolve().parent / "vendor"
STYLESHEET = VENDOR / "github-markdown-light.css"
COLUMN_PX = 780
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")

PROBE = """<script>
window.addEventListener('load', () => {
  const body = document.querySelector('.markdown-body');
  const out = {tables: [], height_px: document.body.scrollHeight,
               column_px: body.clientWidth, first_screen_text: ''};
  body.querySelectorAll('table').forEach(t => out.tables.push({
    columns: t.rows.length ? t.rows[0].cells.length : 0,
    scroll_width: t.scrollWidth, client_width: t.clientWidth,
    in_details: !!t.closest('details'),
    overflows: t.scrollWidth > t.clientWidth + 1}));
  const first = [];
  for (const node of body.children) {
    if (node.tagName === 'DETAILS' || node.querySelector('details')) break;
    first.push(node.innerText);
  }
  out.first_screen_text = first.join('\\n');
  const p = document.createElement('pre'); p.id = 'probe'; p.style.display = 'none';
  p.textContent = JSON.stringify(out); document.body.appendChild(p);
});
</script>"""


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        if shutil.which(name):
            return name
    return None


def to_html(markdown: str, expand: bool) -> str:
    import cmarkgfm
    from cmarkgfm.cmark import Options

    html = cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_GITHUB_PRE_LANG
    )
    return html.replace("<details>", "<details open>") if expand else html


def page(body: str, width_px: int) -> str:
    css = STYLESHEET.read_text(encoding="utf-8")
    return f"""<!doctype html><html><head><meta charset="utf-8"><style>{css}
body {{ background:#fff; margin:0; }}
.markdown-body {{ box-sizing:border-box; width:{width_px}px; margin:16px; padding:16px;
  border:1px solid #d0d7de; border-radius:6px; }}
</style></head><body><article class="markdown-body">{body}</article>{PROBE}</body></html>"""


def render(markdown: str, png: Path, *, width_px: int = COLUMN_PX, expand: bool = False) -> dict:
    """Lay the comment out in Chromium; write a screenshot to `png`; what the probe saw."""
    html = page(to_html(markdown, expand), width_px)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "comment.html"
        src.write_text(html, encoding="utf-8")
        flags = headless_chromium(tmp)
        info = read_probe(dump_dom(flags, src), "Chromium rendered no probe: the page did not load")
        height = min(max(int(info["height_px"]) + 40, 400), 16000)
        png.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                *flags,
                f"--screenshot={png.resolve()}",
                f"--window-size={width_px + 64},{height}",
                src.as_uri(),
            ],
            capture_output=True,
            timeout=120,
            check=True,
        )
    info["png"] = str(png)
    info["overflowing_tables"] = sum(t["overflows"] for t in info["tables"])
    return info


def headless_chromium(profile_dir: str) -> list[str]:
    """The command line that starts a headless Chromium with its profile in `profile_dir`."""
    browser = find_chromium()
    if browser is None:
        raise RuntimeError("no Chromium: install it with `apt-get install -y chromium`")
    return [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={profile_dir}/profile",
    ]


def dump_dom(flags: list[str], src: Path, *extra: str, timeout_s: int = 120) -> str:
    """The page `src` as Chromium left it once loaded (`extra`: more flags)."""
    return subprocess.run(
        [*flags, *extra, "--dump-dom", src.as_uri()],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    ).stdout


def read_probe(dom: str, failure: str) -> Any:
    """The JSON the page's probe (`<pre id="probe">`) holds; RuntimeError(`failure`) without it."""
    found = re.search(r'<pre id="probe"[^>]*>(.*?)</pre>', dom, re.S)
    if not found:
        raise RuntimeError(failure)
    return json.loads(unescape_html(found.group(1)))


def unescape_html(text: str) -> str:
    return (
        text.replace("&quot;", '"')
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("markdown", type=Path)
    ap.add_argument("png", type=Path)
    ap.add_argument("--width", type=int, default=COLUMN_PX)
    ap.add_argument("--open", action="store_true", help="render every <details> expanded")
    args = ap.parse_args()
    text = args.markdown.read_text(encoding="utf-8")
    info = render(text, args.png, width_px=args.width, expand=args.open)
    info.pop("first_screen_text")
    print(json.dumps(info))


if __name__ == "__main__":
    main()
