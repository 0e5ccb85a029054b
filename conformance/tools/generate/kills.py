"""``python -m conformance.tools.generate.kills``: recompute ``conformance/data/kills.json``, what
every catalogued mistake answers on every committed vector and protocol check (the file's
format and its reader are :mod:`conformance.explain.known_kills`), from a checkout.

Each vector's entry replays the whole catalogue with scores traced, and entries do not depend on
each other, so ``--jobs`` worker processes of this interpreter compute them side by side: the
one place the kit starts a process that is not an adapter (:mod:`conformance.transport.process`
starts those).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from conformance import mutants
from conformance.explain import known_kills
from conformance.report.outputs import write_text
from conformance.spec import resources
from conformance.suite.protocol_checks import ProtocolCheck
from conformance.suite.stream import load_checks
from conformance.suite.vectors import Vector, load_suite


def compute(vectors: Iterable[Vector | ProtocolCheck], jobs: int = 1) -> dict[str, Any]:
    """The whole file: every vector's and protocol check's entry, ids sorted."""
    ordered = sorted(vectors, key=lambda v: v.id)
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            entries = list(pool.map(known_kills.entry, ordered, chunksize=1))
    else:
        entries = [known_kills.entry(vector) for vector in ordered]
    return {vector.id: item for vector, item in zip(ordered, entries, strict=True)}


def _entry_of(item: Vector | ProtocolCheck, names: Sequence[str]) -> dict[str, Any]:
    return known_kills.entry(item, names or None)


def update(
    table: dict[str, Any], items: Iterable[Vector | ProtocolCheck], names: Sequence[str], jobs: int
) -> dict[str, Any]:
    """``table`` with the columns of the mistakes ``names`` recomputed on every item (an item
    the table does not hold, or holds for other text, is recomputed whole), each entry's
    mistakes in catalogue order: what a full recomputation gives, at the cost of those
    mistakes alone."""
    ordered = sorted(items, key=lambda v: v.id)
    partial = [
        item
        for item in ordered
        if item.id in table and table[item.id].get("digest") == known_kills.digest(item)
    ]
    known = {item.id for item in partial}
    whole = [item for item in ordered if item.id not in known]
    with ProcessPoolExecutor(max(1, jobs)) as pool:
        fresh = list(pool.map(_entry_of, partial, [names] * len(partial), chunksize=1))
        full = list(pool.map(_entry_of, whole, [()] * len(whole), chunksize=1))
    order = {m.name: i for i, m in enumerate((*mutants.CATALOGUE, *mutants.PROTOCOL))}
    out = {key: value for key, value in table.items() if key in {item.id for item in ordered}}
    for item, made in zip(partial, fresh, strict=True):
        old = out[item.id]
        killed = {k: v for k, v in old["kills"].items() if k not in names} | made["kills"]
        moved = [name for name in old["moved"] if name not in names] + made["moved"]
        out[item.id] = {
            **old,
            "kills": dict(sorted(killed.items(), key=lambda kv: order.get(kv[0], len(order)))),
            "moved": sorted(moved, key=lambda name: order.get(name, len(order))),
        }
    for item, made in zip(whole, full, strict=True):
        out[item.id] = made
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Recompute the file for the committed suite (from a checkout only)."""
    parser = argparse.ArgumentParser(prog="python -m conformance.tools.generate.kills")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--mutant",
        action="append",
        default=[],
        metavar="NAME",
        help="recompute only this mistake's outcomes (repeatable), keeping the others",
    )
    args = parser.parse_args(argv)
    if resources.checkout_root() is None:
        print(
            "kills: run from a checkout; an installed copy never edits itself",
            file=sys.stderr,
        )
        return 2
    vectors = load_suite([str(resources.suite_dir())])
    checks = load_checks([str(resources.suite_dir())])
    if args.mutant:
        for name in args.mutant:
            mutants.lookup(name)  # a KeyError lists the names
        table = json.loads(known_kills.PATH.read_text(encoding="utf-8"))
        made = update(table, [*vectors, *checks], args.mutant, args.jobs)
    else:
        made = compute([*vectors, *checks], jobs=args.jobs)
    write_text(known_kills.PATH, known_kills.dumps(made))
    print(f"wrote {known_kills.PATH} ({len(vectors)} vectors, {len(checks)} protocol checks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
