"""The generator: builders' drafts, replayed on the reference, written as the committed suite.

A builder writes calls; this module runs them on the reference to fill every ``expect``. A call
the builder meant to be refused must be refused by the reference with the intended kind, and a
call it meant to succeed must succeed; anything else is a :class:`GenerationError`, never a
silently recorded expectation. Every generated vector is then validated exactly as
``snapkv-conformance validate`` would (schema, rules, replay), and written in the canonical
form of :func:`conformance.vectors.dumps_vector`, so the same code writes the same bytes.

Writing is all or nothing: the suite is built in a temporary directory beside the target, the
non-vector files of the target (``README.md``, ``TAGS.md``) are carried over, and the two
directories are swapped by renames; vector files no builder produces any more disappear.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.builders import Builder, DesignError, Draft, all_builders
from conformance.policy import new_policy
from conformance.vectors import Call, Vector, dumps_vector


class GenerationError(Exception):
    """A builder's draft that the reference does not bear out, or a broken suite."""


def realize(draft: Draft, factory: Any = new_policy) -> Vector:
    """Replay ``draft`` on the reference and return the vector with the reference's expectations."""
    from conformance.adapter import Session

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
            except DesignError as error:
                raise GenerationError(f"{where}: {error}") from None
        response = session.handle({**request, "id": index})
        error = response.get("error") or {}
        if planned.refuse is not None:
            if response["ok"] or error["kind"] != planned.refuse:
                answer = "accepts it" if response["ok"] else f"refuses it with {error['kind']}"
                raise GenerationError(
                    f"{where}: meant to be refused with {planned.refuse}, but the reference "
                    f"{answer}"
                )
            expect: dict[str, Any] | None = {"error": planned.refuse}
        elif not response["ok"]:
            raise GenerationError(
                f"{where}: meant to succeed, but the reference refuses it with "
                f"{error['kind']}: {error['message']}"
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
    from conformance.tags import load_vocabulary
    from conformance.validation import check_document

    tags = load_vocabulary()
    files: dict[str, str] = {}
    owners: dict[str, str] = {}
    for entry in all_builders() if builders is None else builders:
        for draft in entry.drafts():
            _check_draft(draft)
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
    from conformance import protocol_checks

    files = protocol_checks.check_files(protocol_checks.build_checks())
    for relative, text in files.items():
        problems = protocol_checks.check_problems(json.loads(text), relative) if validate else []
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
    """The ``*.json`` files under ``directory`` as ``{relative posix path: bytes}``."""
    if not directory.is_dir():
        return {}
    return {
        path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*.json"))
        if path.is_file()
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
    """Replace the vector files under ``directory`` with ``files``, all at once.

    Non-``*.json`` files already in ``directory`` are kept. Returns what changed.
    """
    target = Path(directory).resolve()
    change = diff_suite(target, files)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    try:
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
        if target.is_dir():
            _carry_over(target, staging)
            os.chmod(staging, target.stat().st_mode & 0o7777)
        else:
            os.chmod(staging, 0o755)
        _swap(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return change


def _carry_over(source: Path, destination: Path) -> None:
    """Copy every file of ``source`` that is not a vector (``*.json``) into ``destination``."""
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.suffix != ".json":
            copy = destination / path.relative_to(source)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, copy)


def _swap(staging: Path, target: Path) -> None:
    """Put ``staging`` in the place of ``target`` by renames; the old tree is then removed."""
    if not target.exists():
        os.rename(staging, target)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.rmdir(retired)
    os.rename(target, retired)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(retired, target)
        raise
    shutil.rmtree(retired, ignore_errors=True)
