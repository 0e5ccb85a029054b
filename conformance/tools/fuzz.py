"""Differential fuzzing: random scenarios on the reference and on a port, shrunk to a vector.

:func:`fuzz` lets hypothesis draw scenarios (:func:`conformance.tools.scenarios.play`) round by
round, sends each round to the port through one persistent adapter, and compares every answer
with the reference's: success or refusal, the error kind, and the victims (not messages, not
scores: only what a vector can expect). A scenario stops at the first round that differs, so
hypothesis never draws past a difference and its shrinker has no tail to trim. The scenario is
then shrunk to a minimal one, and :func:`difference_vector` turns it into a schema-valid vector
whose expectations are the reference's answers, so that ``snapkv-conformance run`` fails on the
port for the same reason.

Runs are deterministic for a given seed and adapter, wherever and however the kit is installed:
the random source is seeded, hypothesis draws none of the constants it would otherwise read from
the source of every module imported from outside site-packages (:func:`hypothesis_storage`), and
the example database is off unless one is named (:func:`example_database`: a directory, which a
CI cache can carry from run to run and which merges by copying). Nothing is written in the
working directory: hypothesis's own caches go to a temporary directory.
A campaign spread over N CI jobs gives each its shard of the search (:func:`shard_seed`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir, storage_directory
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.errors import Flaky

from conformance import mutants
from conformance.adapter.server import PolicyFactory
from conformance.explain.play import compose
from conformance.policy.reference import new_policy
from conformance.report.outputs import write_text
from conformance.spec.errors import KitError
from conformance.spec.inputs import InputError, read_input
from conformance.spec.protocol import dumps, holds_text
from conformance.suite.vectors import DOUBLE_ROUNDING, Vector, dumps_vector
from conformance.tools.generate.builders import Draft, Planned
from conformance.tools.generate.generator import realize
from conformance.tools.scenarios import Scenario, play, scenario_of
from conformance.transport.failures import AdapterFailure

DEFAULT_MAX_EXAMPLES = 400
#: Scenarios run to shrink a difference once found; the smallest failing one seen is kept.
DEFAULT_MAX_SHRINKS = 500
FUZZ_TAG = "fuzz"


class Target(Protocol):
    """What the fuzzer needs of an adapter connection (:mod:`conformance.transport.session`
    provides it)."""

    def exchange(self, requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]: ...

    def restart(self) -> Any: ...


@dataclass(frozen=True)
class Difference:
    """The first answer in a scenario where the port and the reference part ways."""

    call_index: int
    expected: str  # the reference's answer, summarised
    actual: str  # the port's answer, summarised

    def describe(self, scenario: Scenario) -> str:
        op = scenario.calls[self.call_index]["op"]
        return (
            f"at calls[{self.call_index}] ({op}) the reference answers {self.expected} "
            f"but the port answered {self.actual}"
        )


@dataclass(frozen=True)
class Finding:
    """A shrunk failing scenario and how it was found."""

    scenario: Scenario
    difference: Difference
    examples_to_find: int  # scenarios run up to and including the first failing one
    shrink_attempts: int  # scenarios run after that while shrinking


@dataclass(frozen=True)
class FuzzResult:
    examples: int  # scenarios run in all, shrinking included
    finding: Finding | None


class _DifferenceFound(Exception):
    """Raised inside the hypothesis test to mark a scenario as failing (and shrink it)."""


class _ShrinkBudgetSpent(BaseException):
    """Stops hypothesis once the shrink budget is spent (a BaseException, so it is not shrunk)."""


class AdapterLost(BaseException):
    """The adapter could not be restarted: fuzzing cannot go on.

    Derived from BaseException on purpose: hypothesis treats every ``Exception`` raised by a
    test as a failure to shrink, and a port that cannot start is not a finding.
    """


class NondeterministicAdapter(KitError):
    """The same scenario failed once and passed when replayed: the port is not deterministic."""


def summarise(response: dict[str, Any]) -> str:
    """The part of a response the fuzzer compares, as a short text."""
    if response.get("ok") is True:
        if "victims" in response:
            return f"victims {json.dumps(response['victims'])}"
        return "ok"
    if response.get("ok") is False and isinstance(response.get("error"), dict):
        return f"refusal {response['error'].get('kind')!r}"
    return f"malformed response {json.dumps(response)[:120]}"


def compare(
    expected: Sequence[dict[str, Any]], actual: Sequence[dict[str, Any]], offset: int = 0
) -> Difference | None:
    """The first answer that differs in outcome, error kind or victims, if any.

    ``expected[i]`` and ``actual[i]`` answer call ``offset + i`` of the scenario.
    """
    for index, wanted in enumerate(expected):
        got = actual[index] if index < len(actual) else {}
        if summarise(wanted) != summarise(got):
            return Difference(offset + index, summarise(wanted), summarise(got))
    return None


def exchange_and_compare(
    target: Target,
    calls: Sequence[dict[str, Any]],
    expected: Sequence[dict[str, Any]],
    offset: int = 0,
) -> Difference | None:
    """Send ``calls`` (calls ``offset`` onward of a scenario) and compare the answers.

    An adapter that crashes, hangs or breaks the protocol is a difference at the call it failed
    on; the adapter is then restarted.
    """

    try:
        actual = target.exchange([dict(call) for call in calls])
    except AdapterFailure as failure:
        _restart(target)
        # An extra answer to an earlier scenario's request (failure.earlier) shows up here
        # too; it is blamed on this exchange's first call, and hypothesis then reports the
        # adapter as nondeterministic when the replay passes.
        index = 0 if failure.earlier else max(0, min(failure.call_index, len(calls) - 1))
        return Difference(
            offset + index, summarise(expected[index]), f"{failure.kind} ({failure.detail})"
        )
    return compare(expected, actual, offset)


def differential(scenario: Scenario, target: Target) -> Difference | None:
    """Run a whole scenario on ``target`` in one exchange and compare with the reference."""
    return exchange_and_compare(target, scenario.calls, scenario.expected)


def _restart(target: Target) -> None:
    try:
        target.restart()
    except Exception as error:
        raise AdapterLost(f"the adapter could not be restarted: {error}") from error


def _size(scenario: Scenario) -> tuple[int, int]:
    """How big a failing scenario is, to keep the smallest seen when shrinking is cut short."""
    return len(scenario.calls), len(json.dumps(scenario.calls))


# -- campaigns: hypothesis's files, the example database, shards -----------------------------


@contextlib.contextmanager
def hypothesis_storage() -> Iterator[None]:
    """Run hypothesis with its home directory (where it caches what it learns of the code,
    ``.hypothesis/`` in the working directory by default) in a temporary directory, removed
    afterwards, so that fuzzing leaves nothing behind but what it was told to write; and
    without the constants hypothesis mixes into its draws from the source of each "local"
    module imported (any outside site-packages: a checkout's, an editable install's, the
    caller's own). With them, one seed draws other sessions in a checkout than from a wheel,
    after any edit to any such module, and after a test process has imported other modules."""

    previous = storage_directory(intent_to_write=False).home_directory
    with tempfile.TemporaryDirectory(prefix="snapkv-fuzz-") as home, _no_local_constants():
        set_hypothesis_home_dir(home)
        try:
            yield
        finally:
            set_hypothesis_home_dir(previous)


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    # Hypothesis has no setting for this: its provider asks one module-level function for the
    # local constants, and caches what it drew from them. A hypothesis without the feature
    # has neither, and draws as the seed alone decides anyway.
    from hypothesis.internal.conjecture import providers

    found = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    made = getattr(providers, "Constants", None)
    if found is None or cache is None or made is None:
        yield
        return
    cache.cache.clear()
    providers._get_local_constants = made  # an empty set of constants of each kind
    try:
        yield
    finally:
        providers._get_local_constants = found
        cache.cache.clear()


class CampaignDatabase(ExampleDatabase):
    """Hypothesis's example database in the directory ``path`` (created if missing):
    every failing example found is kept there, and a later run replays those first. One file
    per example, named by hashes, so the databases of several machines merge by copying their
    directories into one. Saves stop once a run is stopping: the example drawn only to stop
    hypothesis is no finding.

    Every entry is read as any input file is (:func:`conformance.spec.inputs.read_input`): the
    directory is checked when the database is made, and :class:`InputError` names the first
    entry that is not a regular file of at most
    :data:`~conformance.spec.inputs.TEXT_FILE_LIMIT` bytes (a FIFO would hang the run, a link
    to ``/dev/zero`` would be read without end); an entry that turns bad later is skipped."""

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.directory = DirectoryBasedExampleDatabase(str(path))
        self.stopping = False
        for entry in _entries(self.path):
            read_input(entry, what="fuzz database entry")

    def fetch(self, key: bytes) -> Iterable[bytes]:
        # Hypothesis's own fetch opens each file with a blocking read of the whole of it.
        where = self.directory._key_path(key)
        for entry in _entries(where):
            try:
                yield read_input(entry, what="fuzz database entry")
            except InputError:
                continue

    def save(self, key: bytes, value: bytes) -> None:
        if not self.stopping:
            self.directory.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self.directory.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if not self.stopping:
            self.directory.move(src, dest, value)


def _entries(directory: Path) -> list[Path]:
    """The entries of a database directory, its subdirectories' (one per key) included; none
    when it does not exist yet. Raises :class:`InputError` for one that cannot be listed."""
    if not directory.is_dir():
        return []
    found = []
    try:
        for entry in sorted(directory.iterdir()):
            if entry.is_dir():  # one per key, holding its examples
                found += [item for item in sorted(entry.iterdir()) if not item.is_dir()]
            else:
                found.append(entry)
    except OSError as error:
        raise InputError(directory, f"cannot read: {error.strerror or error}") from None
    return found


def example_database(path: str | Path | None) -> CampaignDatabase | None:
    """The run's example database: the directory ``path``, or none at all."""
    return CampaignDatabase(path) if path is not None else None


def shard_seed(seed: int, shard: tuple[int, int] | None) -> int:
    """The random seed shard ``I/N`` of a campaign with seed ``seed`` searches with:
    ``seed * N + I - 1``. The N shards of one seed search with N different seeds (and no two
    campaign seeds share one), so N jobs explore N different parts of the space; shard 1/1 is
    the campaign seed itself."""
    if shard is None:
        return seed
    index, count = shard
    return seed * count + index - 1


def search_settings(max_examples: int, database: CampaignDatabase | None) -> settings:
    """Hypothesis's settings for a fuzzing run: quiet, no deadline, no health checks, and
    stored failures replayed first when there is a database."""
    phases = (Phase.generate, Phase.shrink)
    return settings(
        max_examples=max_examples,
        database=database,
        deadline=None,
        derandomize=False,
        phases=(Phase.reuse, *phases) if database is not None else phases,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )


def seeded(
    function: Callable[[st.DataObject], None], seed: int, run_settings: settings
) -> Callable[[], None]:
    """``function`` as a hypothesis test drawing from ``st.data()``, its random source seeded
    with ``seed``, run under ``run_settings``. (``@seed`` turns the example database off, so
    it goes under ``@given`` and the settings over both.)"""
    test: Callable[[], None] = run_settings(given(st.data())(hypothesis_seed(seed)(function)))
    return test


class _Search:
    """The state of one fuzzing run, shared by the hypothesis test and :func:`fuzz`."""

    def __init__(
        self,
        target: Target,
        max_examples: int,
        max_shrinks: int,
        progress: Progress | None,
        reference: PolicyFactory = new_policy,
        database: CampaignDatabase | None = None,
    ) -> None:
        self.target = target
        self.max_examples = max_examples
        self.reference = reference
        self.max_shrinks = max_shrinks
        self.progress = progress
        self.database = database
        self.run = 0
        self.found_at = 0
        self.best: tuple[Scenario, Difference] | None = None

    def check(self, data: st.DataObject) -> None:
        try:
            self._check(data)
        except (_ShrinkBudgetSpent, AdapterLost):
            if self.database is not None:
                self.database.stopping = True  # a stop, not a finding: nothing to keep
            raise

    def _check(self, data: st.DataObject) -> None:
        # Hypothesis may draw a few more examples than max_examples (it does not count some);
        # stopping here keeps "up to N examples" true.
        over_budget = not self.found_at and self.run >= self.max_examples
        spent = over_budget or (self.found_at and self.run - self.found_at >= self.max_shrinks)
        self.run += not over_budget  # a scenario drawn only to stop is not counted
        found: list[Difference] = []

        def observe(calls: Sequence[dict[str, Any]], expected: Sequence[dict[str, Any]]) -> bool:
            offset = len(scenario_calls)
            scenario_calls.extend(calls)
            difference = exchange_and_compare(self.target, calls, expected, offset)
            if difference is not None:
                found.append(difference)
            return difference is not None

        scenario_calls: list[dict[str, Any]] = []
        scenario = play(cast(st.DrawFn, data.draw), observe, self.reference)
        if spent:
            # Stop only after drawing as usual: hypothesis takes a run that draws less than
            # an earlier run of the same choices for a flaky strategy.
            raise _ShrinkBudgetSpent
        difference = found[0] if found else None
        if difference is not None:
            self.found_at = self.found_at or self.run
            if self.best is None or _size(scenario) <= _size(self.best[0]):
                self.best = (scenario, difference)
        if self.progress is not None:
            shrinks = self.run - self.found_at if self.found_at else None
            self.progress(self.found_at or self.run, shrinks)
        if difference is not None:
            raise _DifferenceFound(difference.describe(scenario))

    def result(self) -> FuzzResult:
        if self.best is None:
            return FuzzResult(self.run, None)
        scenario, difference = self.best
        shrinks = self.run - self.found_at
        return FuzzResult(self.run, Finding(scenario, difference, self.found_at, shrinks))


#: ``progress(examples, shrink_attempts)``; ``shrink_attempts`` is None until a difference.
Progress = Callable[[int, int | None], None]


def fuzz(
    target: Target,
    *,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    seed: int = 0,
    max_shrinks: int = DEFAULT_MAX_SHRINKS,
    progress: Progress | None = None,
    reference: PolicyFactory = new_policy,
    database: str | Path | None = None,
) -> FuzzResult:
    """Fuzz ``target`` (an adapter already started) against the reference; shrink and return
    the first difference found.

    At most ``max_examples`` scenarios are generated; once one differs, at most
    ``max_shrinks`` more are run to shrink it, and the smallest failing one is kept. Raises
    :class:`AdapterLost` when the adapter cannot be restarted after a failure and
    :class:`NondeterministicAdapter` when a failing scenario passes on replay.

    ``reference`` answers the scenarios instead of the reference policy: a catalogued mistake
    the port is known to make (see :func:`accepting`), so that the next, different mistake is
    found rather than the known one again. ``database`` is a directory of hypothesis's example
    database (:func:`example_database`): failures kept there by earlier runs are tried first,
    and this run's are added.
    """
    examples = example_database(database)
    search = _Search(target, max_examples, max_shrinks, progress, reference, examples)

    # The function's name is part of hypothesis's database key: vectors, not protocol lines.
    def vector_scenarios(data: st.DataObject) -> None:
        search.check(data)

    try:
        with hypothesis_storage():
            seeded(vector_scenarios, seed, search_settings(max_examples, examples))()
    except (_DifferenceFound, _ShrinkBudgetSpent):
        pass
    except Flaky as error:
        raise NondeterministicAdapter(str(error)) from None
    result = search.result()
    if result.finding is not None:
        finding = _without_leading_new(result.finding, target, reference)
        finding = _without_needless_calls(finding, target, reference)
        result = FuzzResult(result.examples, finding)
    return result


def accepting(names: Sequence[str]) -> PolicyFactory:
    """The policy with the catalogued mistakes ``names`` made at once, as a factory; raise
    ValueError for an unknown name or mistakes that override the same step of the policy."""

    try:
        chosen = [mutants.lookup(name) for name in dict.fromkeys(names)]
    except KeyError as error:
        raise ValueError(error.args[0]) from None
    policy = compose(chosen)
    if policy is None:
        raise ValueError(
            f"the mistakes {', '.join(names)} change the same step of the policy, so they "
            "cannot be accepted together"
        )
    return policy


def _without_leading_new(
    finding: Finding, target: Target, reference: PolicyFactory = new_policy
) -> Finding:
    """Drop constructions that an accepted ``new`` right after them makes pointless.

    The first ``new`` is not an action hypothesis can delete, so a difference that needs other
    parameters shrinks to two constructions in a row; the first one only distracts a reader.
    """
    while True:
        calls, expected = finding.scenario.calls, finding.scenario.expected
        if len(calls) < 2 or calls[1]["op"] != "new" or expected[1].get("ok") is not True:
            return finding
        shorter = scenario_of(calls[1:], reference)
        difference = differential(shorter, target)
        if difference is None:
            return finding
        finding = Finding(
            shorter, difference, finding.examples_to_find, finding.shrink_attempts + 1
        )


#: Calls the last shrinking pass tries to drop, at most (each try replays the scenario).
MAX_CALL_DROPS = 60


def _without_needless_calls(
    finding: Finding, target: Target, reference: PolicyFactory = new_policy
) -> Finding:
    """Drop each call (but the first ``new``) whose removal keeps a difference, last to first,
    cutting the scenario after its first difference each time.

    Hypothesis shrinks the drawn actions, and a call depends on the state the calls before it
    left; once it is done the calls are plain requests that can go one at a time, the
    reference answering what remains (a call left out of order is then refused, as a vector
    would expect). Tries at most :data:`MAX_CALL_DROPS` removals."""
    index = finding.difference.call_index - 1
    tries = 0
    while index >= 1 and tries < MAX_CALL_DROPS:
        calls = finding.scenario.calls[: finding.difference.call_index + 1]
        shorter = scenario_of(calls[:index] + calls[index + 1 :], reference)
        difference = differential(shorter, target)
        tries += 1
        if difference is not None:
            kept = scenario_of(shorter.calls[: difference.call_index + 1], reference)
            finding = Finding(kept, difference, finding.examples_to_find, finding.shrink_attempts)
        index -= 1
    return Finding(
        finding.scenario,
        finding.difference,
        finding.examples_to_find,
        finding.shrink_attempts + tries,
    )


# -- saving a finding as a vector --------------------------------------------------------------

#: The "Catches:" half of a finding's description, as the findings builder also writes it.
CATCHES = "the difference it was found for, should it come back."


def difference_vector(finding: Finding, port: str, seed: int) -> Vector:
    """The vector that pins ``finding``: its calls up to the first difference, id
    ``fuzz/<hash of the calls>``, expectations filled by the generator from the reference."""

    scenario, difference = finding.scenario, finding.difference
    last = difference.call_index + 1
    # Weights kept as their text (not float32 values, or spelled other than the shortest way)
    # are valid in a call that must succeed only under this tag (SPEC.md §4.3).
    texts = any(holds_text(call) for call in scenario.calls[:last])
    draft = Draft(
        "fuzz/" + _digest(scenario.calls[:last]),
        pins=(
            f"Found by snapkv-conformance fuzz (seed {seed}) against {port}: "
            f"{difference.describe(scenario)}."
        ),
        catches=CATCHES,
        tags=(FUZZ_TAG, DOUBLE_ROUNDING) if texts else (FUZZ_TAG,),
        params=scenario.params,
        seed=scenario.seed,
    )
    for call, answer in zip(scenario.calls[1:last], scenario.expected[1:last], strict=True):
        refuse = None if answer.get("ok") is True else answer["error"]["kind"]
        draft.calls.append(Planned(dict(call), refuse))
    return realize(draft)


def _digest(calls: Sequence[dict[str, Any]]) -> str:
    text = "\n".join(dumps(dict(sorted(call.items()))) for call in calls)  # weights as written
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def save_vector(vector: Vector, directory: str | Path) -> Path:
    """Write ``vector`` as ``<directory>/<id>.json`` in canonical form; return the path."""

    path = Path(directory) / f"{vector.id}.json"
    write_text(path, dumps_vector(vector))
    return path


def in_the_way(directory: str | Path, vector: Vector) -> Path | None:
    """The path that stops ``vector`` being saved under ``directory``: the first of its
    parent directories that exists and is not a directory (``<directory>/fuzz`` a file)."""
    path = Path(directory)
    for part in Path(vector.id).parent.parts:
        path = path / part
        if path.exists() and not path.is_dir():
            return path
    return None
