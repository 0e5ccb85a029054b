"""What each numerics profile says of precision-only ports and of the catalogue's arithmetic
mistakes, on the committed suite: docs/numerics.md quotes its table.

For each port (the numpy ports of ``tests/support/precision_ports.py``, and the catalogued
mistakes of ``conformance.mutants.PRECISION_ONLY`` and ``NUMERICALLY_EQUIVALENT``) the suite is
answered in process; the vectors it fails exactly are judged again under every profile, and
each cell says how many are within it (W), not applicable (N) and failed (F).

A second table does the same for the semantic mistakes of ``tests/support/semantic_ports.py``,
each written over the arithmetic of the profile of its column (so the mistake, not the
arithmetic, is what a profile has to reject): each cell counts the vectors that fail under
that profile.

Run: ``python benchmarks/numerics_table.py`` (a few minutes).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance import mutants  # noqa: E402
from conformance.adapter.replay import replay  # noqa: E402
from conformance.judge.outcomes import answer_outcomes, expected_outcomes  # noqa: E402
from conformance.numerics.profiles import PROFILES  # noqa: E402
from conformance.numerics.verdict import FAIL, NOT_APPLICABLE, WITHIN, judge_numerics  # noqa: E402
from conformance.spec import resources  # noqa: E402
from conformance.suite.vectors import load_suite  # noqa: E402
from tests.support.precision_ports import PORTS, PROFILE_OF  # noqa: E402
from tests.support.semantic_ports import EQUIVALENT_UNDER, MISTAKES, semantic_port  # noqa: E402


def failing(vectors: list, factory: object) -> list:
    """The vectors ``factory``'s policy answers otherwise than the reference, with its
    outcomes."""
    found = []
    for vector in vectors:
        answers = replay([call.request for call in vector.calls], factory)  # type: ignore[arg-type]
        outcomes = answer_outcomes(vector, answers)
        if outcomes != expected_outcomes(vector):
            found.append((vector, outcomes))
    return found


def main() -> int:
    began = time.perf_counter()
    vectors = load_suite([resources.suite_dir()])
    rows = [(f"port {name}", port, PROFILE_OF[name]) for name, port in PORTS.items()]
    for name, profiles in mutants.PRECISION_ONLY.items():
        rows.append((name, mutants.lookup(name).factory, profiles[0]))
    for name in mutants.NUMERICALLY_EQUIVALENT:
        rows.append((name, mutants.lookup(name).factory, "(equivalent)"))
    names = [name for name in PROFILES if name != "exact"]
    print(f"{len(vectors)} committed vectors; each cell: W within / N n/a / F failed\n")
    header = ["port", "its arithmetic", "exact fails", *names]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label, factory, own in rows:
        differing = failing(vectors, factory)
        cells = []
        for name in names:
            statuses = [judge_numerics(v, o, PROFILES[name]).status for v, o in differing]
            counts = [statuses.count(s) for s in (WITHIN, NOT_APPLICABLE, FAIL)]
            cells.append("W{} N{} F{}".format(*counts))
        print("| " + " | ".join([label, own, str(len(differing)), *cells]) + " |")
    print(
        "\nSemantic mistakes, each over its column's arithmetic: vectors failed under that "
        "profile (= marks a documented equivalence)\n"
    )
    header = ["mistake", *PROFILES]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for mistake in MISTAKES:
        cells = []
        for name, profile in PROFILES.items():
            differing = failing(vectors, semantic_port(mistake, name))
            failed = sum(judge_numerics(v, o, profile).status == FAIL for v, o in differing)
            equivalent = name in EQUIVALENT_UNDER.get(mistake, ((), ""))[0]
            cells.append(f"{failed}{' =' if equivalent else ''}")
        print("| " + " | ".join([mistake, *cells]) + " |")
    print(f"\n{time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
