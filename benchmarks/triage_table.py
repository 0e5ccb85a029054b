"""How well the triage names mistakes it was not told about: two tables.

Leave-one-out: for each catalogued mistake X, the suite is run in process on X, and the triage
ranks the catalogue *without* X. Does its first item name a close relative (a mistake that
overrides the same step of the policy, or one whose parts do)? Held-out ports: the ports of
``tests/heldout/ports.py``, written from SPEC.md with a planted bug, run as adapter processes
and triaged with the whole catalogue; is the first item the planted bug?

Run: ``python benchmarks/triage_table.py`` (about a minute and a half; ``--quick`` skips the
leave-one-out table).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance import mutants  # noqa: E402
from conformance.explain import triage  # noqa: E402
from conformance.policy.reference import SnapKV  # noqa: E402
from conformance.runner.run import run_suite  # noqa: E402
from conformance.spec import resources  # noqa: E402
from conformance.suite.vectors import load_suite  # noqa: E402
from conformance.transport.session import InProcessAdapter  # noqa: E402
from tests.heldout.ports import PORTS  # noqa: E402


def steps(policy: type) -> frozenset[str]:
    """The policy steps a mistake overrides (its relatives override one of the same)."""
    return frozenset(triage._defined(policy, SnapKV)) - {"fresh", "per_row", "step_scores"}


def relatives(name: str) -> set[str]:
    mine = steps(mutants.lookup(name).policy)
    return {m.name for m in mutants.CATALOGUE if m.name != name and steps(m.policy) & mine}


def leave_one_out(suite: list) -> None:
    print("Leave-one-out over the catalogue (top item with the mistake itself left out)")
    print(f"{'mistake':36} {'failing':>7}  {'top item (of the rest)':48} {'explains':>8}  close")
    close = total = 0
    for mutant in mutants.CATALOGUE:
        run = run_suite(
            suite, adapter_factory=lambda m=mutant: InProcessAdapter(m.factory, m.implementation())
        )
        found = triage.triage(
            suite, run.results, mistakes=triage.catalogue_mistakes(exclude=[mutant.name])
        )
        top = found.likely[0] if found.likely else None
        kin = relatives(mutant.name)
        ok = top is not None and bool(set(top.names) & kin)
        close += ok
        total += 1
        shown = top.mistake if top else "(nothing reproduces any failure)"
        explains = f"{top.explains}/{top.of}" if top else "-"
        verdict = "yes" if ok else "no"
        print(f"{mutant.name:36} {found.failing:>7}  {shown[:48]:48} {explains:>8}  {verdict}")
    print(f"close relative first: {close} of {total}\n")


def held_out(suite: list) -> None:
    print("Held-out ports (tests/heldout/ports.py), whole catalogue")
    print(
        f"{'port':20} {'failing':>7}  {'top item':40} {'explains':>8} {'agrees':>8}  named  seconds"
    )
    named = total = 0
    for name, (_, expected) in PORTS.items():
        if not expected:
            continue
        argv = [sys.executable, str(ROOT / "tests" / "heldout" / "ports.py"), name]
        run = run_suite(suite, argv)
        began = time.perf_counter()
        found = triage.triage(suite, run.results)
        seconds = time.perf_counter() - began
        top = found.likely[0] if found.likely else None
        ok = top is not None and top.mistake in expected
        named += ok
        total += 1
        shown = top.mistake if top else "(none)"
        explains = f"{top.explains}/{top.of}" if top else "-"
        agrees = f"{top.agrees}/{top.passing}" if top else "-"
        print(
            f"{name:20} {found.failing:>7}  {shown[:40]:40} {explains:>8} {agrees:>8}  "
            f"{'yes' if ok else 'no':5}  {seconds:.2f}"
        )
        if top is not None:
            print(f"    {found.headline()[:150]}")
    print(f"planted bug named first: {named} of {total}")


def main() -> None:
    suite = load_suite([str(resources.suite_dir())])
    if "--quick" not in sys.argv:
        leave_one_out(suite)
    held_out(suite)


if __name__ == "__main__":
    main()
