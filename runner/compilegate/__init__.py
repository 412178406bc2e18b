"""compilegate: does torch.compile still pay off for your training step?

The package is imported by the child process that runs user code, possibly under another
interpreter holding another torch: keep this module free of third-party imports.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
