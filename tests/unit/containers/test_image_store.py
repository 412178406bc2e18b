"""What compilegate removes from the engine and in which order (containers/image_store.py);
the real engine: tests/integration/containers/test_image_budget.py."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from compilegate.cli import build_parser
from compilegate.containers.image_store import StoredImage, engine_time, plan_removals

MOMENT = datetime(2026, 12, 1, tzinfo=timezone.utc)


def stored(name: str, version: str, sources: str, day: int, *, in_use: bool = False) -> StoredImage:
    used = MOMENT.replace(day=day)
    return StoredImage(
        image_id=f"sha256:{name}", tags=(f"compilegate-torch:{version}-{name * 12}",),
        torch_version=version, sources_sha256=sources, size_bytes=10**9, created=MOMENT,
        last_used=used, in_use=in_use,
    )  # fmt: skip


def test_the_engines_times_are_read_to_the_microsecond() -> None:
    assert engine_time("2026-12-07T05:29:50.992150845Z") == datetime(
        2026, 12, 7, 5, 29, 50, 992150, tzinfo=timezone.utc
    )
    assert engine_time("2026-12-07T05:29:50Z") == datetime(
        2026, 12, 7, 5, 29, 50, tzinfo=timezone.utc
    )
    assert engine_time("0001-01-01T00:00:00Z") is None  # never tagged since: unset
    assert (
        engine_time("") is None and engine_time(None) is None and engine_time("yesterday") is None
    )


def test_an_image_never_tagged_again_counts_from_its_creation() -> None:
    from types import SimpleNamespace

    attrs = {"Created": "2026-12-01T00:00:00Z", "Metadata": {"LastTagTime": "0001-01-01T00:00:00Z"}}
    labels = {"compilegate.inputs-sha256": "x", "compilegate.torch-version": "2.13.0"}
    tags = ["compilegate-torch:2.13.0-aaaaaaaaaaaa", "mine:latest"]
    engine_image = SimpleNamespace(id="sha256:a", tags=tags, labels=labels, attrs=attrs)
    image = StoredImage.from_engine(engine_image, frozenset({"sha256:a"}))
    assert image is not None and image.last_used == MOMENT and image.in_use
    assert image.tags == ("compilegate-torch:2.13.0-aaaaaaaaaaaa",)  # the hand-given tag stays
    engine_image.labels = {}  # not ours
    assert StoredImage.from_engine(engine_image, frozenset()) is None


def test_least_recently_used_first_in_use_never_other_versions_apart() -> None:
    images = [
        stored("a", "2.13.0", "now", 1),
        stored("b", "2.13.0", "now", 2, in_use=True),
        stored("c", "2.13.0", "now", 3),
        stored("d", "2.13.0", "now", 4),
        stored("e", "2.14.1", "now", 1),
        stored("f", "2.12.0", "old", 9),
        stored("g", "2.12.0", "old", 9, in_use=True),
    ]
    plan = plan_removals(images, sources="now", keep_images=2)
    assert [(r.image.image_id, r.reason) for r in plan] == [
        ("sha256:f", "superseded"),
        ("sha256:a", "surplus"),
        ("sha256:c", "surplus"),  # b is older but in use: it stays, and counts
    ]
    building = plan_removals(
        images, sources="now", keep_images=2, superseded=False,
        building=("2.14.1", "compilegate-torch:2.14.1-zzzzzzzzzzzz"),
    )  # fmt: skip
    assert [r.image.image_id for r in building] == ["sha256:a", "sha256:c"]  # 2.14.1: e + new
    one = plan_removals(images, sources="now", keep_images=1, superseded=False,
                        building=("2.14.1", "compilegate-torch:2.14.1-zzzzzzzzzzzz"))  # fmt: skip
    assert [r.image.image_id for r in one if r.image.torch_version == "2.14.1"] == ["sha256:e"]
    rebuild = plan_removals(
        images[4:5], sources="now", keep_images=1, building=("2.14.1", images[4].tags[0])
    )
    assert rebuild == []  # the image a rebuild replaces makes its own room
    assert plan_removals(images, sources=None, keep_images=1) == []  # sources unknown
    with pytest.raises(ValueError, match="at least 1"):
        plan_removals(images, sources="now", keep_images=0)


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_keep_images_is_a_whole_number_from_one(
    value: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["images", "prune", "--keep-images", value])
    assert stopped.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--keep-images" in last and "COMPILEGATE_KEEP_IMAGES" in last and repr(value) in last
    assert build_parser().parse_args(["images", "list"]).keep_images == 2
    monkeypatch.setenv("COMPILEGATE_KEEP_IMAGES", "5")
    assert build_parser().parse_args(["images", "list"]).keep_images == 5
    assert build_parser().parse_args(["matrix", "--torch", "2.13.0"]).keep_images == 5
