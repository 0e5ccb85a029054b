"""How many mistakes planted in a C++ port written from SPEC.md alone the first triage line
names exactly: the port of ``tests/heldout/cxx_port.cpp`` is built once with gcc and g++, run
through the whole suite (vectors and protocol checks) once per planted mistake, and each first
line is printed with whether it names exactly the mistake of ``tests/heldout/cxx_port.py``
(``EXACT``) as the likely cause, its figures the run's own.

Run: ``python benchmarks/triage_cxx_port.py`` (under a minute on two cores).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance.runner.run import Run  # noqa: E402
from conformance.spec import resources  # noqa: E402
from conformance.suite.stream import plan_suite  # noqa: E402
from tests.heldout.cxx_port import EXACT, SAYS, build  # noqa: E402


def main() -> None:
    gcc, gxx = shutil.which("gcc"), shutil.which("g++")
    if gcc is None or gxx is None:
        sys.exit("triage_cxx_port: gcc and g++ are needed")
    plan = plan_suite([str(resources.suite_dir())])
    named = 0
    planted = sorted((*EXACT, *SAYS))
    with tempfile.TemporaryDirectory() as directory:
        binary = build(Path(directory), gcc, gxx)
        for mistake in planted:
            run = Run(plan.vectors, plan.checks, [str(binary), mistake], jobs=2, triage=True)
            result = run.execute()
            found = result.triage
            likely = getattr(found, "likely", None)  # a numerics verdict has no ranking
            top = likely[0] if likely else None
            exact = (
                not result.ok
                and top is not None
                and not getattr(found, "alike", False)
                and set(top.choices) == set(EXACT.get(mistake, ()))
                and (top.of, top.passing) == (result.counts["failed"], result.counts["passed"])
                and found.lines()[0].startswith("triage: likely cause: ")
            )
            named += exact
            line = found.lines()[0] if found is not None else "(no triage)"
            print(f"{mistake:24} {'exact' if exact else 'not  '}  {line}", flush=True)
    print(f"{named} of {len(planted)} planted mistakes named exactly by the first line")


if __name__ == "__main__":
    main()
