"""`python -m compilegate` is the same as the `compilegate` command."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
