"""Every vector and protocol check is listed, split at "Catches:"."""

from __future__ import annotations

from pathlib import Path

from conformance.docs import suite_listing
from conformance.suite.stream import plan_suite

ROOT = Path(__file__).resolve().parents[2]


def test_a_description_splits_into_what_it_pins_and_what_it_catches() -> None:
    assert suite_listing.split_description("Pins A. Catches: B, or C.") == ("Pins A.", "B, or C.")
    assert suite_listing.split_description("Pins only.") == ("Pins only.", "")


def test_every_vector_and_check_of_the_suite_has_a_row() -> None:
    plan = plan_suite([ROOT / "vectors"])
    vectors = suite_listing.vectors(ROOT)
    checks = suite_listing.checks(ROOT)
    assert vectors.startswith(f"{len(plan.vectors)} vectors in ")
    assert checks.startswith(f"{len(plan.checks)} protocol checks.")
    for entry in plan.vectors:
        assert f"| `{entry.id}` |" in vectors
    for entry in plan.checks:
        assert f"| `{entry.id}` |" in checks
