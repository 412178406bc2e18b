"""compilegate.yml: the config model (model.py) and its loading (loading.py)."""

from __future__ import annotations

from .model import (
    COMPARABLE_SETTINGS,
    DEFAULT_NUMERICS,
    DEFAULT_STEP_SETTINGS,
    DEFAULT_THRESHOLDS,
    POWER_SETTINGS,
    Config,
    DistributedSettings,
    NumericsSettings,
    StepConfig,
    Variant,
)

__all__ = [
    "COMPARABLE_SETTINGS",
    "DEFAULT_NUMERICS",
    "DEFAULT_STEP_SETTINGS",
    "DEFAULT_THRESHOLDS",
    "POWER_SETTINGS",
    "Config",
    "DistributedSettings",
    "NumericsSettings",
    "StepConfig",
    "Variant",
]
