"""compilegate: does torch.compile still pay off for your training step?

The package's folders are its architecture. Data flows one way:

    config/      compilegate.yml → frozen model (one list of COMPARABLE_SETTINGS); load errors
    run/         parent side: resolve entries statically, launch isolated children, orchestrate
    child/       the measuring interpreter: user code, training loop, timing, diagnostics,
                 numerics, environment. Standard library + torch ONLY (it may run under another
                 interpreter holding another torch); imports nothing but child/, paths.py,
                 break_type.py and this module
    results/     result document assembly, statistics, the recommendation
    gate/        read documents, baseline merge, policy (from the baseline side), compare,
                 per-metric rules, verdict model and its exit codes. A judge returns facts:
                 each row its verdict (an enum) and its family's RowFacts, never a sentence
    report/      every word: each row's sentence from its facts (report/row_words/, one module
                 per metric family), one screen model for comment, `report` and `run`
                 (first_screen/), one layout helper (tables.py), annotations
    github/      the GitHub REST client, sticky comment, Actions environment, baseline artifact
    containers/  one image or venv per PyTorch version (the matrix)
    cli/         the parser; the one place errors become exit codes (errors.EXIT_CODES)

Who may import whom: child → (child, paths, this module). run → child.protocol only (the
spec and progress vocabulary), config and results; neither run nor results imports report
(a result records facts: report/ words them). config imports no other wing
(the names a step may opt in, config/env_names.py, are config's: run/child_env.py takes them
from there).
gate and report never import child. The gate is a judge: it imports neither github, report
nor cli. report imports neither github nor cli (github takes the report's types). No circle
of imports, not even through an import inside a function.
tests/unit/test_layout.py checks these rules.

Keep this module free of third-party imports: the child imports it.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
