"""The vector model (SPEC.md §4): one JSON file per recorded call sequence with expectations.

This module is the one loader: ``run``, ``validate`` and every other command read vector files
through :func:`read_document` (one file: strict JSON, then the schema) and :func:`iter_vectors`
(a vector at a time, ids unique). A vector in the canonical layout (:func:`dumps_vector`: one
call per line) is parsed line by line, and each call keeps its line's bytes, so the runner sends
the file's own text (:meth:`Call.body`) rather than re-encoding the weights. The rules beyond
the schema and the replay on the reference live in :mod:`conformance.suite.validation`.
"""

from __future__ import annotations

import os
import re
import stat as stat_module
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from conformance.spec.errors import VectorError
from conformance.spec.inputs import InputError, read_suite_file
from conformance.spec.protocol import (
    MAX_DEPTH,
    DecodeError,
    NumberText,
    decode,
    decode_strict_file,
    encode_body,
)
from conformance.suite import layout

VECTOR_FORMAT = "snapkv-vector/1"
#: The tag of a vector whose weights need not be float32 values (SPEC.md §4.3): they are chosen
#: for how their decimals round, and sent exactly as written.
DOUBLE_ROUNDING = "double-rounding"
#: The ops a vector may record (``hello`` and ``bye`` belong to the session, ``scores`` to
#: diagnosis: SPEC.md §4.2).
VECTOR_OPS = ("new", "step", "evict")
#: A vector with more calls than this is held as its file's bytes and each call read from its
#: line when asked for (:class:`Lines`), so that holding it costs about its file's size; a
#: shorter one is held parsed, which is quicker to use. The committed suite's longest vector
#: has about 3,000 calls; a recorded trace may have millions.
LONG_VECTOR = 10_000


class _Made(Sequence[Any]):
    """A sequence whose items are made when asked for (:meth:`_item`), never kept: what the
    two kinds of lazy sequence below share (indices checked, negative ones counted from the
    end, a slice made item by item)."""

    __slots__ = ()

    def _item(self, index: int) -> Any:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Any, ...]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        size = len(self)
        if not -size <= index < size:
            raise IndexError(f"index {index} out of range for {size} items")
        return self._item(index % size)


class Lines(_Made):
    """Lines of a file, held as the file's bytes and where each line is (two integers a
    line), each line's bytes cut out when asked for."""

    __slots__ = ("_data", "_spans")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._spans = array("q")

    def add(self, first: int, last: int) -> None:
        """The next line is ``data[first:last]``."""
        self._spans.append(first)
        self._spans.append(last)

    def span(self, index: int) -> tuple[int, int]:
        """Where line ``index`` is: ``(first, last)``."""
        return self._spans[2 * index], self._spans[2 * index + 1]

    def __len__(self) -> int:
        return len(self._spans) // 2

    def _item(self, index: int) -> bytes:
        first, last = self.span(index)
        return self._data[first:last]


class _Read(_Made):
    """Items made from lines when asked for, by ``read`` (a long vector's calls)."""

    __slots__ = ("_lines", "_read")

    def __init__(self, lines: Sequence[bytes], read: Callable[[int, bytes], Any]) -> None:
        self._lines = lines
        self._read = read

    def __len__(self) -> int:
        return len(self._lines)

    def _item(self, index: int) -> Any:
        return self._read(index, self._lines[index])


def read_lazily(lines: Sequence[bytes], read: Callable[[int, bytes], Any]) -> Sequence[Any]:
    """``read(index, line)`` of each line, made when asked for and never kept."""
    return _Read(lines, read)


@dataclass(frozen=True, slots=True)
class Call:
    """One recorded request (without ``id``) and what it must produce.

    ``request`` holds the request's fields exactly as the file has them, ``op`` included and
    ``expect`` removed. ``expect`` is ``None`` (the call must succeed), ``{"victims": [...]}``
    or ``{"error": "<kind>"}``.
    """

    request: Mapping[str, Any]
    expect: Mapping[str, Any] | None = None
    #: The call's line (``expect`` included): in a file of the canonical layout exactly the
    #: text ``request`` and ``expect`` were parsed from; in a file of another layout the call
    #: written compactly with its numbers as the file writes them.
    line: bytes | None = field(default=None, compare=False, repr=False)

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

    def written_request(self) -> dict[str, Any]:
        """``request`` with the weights of ``attn`` as the line writes them
        (:class:`~conformance.spec.protocol.NumberText`): encoded again, it sends them as
        written."""
        data = dict(self.request)
        if self.line is not None and isinstance(data.get("attn"), list):
            written = decode(self.line, parse_float=NumberText, parse_int=NumberText)
            data["attn"] = written["attn"]
        return data

    def as_written(self) -> dict[str, Any]:
        """:meth:`to_json` with the weights as written (:meth:`written_request`)."""
        data = self.written_request()
        if self.expect is not None:
            data["expect"] = dict(self.expect)
        return data

    def body(self) -> bytes:
        """The request as sent, without its opening brace and id (``"op":...}\\n``).

        A call is its file line as it is, less its ``expect`` (weights verbatim, never parsed
        and re-encoded: SPEC.md §4.3); an ``evict`` is the fixed text; anything else is encoded
        (a :class:`~conformance.spec.protocol.NumberText` as its text).
        """
        if self.line is not None:
            sent = (
                self.line[1:] + b"\n" if self.expect is None else layout.without_expect(self.line)
            )
            if sent is not None:
                return sent
        if len(self.request) == 1 and self.request.get("op") == "evict":
            return _EVICT_BODY
        return encode_body(self.request)


@dataclass(frozen=True)
class Vector:
    """A loaded vector. ``path`` is where it came from (None when built in memory)."""

    id: str
    description: str
    tags: tuple[str, ...]
    params: Mapping[str, Any]
    seed: Any
    #: A tuple; for a long vector (:data:`LONG_VECTOR`) its file's lines, each call read
    #: from its line when asked for (:func:`read_lazily`).
    calls: Sequence[Call]
    path: Path | None = field(default=None, compare=False)

    @classmethod
    def from_json(
        cls,
        data: Any,
        path: str | Path | None = None,
        lines: Sequence[bytes] | None = None,
    ) -> Vector:
        """Build from decoded JSON; raise :class:`VectorError` on a shape this model can't hold.

        This checks only what the model needs; the loader (:func:`read_document`) applies the
        schema first. ``lines`` are the calls' lines in the file, one per call, if known.
        """
        if not isinstance(data, dict):
            raise VectorError(path, "", "a vector must be a JSON object")
        for name in ("id", "description", "tags", "params", "seed", "calls"):
            if name not in data:
                raise VectorError(path, "", f"missing required field {name!r}")
        if data.get("format") != VECTOR_FORMAT:
            raise VectorError(
                path, "/format", f"must be {VECTOR_FORMAT!r}, got {data.get('format')!r}"
            )
        raw_calls = data["calls"]
        if not isinstance(raw_calls, (list, _Read)):
            raise VectorError(path, "/calls", "must be a list of calls")

        def call(index: int, raw: Any) -> Call:
            if not isinstance(raw, dict) or raw.get("op") not in VECTOR_OPS:
                raise VectorError(
                    path, f"/calls/{index}", f"must be an object whose op is one of {VECTOR_OPS}"
                )
            request = {key: value for key, value in raw.items() if key != "expect"}
            line = lines[index] if lines is not None else None
            return Call(request, raw.get("expect"), line)

        calls: Sequence[Call]
        if isinstance(raw_calls, _Read):  # a long vector: each call made when asked for
            call(0, raw_calls[0])  # a first call of the wrong shape is refused here
            calls = read_lazily(raw_calls, call)
        else:
            calls = tuple(call(index, raw) for index, raw in enumerate(raw_calls))
        tags = data["tags"]
        return cls(
            id=str(data["id"]),
            description=str(data["description"]),
            tags=tuple(tags) if isinstance(tags, list) else (),
            params=data["params"],
            seed=data["seed"],
            calls=calls,
            path=Path(path) if path is not None else None,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": VECTOR_FORMAT,
            "id": self.id,
            "description": self.description,
            "tags": list(self.tags),
            # A vector of a refused construction may hold params that are not an object.
            "params": dict(self.params) if isinstance(self.params, Mapping) else self.params,
            "seed": self.seed,
            "calls": [call.to_json() for call in self.calls],
        }


def dumps_vector(vector: Vector) -> str:
    """The canonical text of a vector file (:mod:`conformance.suite.layout`): what the
    generator writes, byte for byte, so that a diff of two suites shows the calls that changed
    and a person can read a vector top down."""
    calls = (layout.compact(call.as_written()) for call in vector.calls)
    return layout.text(vector_fields(vector), [("calls", calls)])


def vector_fields(vector: Vector) -> list[tuple[str, str]]:
    """The vector's top-level fields as :func:`dumps_vector` writes them, ``calls`` aside."""
    data = vector.to_json()
    del data["calls"]
    return [(name, layout.compact(value)) for name, value in data.items()]


_EVICT_BODY = b'"op":"evict"}\n'
_CALLS_OPEN = layout.CALLS_KEY + b"\n"


@dataclass
class Document:
    """One vector file as read: its JSON (None if it is not strict JSON), its call lines (None
    unless the layout is canonical), and the problems that make it unusable (JSON, schema)."""

    path: Path | None
    data: Any = None
    lines: Sequence[bytes] | None = None
    problems: list[VectorError] = field(default_factory=list)
    #: The file's bytes, kept only when there are no lines (to read the weights' literals).
    raw: bytes | None = field(default=None, repr=False)

    def vector(self) -> Vector:
        """The usable vector; raise the first problem if there is one."""
        if self.problems:
            raise self.problems[0]
        lines = self.lines if self.lines is not None else self._lines_as_written()
        return Vector.from_json(self.data, self.path, lines)

    def _lines_as_written(self) -> list[bytes] | None:
        """For a file of another layout: each call on a line of its own, its numbers written
        as the file writes them and its ``expect`` last (what :meth:`Call.body` sends)."""
        if self.raw is None:
            return None
        number = NumberText  # every number keeps its text: -0, 1e0 and 10^39 stay as written
        written = decode_strict_file(self.raw, parse_float=number, parse_int=number)
        calls = written.get("calls") if isinstance(written, dict) else None
        if not isinstance(calls, list) or not all(isinstance(call, dict) for call in calls):
            return None
        lines = []
        for call in calls:
            request = {key: value for key, value in call.items() if key != "expect"}
            if "expect" in call:
                request["expect"] = call["expect"]
            lines.append(layout.compact(request).encode("utf-8", "surrogatepass"))
        return lines


def read_document(path: str | Path) -> Document:
    """Read one vector file: strict JSON (SPEC.md §4.3: no duplicate keys, no NaN, nesting
    within the codec's limit), then the schema, every problem named by file and pointer."""
    path = Path(path)
    try:
        raw = read_suite_file(path)
    except InputError as error:
        return Document(path, problems=[VectorError(path, "", error.reason)])
    return parse_document(raw, path)


def parse_document(raw: bytes, path: str | Path | None = None) -> Document:
    """A vector file's bytes, read as :func:`read_document` reads the file."""
    document = Document(Path(path) if path is not None else None)
    try:
        document.data, document.lines = _parse(raw)
    except DecodeError as error:
        document.problems.append(VectorError(path, "", f"not valid JSON: {error}"))
        return document
    if document.lines is None:
        document.raw = raw
    # Here: the schema check loads jsonschema, only when a file is read this way.
    from conformance.spec.schemas import schema_problems

    try:
        document.problems = schema_problems(document.data, path)
    except DecodeError:  # a long vector's line: the whole text's parse names the fault's place
        try:
            document.data, document.lines, document.raw = decode_strict_file(raw), None, raw
        except DecodeError as error:
            document.problems = [VectorError(path, "", f"not valid JSON: {error}")]
            return document
        document.problems = schema_problems(document.data, path)
    return document


def _parse(raw: bytes) -> tuple[Any, Sequence[bytes] | None]:
    """The file's JSON, and its call lines when the layout allows reading it line by line.

    A long vector's calls (more than :data:`LONG_VECTOR`) are read from their lines whenever
    they are used, never all held; the schema's pass over them (:func:`parse_document`) is the
    first, and finds a line that is not strict JSON."""
    split = _split_lines(raw)
    if split is not None:
        head, lines = split
        try:
            data = decode_strict_file(head)
            calls: Sequence[Any]
            if len(lines) > LONG_VECTOR:  # each line checked by the schema's pass over them
                calls, objects = read_lazily(lines, _read_line), True
            else:
                calls = [_read_line(0, line) for line in lines]
                objects = all(isinstance(call, dict) for call in calls)
        except DecodeError:
            pass  # the whole text's parse names the fault with its real position
        else:
            if isinstance(data, dict) and data.get("calls") == [] and objects:
                data["calls"] = calls
                return data, lines
    return decode_strict_file(raw), None


def _read_line(_index: int, line: bytes) -> Any:
    return decode_strict_file(line, max_depth=MAX_DEPTH - 2)


def _split_lines(raw: bytes) -> tuple[bytes, Lines] | None:
    """The text before the calls (closed as a document with no calls) and one line per call,
    if the calls array opens the last top-level member, holds one call per line and then
    closes the document. A JSON string cannot hold a raw newline, so each line then holds
    exactly one call, and parsing the pieces is parsing the file."""
    start = raw.rfind(_CALLS_OPEN)
    if start < 0:
        return None
    rows = Lines(raw)  # every row after the opening, blanks at the end dropped, each stripped
    pos, end = start + len(_CALLS_OPEN), len(raw)
    while pos <= end:
        stop = raw.find(b"\n", pos)
        if stop < 0:
            stop = end
        first, last = _stripped(raw, pos, stop)
        rows.add(first, last)
        pos = stop + 1
    count = len(rows)
    while count and not rows[count - 1]:
        count -= 1
    if count < 3 or rows[count - 2] != b"]" or rows[count - 1] != b"}":
        return None
    lines = Lines(raw)
    for index in range(count - 2):
        line = rows[index]
        if line.endswith(b",") != (index < count - 3):
            return None
        first, last = rows.span(index)
        lines.add(first, last - 1 if index < count - 3 else last)
    return raw[:start] + b'"calls": []\n}\n', lines


def _stripped(data: bytes, first: int, last: int) -> tuple[int, int]:
    """``data[first:last]`` less the ASCII whitespace at either end, as offsets."""
    row = data[first:last]
    return first + len(row) - len(row.lstrip()), first + len(row.rstrip())


def load_vector(path: str | Path) -> Vector:
    """Read one vector file; raise :class:`VectorError` naming the file on any fault."""
    return read_document(path).vector()


def iter_vector_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Every ``*.json`` file named, or found under the named directories: the one walk of a
    suite, for ``run`` and ``validate`` alike.

    Directories are listed sorted by name, so files come in a stable order. A symlink to a
    directory is followed, once: a directory reached again (a link to an ancestor, a second
    link) is not walked twice, and a file reached twice (``vectors vectors/ties/x.json``, or
    through two links) is yielded once. Raises :class:`VectorError` naming the path for a
    path that does not exist, a directory that cannot be listed, or a link that cannot be
    followed (a link to itself, say): a suite that cannot be read whole is not run in part.
    """
    seen_files: set[tuple[int, int]] = set()
    seen_dirs: set[tuple[int, int]] = set()
    for raw in paths:
        path = Path(raw)
        try:
            status = path.stat()
        except OSError as error:
            if not path.is_symlink() and not path.exists():
                raise VectorError(path, "", "no such file or directory") from None
            raise VectorError(path, "", f"cannot read: {error.strerror or error}") from None
        if stat_module.S_ISDIR(status.st_mode):
            yield from _walk(path, seen_dirs, seen_files)
        elif _first_time((status.st_dev, status.st_ino), seen_files):
            yield path


def _walk(
    top: Path, seen_dirs: set[tuple[int, int]], seen_files: set[tuple[int, int]]
) -> Iterator[Path]:
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            status = directory.stat()
            if not _first_time((status.st_dev, status.st_ino), seen_dirs):
                continue
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            raise VectorError(
                directory, "", f"cannot read the directory: {error.strerror or error}"
            ) from None
        subdirectories = []
        for entry in entries:
            try:
                status = entry.stat()  # follows a symlink
            except OSError as error:
                raise VectorError(
                    entry.path, "", f"cannot follow: {error.strerror or error}"
                ) from None
            if stat_module.S_ISDIR(status.st_mode):
                subdirectories.append(Path(entry.path))
            elif entry.name.endswith(".json") and _first_time(
                (status.st_dev, status.st_ino), seen_files
            ):
                yield Path(entry.path)  # not a regular file: refused when its head is read
        stack.extend(reversed(subdirectories))  # visited in name order


def _first_time(identity: tuple[int, int], seen: set[tuple[int, int]]) -> bool:
    if identity in seen:
        return False
    seen.add(identity)
    return True


class IdRegistry:
    """Where each vector id was first seen: the one duplicate-id check."""

    def __init__(self) -> None:
        self._first: dict[str, Path | None] = {}

    def problem(self, vector_id: str, path: Path | None) -> VectorError | None:
        """The duplicate-id problem for ``vector_id`` read from ``path``, or None (recorded)."""
        if vector_id in self._first:
            first = self._first[vector_id]
            if first is not None and path is not None and first.resolve() == path.resolve():
                return None  # one file named twice is one vector
            return VectorError(path, "/id", f"duplicate id {vector_id!r}, also in {first}")
        self._first[vector_id] = path
        return None


def iter_vectors(paths: Iterable[str | Path]) -> Iterator[Vector]:
    """Every vector under ``paths``, one at a time in file order; raise :class:`VectorError`
    on the first file that is not a usable vector (JSON, schema) or repeats an id.

    Memory is one vector's, whatever the size of the suite.
    """
    ids = IdRegistry()
    for path in iter_vector_files(paths):
        if is_protocol_check_file(path):
            continue  # read by conformance.suite.protocol_checks
        vector = read_document(path).vector()
        duplicate = ids.problem(vector.id, path)
        if duplicate is not None:
            raise duplicate
        yield vector


#: The format of a protocol check (:mod:`conformance.suite.protocol_checks`), which shares the suite
#: directory with the vectors: its opening bytes name it.
_CHECK_FORMAT = re.compile(rb'"format"\s*:\s*"snapkv-protocol-check/1"')


def is_protocol_check_file(path: str | Path) -> bool:
    """Whether ``path`` is a protocol check rather than a vector (its format says so)."""
    try:
        head = read_suite_file(path, head=4096)
    except InputError:
        return False  # read as a vector, which says why it cannot be
    return is_protocol_check_head(head)


def is_protocol_check_head(head: bytes) -> bool:
    """Whether a file opening with ``head`` (its first 4 KiB or so) is a protocol check."""
    return _CHECK_FORMAT.search(head) is not None


def load_suite(paths: Sequence[str | Path]) -> list[Vector]:
    """Load every vector under ``paths``, ordered by id; raise on the first bad file."""
    return sorted(iter_vectors(paths), key=lambda vector: vector.id)
