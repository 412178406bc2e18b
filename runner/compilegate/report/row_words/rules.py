"""Words every judged family shares: the noise rule's and the threshold's sentences
(the rules themselves are gate/rules.py's)."""

from __future__ import annotations

from ...gate.rules import decides_threshold, detectable_change_pct
from ...gate.verdict import Verdict


def noise_rule_words(
    moved: str, verdict: Verdict, change_pct: float, threshold_pct: float, noise: float, where: str
) -> str:
    """The sentence of a row judged by the noise rule: what `moved`, then why it has its
    verdict; `where` says whose noise it is ("between the processes of both runs")."""
    limit = f"the {threshold_pct:g} % threshold"
    beyond = f"{limit} and the ±{noise:.1f} % noise {where}"
    if verdict is Verdict.REGRESSION:
        return f"{moved}: worse by more than {beyond}"
    if verdict is Verdict.IMPROVEMENT:
        return f"{moved}: better by more than {beyond}"
    if verdict is Verdict.INCONCLUSIVE and abs(change_pct) > noise:
        decisive = detectable_change_pct(noise, threshold_pct)
        return (
            f"{moved}: beyond {limit}, but the ±{noise:.1f} % noise {where} is more than "
            f"twice the threshold: too noisy to decide it; with this noise a change is decided "
            f"only beyond {decisive:.0f} %, twice the noise"
        )
    if verdict is Verdict.INCONCLUSIVE:
        return (
            f"{moved}: beyond {limit} but inside the ±{noise:.1f} % noise {where}: "
            f"these runs decide changes above {detectable_change_pct(noise, threshold_pct):.1f} %"
        )
    if abs(change_pct) > threshold_pct and not decides_threshold(noise, threshold_pct, change_pct):
        return (
            f"{moved}: better, but the ±{noise:.1f} % noise is more than twice {limit}: "
            f"not a clear improvement"
        )
    if abs(change_pct) > threshold_pct:
        return f"{moved}: better, but inside the ±{noise:.1f} % noise: not a clear improvement"
    return f"{moved}: within {limit} (noise ±{noise:.1f} %)"


def threshold_words(verdict: Verdict, threshold_pct: float, noun: str = "threshold") -> str:
    """Why a row judged on its threshold alone has its verdict (`noun`: "tolerance" for
    the deterministic counts)."""
    if verdict is Verdict.REGRESSION:
        return f"grew by more than the {threshold_pct:g} % {noun}"
    if verdict is Verdict.IMPROVEMENT:
        return f"fell by more than the {threshold_pct:g} % {noun}"
    return f"within the {threshold_pct:g} % {noun}"
