"""The C++ port of tests/heldout/cxx_port.cpp: how to build it, and what the triage's first
line must say for each mistake planted in it.

The port is written from SPEC.md alone (its JSON tokenizer is the C template's, linked in as C);
one build serves every mistake, chosen by the adapter's first argument. ``EXACT`` maps each
mistake the catalogue names to the choice(s) the first line must name as the likely cause;
``SAYS`` maps the others to what the first line truthfully says instead, with why.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

#: Planted mistake -> the catalogued choice(s) the first triage line names as the likely cause.
EXACT: dict[str, tuple[str, ...]] = {
    "FLOAT_ACCUMULATOR": ("float32-accumulation",),
    "STD_SORT_BY_SCORE": ("std-sort-by-score",),
    "PARTIAL_SORT_BY_SCORE": ("std-partial-sort-by-score",),
    "NTH_ELEMENT_BY_SCORE": ("std-nth-element-by-score",),
    "STOF": ("std-stof",),
    "CASE_INSENSITIVE_PARAMS": ("case-insensitive-names",),
    "MAP_FIRST_WINS": ("params-first-name-wins",),
    "NULL_ADVANCES_CURSOR": ("null-advances-ring",),
    "CURSOR_RESET_ON_EVICT": ("cursor-reset-on-evict",),
    "RECENT_WINDOW_ONE_SHORT": ("recent-window-one-short",),
    "POOLING_WRAPS": ("wrap-around-pooling",),
    "POOLING_OVER_CANDIDATES": ("recent-excluded-from-pooling",),
    "VICTIMS_IN_RANK_ORDER": ("victims-in-rank-order",),
    "TIES_TO_HIGHER": ("ties-to-higher-position",),
    "REFUSED_STEP_WRITES": ("partial-write-on-refusal",),
    "FLUSH_TO_ZERO": ("flush-subnormals",),
}

#: Planted mistake -> the start of the first triage line, where no catalogued choice reproduces
#: the run: ``{failed}`` and ``{passed}`` are the run's counts.
#:
#: - CHRONOLOGICAL_SUMS: every failure is a float64 rounding difference that another order of
#:   the same additions also gives, so the numerics check comes first and says so (the
#:   catalogue's chronological-order is one such order; the line does not pick it).
#: - UINT32_POSITIONS: a position read into a uint32_t (wrapped modulo 2^32 after a reader
#:   that saturates at 64 bits) and checked only against the last one is not catalogued; the
#:   closest, negative-position-accepted, reproduces 8 of the failures, and the line says
#:   "closest", not "likely cause".
SAYS: dict[str, str] = {
    "CHRONOLOGICAL_SUMS": (
        "triage: all {failed} failures are rounding within float64 accumulation in any order: "
        "rerun with --numerics float64"
    ),
    "UINT32_POSITIONS": (
        "triage: closest: negative-position-accepted (reproduces 8 of {failed} failing vectors "
        "and checks and agrees on the {passed} passing ones)"
    ),
}


def build(directory: Path, gcc: str, gxx: str) -> Path:
    """Compile the port into ``directory`` (the C tokenizer with ``gcc``, the port with
    ``gxx``, no fast-math, no contraction) and return the binary's path."""
    sources = ROOT / "adapters" / "c"
    objects = []
    for name in ("json.c", "decimal.c"):
        target = directory / (name + ".o")
        subprocess.run(
            [gcc, "-std=c99", "-O2", "-ffp-contract=off", "-c", str(sources / name), "-o",
             str(target)],
            check=True,
        )  # fmt: skip
        objects.append(str(target))
    port = directory / "cxx_port.o"
    subprocess.run(
        [gxx, "-std=c++17", "-O2", "-ffp-contract=off", f"-I{sources}", "-c",
         str(HERE / "cxx_port.cpp"), "-o", str(port)],
        check=True,
    )  # fmt: skip
    binary = directory / "cxx-port"
    subprocess.run([gxx, "-o", str(binary), str(port), *objects, "-lm"], check=True)
    return binary
