"""Draw Mermaid charts the way a pull request does, in a real browser, and report what came out.

GitHub draws a ```mermaid block of a comment with Mermaid.js in the browser; a chart Mermaid
cannot parse shows as an error box where the trend should be. Here each chart is drawn by
Mermaid's own bundle (`mermaid.min.js` from the npm package, fetched by
scripts/browser-setup.sh into ~/.cache/compilegate/mermaid/<version>/) in headless Chromium,
and the SVG it made (or the error it raised) comes back, one dict per chart:
{"ok": true, "svg": "<svg …>"} or {"ok": false, "error": "…"}.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from render_comment import dump_dom, headless_chromium, read_probe

# The newest 11.x and the newest release: GitHub does not say which one it runs.
MERMAID_VERSIONS = ("11.17.2", "12.3.0")
CACHE = Path(os.environ.get("COMPILEGATE_MERMAID_DIR", Path.home() / ".cache/compilegate/mermaid"))

PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<script src="{script}"></script>
<script>
const CHARTS = {charts};
(async () => {{
  const out = [];
  try {{
    mermaid.initialize({{startOnLoad: false}});
    for (const [index, text] of CHARTS.entries()) {{
      try {{
        const drawn = await mermaid.render('chart' + index, text);
        out.push({{ok: true, svg: drawn.svg}});
      }} catch (error) {{
        out.push({{ok: false, error: String((error && error.message) || error)}});
      }}
    }}
  }} catch (error) {{
    out.push({{ok: false, error: 'mermaid did not load: ' + error}});
  }}
  const probe = document.createElement('pre');
  probe.id = 'probe';
  probe.textContent = JSON.stringify(out);
  document.body.appendChild(probe);
}})();
</script></body></html>"""


def mermaid_script(version: str) -> Path | None:
    """The Mermaid bundle of `version` that scripts/browser-setup.sh fetched, if it did."""
    path = CACHE / version / "package" / "dist" / "mermaid.min.js"
    return path if path.is_file() else None


def draw(charts: list[str], script: Path) -> list[dict]:
    """Each chart as Mermaid drew it in headless Chromium (see the module docstring)."""
    html = PAGE.format(script=script.resolve().as_uri(), charts=json.dumps(charts))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "charts.html"
        src.write_text(html, encoding="utf-8")
        # time enough for the asynchronous drawing before the DOM is dumped
        dom = dump_dom(headless_chromium(tmp), src, "--virtual-time-budget=30000", timeout_s=180)
    return read_probe(dom, "Chromium drew no charts: the page did not finish")
