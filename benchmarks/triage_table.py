"""How well the triage names mistakes it was not told about, and ports written outside the
kit: three tables.

Leave-one-out: for each catalogued mistake X, the suite is run in process on X, and the triage
ranks the catalogue *without* X. Does its first item name a close relative (a mistake that
changes one of the same steps of the policy)? Held-out ports: the ports of
``tests/heldout/ports.py``, written from SPEC.md with a planted bug, and of
``tests/heldout/real_ports.py``, realistic transcriptions (kvpress, the official SnapKV code,
half-precision histories, protected-window slips, a Java port's JSON habits), run as adapter
processes and triaged with the whole catalogue; does the first line name every difference?

Run: ``python benchmarks/triage_table.py`` (a few minutes; ``--quick`` skips the leave-one-out
table).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance import mutants  # noqa: E402
from conformance.explain import triage  # noqa: E402
from conformance.runner.run import run_suite  # noqa: E402
from conformance.spec import resources  # noqa: E402
from conformance.suite.stream import plan_suite  # noqa: E402
from conformance.suite.vectors import load_suite  # noqa: E402
from conformance.transport.in_process import InProcessAdapter  # noqa: E402
from tests.heldout.ports import PORTS  # noqa: E402
from tests.heldout.real_ports import PORTS as REAL_PORTS  # noqa: E402


def relatives(name: str) -> set[str]:
    """The catalogued mistakes that change one of the same steps as ``name``."""
    mine = set(mutants.lookup(name).steps)
    return {m.name for m in mutants.CATALOGUE if m.name != name and mine & set(m.steps)}


def leave_one_out(suite: list) -> None:
    print("Leave-one-out over the catalogue (top item with the mistake itself left out)")
    print(f"{'mistake':36} {'failing':>7}  {'top item (of the rest)':48} {'explains':>8}  close")
    close = total = 0
    for mutant in mutants.CATALOGUE:
        run = run_suite(
            suite,
            adapter_factory=lambda m=mutant: InProcessAdapter(m.factory, m.implementation()),
        )
        found = triage.triage(suite, run.results, mistakes=triage.catalogue(exclude=[mutant.name]))
        top = found.likely[0] if found.likely else None
        kin = relatives(mutant.name) | {mutant.name}
        ok = top is not None and bool(set(top.choices) & kin)
        close += ok
        total += 1
        shown = top.mistake if top else "(nothing reproduces any failure)"
        explains = f"{top.explains}/{top.of}" if top else "-"
        verdict = "yes" if ok else "no"
        print(f"{mutant.name:36} {found.failing:>7}  {shown[:48]:48} {explains:>8}  {verdict}")
    print(f"close relative first: {close} of {total}\n")


def held_out(suite: list) -> None:
    print("Ports written outside the kit, whole catalogue: the first triage line")
    print(f"{'port':20} {'failing':>7} {'triage s':>8}  named  first line")
    entries = plan_suite([str(resources.suite_dir())]).vectors
    named = total = 0
    ports = [(name, "ports.py", expected) for name, (_, expected) in PORTS.items() if expected] + [
        (name, "real_ports.py", expected) for name, (_, expected) in REAL_PORTS.items() if expected
    ]
    for name, script, expected in ports:
        argv = [sys.executable, str(ROOT / "tests" / "heldout" / script), name]
        run = run_suite(suite, argv)
        began = time.perf_counter()
        found = triage.triage(entries, run.results)
        seconds = time.perf_counter() - began
        line = found.lines()[0]
        top = found.likely[0] if found.likely else None
        if script == "ports.py":
            ok = top is not None and top.mistake in expected and top.exact
        else:
            ok = top is not None and set(top.choices) == set(expected) and top.exact
        named += ok
        total += 1
        print(f"{name:20} {found.failing:>7} {seconds:8.2f}  {'yes' if ok else 'no':5}  {line}")
    print(f"every difference named on the first line, as an exact cause: {named} of {total}")


def main() -> None:
    suite = load_suite([str(resources.suite_dir())])
    if "--quick" not in sys.argv:
        leave_one_out(suite)
    held_out(suite)


if __name__ == "__main__":
    main()
