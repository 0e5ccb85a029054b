"""The generator: builders' drafts, replayed on the reference, written as the committed suite.

A builder writes calls; this module runs them on the reference to fill every ``expect``. A call
the builder meant to be refused must be refused by the reference with the intended kind, and a
call it meant to succeed must succeed; anything else is a :class:`GenerationError`, never a
silently recorded expectation. Every generated vector is then validated exactly as
``snapkv-conformance validate`` would (schema, rules, replay), and written in the canonical
form of :func:`conformance.suite.vectors.dumps_vector`, so the same code writes the same bytes.

Writing changes only the vector files that differ, all or nothing as far as a write can fail
(every new file is staged before any is put in place); vector files no builder produces any
more disappear, and everything else in the target stays as it is (:func:`write_suite`).

Recorded vectors (under :data:`RECORDED_DIRS`, written by ``snapkv-conformance record`` from a
real model) are data, not generated: their weights differ in the last bits between BLAS builds,
so ``generate`` neither compares, rewrites nor removes them; ``validate`` checks them like any
other vector.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.adapter.server import Session
from conformance.policy.reference import new_policy
from conformance.report import outputs
from conformance.spec.errors import GenerationError
from conformance.spec.protocol import decoded
from conformance.suite.protocol_checks import check_files
from conformance.suite.tags import load_vocabulary
from conformance.suite.validation import check_document, check_problems
from conformance.suite.vectors import Call, Vector, dumps_vector
from conformance.tools.generate.builders import Builder, DesignError, Draft, all_builders
from conformance.tools.generate.checks import build_checks

#: Suite subdirectories of recorded vectors, which no builder makes.
RECORDED_DIRS = ("real",)


def is_recorded(relative: str) -> bool:
    """True for a suite path (``real/x.json``) or id (``real/x``) of a recorded vector."""
    return relative.split("/", 1)[0] in RECORDED_DIRS


def realize(draft: Draft, factory: Any = new_policy) -> Vector:
    """Replay ``draft`` on the reference and return the vector with the reference's expectations."""

    session = Session(factory)
    calls = []
    for index, planned in enumerate(draft.calls):
        request = dict(planned.request)
        where = f"{draft.id}: call {index} ({request['op']})"
        if callable(request.get("attn")):
            if session.policy is None:
                raise GenerationError(f"{where}: attention given as a function, but no policy")
            try:
                request["attn"] = request["attn"]([int(p) for p in session.policy.kept])
            except DesignError as fault:
                raise GenerationError(f"{where}: {fault}") from None
        response = session.handle({**decoded(request), "id": index})
        refusal = response.get("error") or {}
        if planned.refuse is not None:
            if response["ok"] or refusal["kind"] != planned.refuse:
                answer = "accepts it" if response["ok"] else f"refuses it with {refusal['kind']}"
                raise GenerationError(
                    f"{where}: meant to be refused with {planned.refuse}, but the reference "
                    f"{answer}"
                )
            expect: dict[str, Any] | None = {"error": planned.refuse}
        elif not response["ok"]:
            raise GenerationError(
                f"{where}: meant to succeed, but the reference refuses it with "
                f"{refusal['kind']}: {refusal['message']}"
            )
        else:
            expect = {"victims": response["victims"]} if request["op"] == "evict" else None
        calls.append(Call(request, expect))
    return Vector(
        id=draft.id,
        description=draft.description,
        tags=draft.tags,
        params=draft.params,
        seed=draft.seed,
        calls=tuple(calls),
    )


def _check_draft(draft: Draft) -> None:
    if not draft.pins or not draft.catches:
        raise GenerationError(f"{draft.id}: a draft must say what it pins and what it catches")
    if not draft.tags:
        raise GenerationError(f"{draft.id}: a draft needs at least one tag")


def build_suite(
    builders: Iterable[Builder] | None = None, *, validate: bool = True
) -> dict[str, str]:
    """Every builder's vectors as ``{relative path: canonical text}``.

    Raises :class:`GenerationError` naming the builder on a duplicate id, a draft the reference
    does not bear out, or (with ``validate``, the default) a vector that fails validation as
    ``snapkv-conformance validate`` judges it. Skipping validation is for callers that compare
    the result with an already validated suite, where equal bytes imply validity.
    """

    tags = load_vocabulary()
    files: dict[str, str] = {}
    owners: dict[str, str] = {}
    for entry in all_builders() if builders is None else builders:
        for draft in entry.drafts():
            _check_draft(draft)
            if is_recorded(draft.id):
                raise GenerationError(
                    f"builder {entry.name}: id {draft.id!r} is in a directory of recorded "
                    f"vectors ({', '.join(RECORDED_DIRS)})"
                )
            if draft.id in owners:
                raise GenerationError(
                    f"builder {entry.name}: id {draft.id!r} is also made by {owners[draft.id]}"
                )
            owners[draft.id] = entry.name
            text = dumps_vector(realize(draft))
            relative = f"{draft.id}.json"
            _, problems = check_document(text, relative, tags=tags) if validate else (None, [])
            if problems:
                listing = "\n  ".join(str(problem) for problem in problems)
                raise GenerationError(f"builder {entry.name} made an invalid vector:\n  {listing}")
            files[relative] = text
    if builders is None:
        files.update(_protocol_check_files(validate))
    return dict(sorted(files.items()))


def _protocol_check_files(validate: bool) -> dict[str, str]:
    """The protocol checks (``protocol/*.json``), generated beside the vectors."""

    files = check_files(build_checks())
    for relative, text in files.items():
        problems = check_problems(json.loads(text), relative) if validate else []
        if problems:
            raise GenerationError(f"invalid protocol check {relative}:\n  " + "\n  ".join(problems))
    return files


@dataclass
class SuiteDiff:
    """How a directory's vector files differ from a generated suite."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def lines(self) -> list[str]:
        """One line per differing file: ``added``, ``removed`` or ``changed`` and its path."""
        return [
            *(f"added    {path}" for path in self.added),
            *(f"removed  {path}" for path in self.removed),
            *(f"changed  {path}" for path in self.changed),
        ]


def existing_vector_files(directory: Path) -> dict[str, bytes]:
    """The generated ``*.json`` files under ``directory`` as ``{relative posix path: bytes}``.

    Recorded vectors are left out: they are not the generator's to compare.
    """
    if not directory.is_dir():
        return {}
    return {
        relative: path.read_bytes()
        for path in sorted(directory.rglob("*.json"))
        if path.is_file() and not is_recorded(relative := path.relative_to(directory).as_posix())
    }


def diff_suite(directory: str | Path, files: Mapping[str, str]) -> SuiteDiff:
    """Compare the vector files under ``directory`` with ``files`` (from :func:`build_suite`)."""
    current = existing_vector_files(Path(directory))
    return SuiteDiff(
        added=sorted(set(files) - set(current)),
        removed=sorted(set(current) - set(files)),
        changed=sorted(
            path for path in set(files) & set(current) if current[path] != files[path].encode()
        ),
    )


def write_suite(directory: str | Path, files: Mapping[str, str]) -> SuiteDiff:
    """Make the vector files under ``directory`` hold ``files``, changing nothing else.

    Only the vector files (``*.json``) that differ are touched: a new or changed one is
    written (a regular file replaced with its mode and owner kept, a symlink's target
    rewritten, a file with several hard links rewritten in place so the links stay), a stale
    one removed. Recorded vectors, directories (empty or not, with their modes), other files,
    FIFOs and dangling symlinks stay as they are; missing directories are created.

    All or nothing as far as a write can fail: every new file is staged beside the file it
    replaces before any is renamed in, and on a failure the stagings and any directories
    created for them are removed. Returns what changed.
    """
    target = Path(directory).resolve()
    change = diff_suite(target, files)
    created: list[Path] = []
    plan: list[tuple[Path, Path | None, bytes]] = []  # (file, its staging or None, bytes)
    try:
        for relative in [*change.added, *change.changed]:
            path = target / relative
            real = Path(os.path.realpath(path)) if path.is_symlink() else path
            created += _make_parents(real.parent)
            data = files[relative].encode("utf-8")
            info = os.stat(real) if real.exists() else None
            if info is not None and info.st_nlink > 1:
                plan.append((real, None, data))
            else:
                plan.append((real, outputs.stage(real, data, info), data))
    except BaseException:
        for _, staging, _ in plan:
            if staging is not None:
                staging.unlink(missing_ok=True)
        for made in reversed(created):
            with contextlib.suppress(OSError):
                made.rmdir()
        raise
    for real, staging, data in plan:
        if staging is None:
            with open(real, "r+b") as stream:  # keep the inode: its other links see the change
                stream.write(data)
                stream.truncate()
        else:
            os.replace(staging, real)
    for relative in change.removed:
        (target / relative).unlink()
    return change


def _make_parents(directory: Path) -> list[Path]:
    """Create ``directory`` and its missing ancestors; return those created, outermost first."""
    missing = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    for path in reversed(missing):
        path.mkdir()
    return list(reversed(missing))
