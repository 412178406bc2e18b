"""The recommendation never tells the user to compile with a variant whose numerics failed
or errored, and never hides that the one it recommends is degraded."""

from __future__ import annotations

from compilegate.results.recommendation import recommend


def variant(vid, median, *, numerics="pass", degraded=None, low=None, noise=1.0):
    doc = {
        "id": vid,
        "status": "ok",
        "compile_s": 10.0,
        "break_even_steps": 100.0,
        "noise_pct": noise,
        "speedup": {"median": median, "ci_low": low or median - 0.05, "ci_high": median + 0.05},
        "degraded": degraded or [],
    }
    if numerics is not None:
        doc["numerics"] = {"status": numerics}
    return doc


def test_the_fastest_variant_with_failing_numerics_is_passed_over_and_named():
    advice = recommend([variant("fast", 2.0, numerics="fail"), variant("safe", 1.5)])
    assert advice["variant"] == "safe"
    assert "use safe: 1.50x" in advice["text"]
    assert "fast (2.00x) is not recommended: its numerics fail" in advice["text"]


def test_errored_numerics_rule_a_variant_out_too():
    advice = recommend([variant("fast", 2.0, numerics="error")])
    assert advice["variant"] is None
    assert advice["text"] == (
        "stay eager: no variant's numerics can be trusted; "
        "fast (2.00x) is not recommended: its numerics check errored"
    )


def test_stay_eager_names_a_faster_variant_ruled_out_by_numerics():
    advice = recommend([variant("fast", 2.0, numerics="fail"), variant("slow", 1.01, low=0.95)])
    assert advice["variant"] is None
    assert advice["text"].startswith("stay eager: no variant is measurably faster (best slow")
    assert advice["text"].endswith("fast (2.00x) is not recommended: its numerics fail")


def test_a_degraded_recommendation_says_so_with_every_reason_counted():
    reasons = ["2 graph breaks in your code (model.py:3 print)", "1 frame(s) fell back to eager"]
    advice = recommend([variant("default", 1.6, degraded=reasons)])
    assert advice["variant"] == "default"
    assert (
        "; but degraded: 2 graph breaks in your code (model.py:3 print) (and 1 more)"
        in (advice["text"])
    )


def test_unchecked_numerics_are_said_not_hidden():
    advice = recommend([variant("default", 1.6, numerics=None)])
    assert advice["variant"] == "default" and advice["text"].endswith("; numerics not checked")
    skipped = recommend([variant("default", 1.6, numerics="skipped")])
    assert skipped["text"].endswith("; numerics not checked")


def test_a_clean_recommendation_has_no_caveats():
    advice = recommend([variant("default", 1.6)])
    assert advice["text"] == (
        "use default: 1.60x faster (95% CI 1.55-1.65), compile 10.0 s, pays off after 100 steps"
    )
