"""The vector model (SPEC.md §4): one JSON file per recorded call sequence with expectations.

This module reads and writes vector files and gives them a typed shape. Checking a vector
against the schema and the deeper rules lives in :mod:`conformance.validation`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.protocol import decode_strict_file

FORMAT = "snapkv-vector/1"
#: The ops a vector may record (``hello`` and ``bye`` belong to the session, not the vector).
VECTOR_OPS = ("new", "step", "evict", "scores")


class VectorError(Exception):
    """A vector file that cannot be used: names the file, the JSON pointer and the reason."""

    def __init__(self, path: str | Path | None, pointer: str, reason: str) -> None:
        self.path = str(path) if path is not None else "<vector>"
        self.pointer = pointer
        self.reason = reason
        super().__init__(f"{self.path}: {pointer or '/'}: {reason}")


@dataclass(frozen=True)
class Call:
    """One recorded request (without ``id``) and what it must produce.

    ``request`` holds the request's fields exactly as the file has them, ``op`` included and
    ``expect`` removed. ``expect`` is ``None`` (the call must succeed), ``{"victims": [...]}``
    or ``{"error": "<kind>"}``.
    """

    request: Mapping[str, Any]
    expect: Mapping[str, Any] | None = None

    @property
    def op(self) -> str:
        return str(self.request["op"])

    @property
    def expected_error(self) -> str | None:
        return None if self.expect is None else self.expect.get("error")

    @property
    def expected_victims(self) -> list[int] | None:
        return None if self.expect is None else self.expect.get("victims")

    def to_json(self) -> dict[str, Any]:
        data = dict(self.request)
        if self.expect is not None:
            data["expect"] = dict(self.expect)
        return data


@dataclass(frozen=True)
class Vector:
    """A loaded vector. ``path`` is where it came from (None when built in memory)."""

    id: str
    description: str
    tags: tuple[str, ...]
    params: Mapping[str, Any]
    seed: Any
    calls: tuple[Call, ...]
    path: Path | None = field(default=None, compare=False)
    #: The file's text as loaded (None when built in memory): the runner sends the calls' lines
    #: from it rather than re-encoding their weights (:mod:`conformance.wire`).
    source: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_json(cls, data: Any, path: str | Path | None = None) -> Vector:
        """Build from decoded JSON; raise :class:`VectorError` on a shape this model can't hold.

        This checks only what the model needs; :func:`conformance.validation.validate_vector`
        checks everything else.
        """
        if not isinstance(data, dict):
            raise VectorError(path, "", "a vector must be a JSON object")
        for name in ("id", "description", "tags", "params", "seed", "calls"):
            if name not in data:
                raise VectorError(path, "", f"missing required field {name!r}")
        if data.get("format") != FORMAT:
            raise VectorError(path, "/format", f"must be {FORMAT!r}, got {data.get('format')!r}")
        raw_calls = data["calls"]
        if not isinstance(raw_calls, list):
            raise VectorError(path, "/calls", "must be a list of calls")
        calls = []
        for index, raw in enumerate(raw_calls):
            if not isinstance(raw, dict) or raw.get("op") not in VECTOR_OPS:
                raise VectorError(
                    path, f"/calls/{index}", f"must be an object whose op is one of {VECTOR_OPS}"
                )
            request = {key: value for key, value in raw.items() if key != "expect"}
            calls.append(Call(request, raw.get("expect")))
        tags = data["tags"]
        return cls(
            id=str(data["id"]),
            description=str(data["description"]),
            tags=tuple(tags) if isinstance(tags, list) else (),
            params=data["params"],
            seed=data["seed"],
            calls=tuple(calls),
            path=Path(path) if path is not None else None,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "id": self.id,
            "description": self.description,
            "tags": list(self.tags),
            # A vector of a refused construction may hold params that are not an object.
            "params": dict(self.params) if isinstance(self.params, Mapping) else self.params,
            "seed": self.seed,
            "calls": [call.to_json() for call in self.calls],
        }


def dumps_vector(vector: Vector) -> str:
    """The canonical text of a vector file: what the generator writes, byte for byte.

    Top-level fields one per line, each call on a line of its own, compact inside, so that a
    diff of two suites shows the calls that changed and a person can read a vector top down.
    """
    data = vector.to_json()
    calls = data.pop("calls")
    lines = [f"  {json.dumps(key)}: {_compact(value)}," for key, value in data.items()]
    body = ",\n".join(f"    {_compact(call)}" for call in calls)
    return "{\n" + "\n".join(lines) + '\n  "calls": [\n' + body + "\n  ]\n}\n"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def load_vector(path: str | Path) -> Vector:
    """Read one vector file; raise :class:`VectorError` naming the file on any fault."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise VectorError(path, "", f"cannot read: {error}") from None
    try:
        data = decode_strict_file(text)
    except ValueError as error:
        raise VectorError(path, "", f"not valid JSON: {error}") from None
    return dataclasses.replace(Vector.from_json(data, path), source=text)


def iter_vector_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Every ``*.json`` file named or found under the named directories, sorted per directory."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.json") if p.is_file())
        elif path.is_file():
            yield path
        else:
            raise VectorError(path, "", "no such file or directory")


#: The format of a protocol check (:mod:`conformance.protocol_checks`), which shares the suite
#: directory with the vectors: its opening bytes name it.
_CHECK_FORMAT = re.compile(rb'"format"\s*:\s*"snapkv-protocol-check/1"')


def is_protocol_check_file(path: str | Path) -> bool:
    """Whether ``path`` is a protocol check rather than a vector (its format says so)."""
    try:
        with open(path, "rb") as file:
            head = file.read(4096)
    except OSError:
        return False
    return _CHECK_FORMAT.search(head) is not None


def load_suite(paths: Sequence[str | Path]) -> list[Vector]:
    """Load every vector under ``paths``, ordered by id; raise on the first bad file.

    Protocol checks found there are left to :mod:`conformance.protocol_checks`."""
    vectors = [
        load_vector(path) for path in iter_vector_files(paths) if not is_protocol_check_file(path)
    ]
    return sorted(vectors, key=lambda vector: vector.id)
