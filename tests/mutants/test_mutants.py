"""The mutant catalogue and the kill matrix.

Every catalogued mutant must be a real difference from the reference (its witness scenario is
answered differently), the committed suite must kill every one of them, and for each one at
least one killing vector must say, in its description, which mistake it guards against. The
mistakes argued equivalent to the reference (``EQUIVALENT``) are each written here as a policy
and shown, by hypothesis, to answer every drawn scenario exactly as the reference does.
"""

from __future__ import annotations

import heapq
import json
import random
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from conformance.adapter.replay import replay
from conformance.mutants import CATALOGUE, EQUIVALENT, FAMILIES, lookup, names
from conformance.mutants._base import outcome
from conformance.policy.reference import SnapKV, new_policy
from conformance.tools.scenarios import Scenario, scenarios
from tests.support.paths import ROOT
from tests.support.runner_support import expected_outcomes

KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def test_the_catalogue_has_at_least_25_distinct_kebab_case_mutants():
    assert len(CATALOGUE) >= 25
    assert len(set(names())) == len(CATALOGUE)
    assert all(KEBAB.match(name) for name in names())


@pytest.mark.parametrize("mutant", CATALOGUE, ids=lambda m: m.name)
def test_each_entry_names_its_rule_origin_and_keywords(mutant):
    assert mutant.family in FAMILIES
    assert mutant.rule.startswith("§"), "the rule quotes a SPEC.md section"
    assert mutant.origin and mutant.doc
    assert mutant.keywords and all(keyword.strip() for keyword in mutant.keywords)


WITNESSED = [mutant for mutant in CATALOGUE if mutant.witness is not None]


@pytest.mark.parametrize("mutant", WITNESSED, ids=lambda m: m.name)
def test_each_mutant_differs_from_the_reference_on_its_witness(mutant):
    requests = mutant.witness.requests()
    expected = [outcome(answer) for answer in replay(requests, new_policy)]
    actual = [outcome(answer) for answer in replay(requests, mutant.factory)]
    assert actual != expected


def test_the_brief_s_mistakes_are_all_catalogued():
    required = {
        "ties-to-higher-position",
        "victims-in-rank-order",
        "float32-accumulation",
        "pairwise-summation",
        "reversed-slot-order",
        "chronological-order",
        "kahan-summation",
        "running-sum",
        "null-advances-ring",
        "null-writes-zeros",
        "stale-history-on-reuse",
        "pool-over-position-numbers",
        "forward-only-pooling",
        "wrap-around-pooling",
        "average-pooling",
        "recent-excluded-from-pooling",
        "recent-made-candidates",
        "recent-window-one-short",
        "recent-window-one-long",
        "one-victim-per-evict",
        "even-kernel-accepted",
        "zero-obs-window-accepted",
        "recent-window-equal-budget-accepted",
        "negative-weights-accepted",
        "refused-step-still-admits",
        "gaps-refused",
        "positions-truncated-16-bit",
        "attention-judged-before-position",
        "wrong-length-bad-request",
    }
    assert required <= set(names())


def test_dropped_equivalent_mutants_are_argued_and_not_catalogued():
    assert {name for name, _ in EQUIVALENT} == set(EQUIVALENT_POLICIES) | {
        "integral-float-params-accepted"
    }
    assert not {name for name, _ in EQUIVALENT} & set(names())


# Each argued-equivalent mistake as a policy. Where an argument says two formulations agree,
# hypothesis looks for a scenario on which they do not.


class Float64History(SnapKV):
    """Stores each weight as the float64 numpy makes of it (widened from numpy's float32)."""

    def check_attention(self, attn):
        weights = super().check_attention(attn)
        if weights is None:
            return None
        return [float(np.float64(np.float32(w))) for w in attn]


class SumFromNegativeZero(SnapKV):
    def window_sums(self):
        sums = []
        for ring in self.rings:
            total = -0.0
            for slot in range(self.params.obsWindow if self.params.obsWindow < 64 else 0):
                total += ring.values[slot] if slot < len(ring.values) else 0.0
            for weight in ring.values if self.params.obsWindow >= 64 else ():
                total += weight
            sums.append(total)
        return sums


class RecentByAdmissionOrder(SnapKV):
    """Protects the recentWindow most recently *admitted* kept entries, by admission count."""

    def __init__(self, params, seed=0):
        self.admitted: dict[int, int] = {}
        super().__init__(params, seed)

    def admit(self, position):
        super().admit(position)
        self.admitted[position] = len(self.admitted)

    def select(self, pooled, count):
        by_admission = sorted(range(len(self.kept)), key=lambda i: self.admitted[self.kept[i]])
        recent = set(by_admission[len(by_admission) - self.params.recentWindow :])
        if not self.params.recentWindow:
            recent = set()
        candidates = [i for i in range(len(self.kept)) if i not in recent]
        return heapq.nsmallest(count, candidates, key=lambda i: (pooled[i], i))


class SortByPosition(SnapKV):
    """Ties broken by position (not index), victims sorted by index (not position)."""

    def select(self, pooled, count):
        candidates = range(self.candidate_count())
        return heapq.nsmallest(count, candidates, key=lambda i: (pooled[i], self.kept[i]))

    def order_victims(self, victims):
        return [self.kept[i] for i in sorted(victims)]


class FullSortSelection(SnapKV):
    """Sorts every candidate by (pooled, position) with numpy's lexsort and takes k."""

    def select(self, pooled, count):
        candidates = self.candidate_count()
        scores = np.array(pooled[:candidates], dtype=np.float64)
        positions = np.array(self.kept[:candidates], dtype=np.int64)
        return np.lexsort((positions, scores))[:count].tolist()


class PoolingSplitIntoHalves(SnapKV):
    """max(max of the left half with the centre, max of the right half), by direct scans."""

    def pool(self, sums):
        radius = (self.params.poolKernel - 1) // 2
        pooled = []
        for i in range(len(sums)):
            left = max(sums[max(0, i - radius) : i + 1])
            right = max(sums[i : min(len(sums), i + radius + 1)])
            pooled.append(max(right, left))
        return pooled


class SeedUsed(SnapKV):
    """Seeds a generator from the seed and draws from it at every step."""

    def __init__(self, params, seed=0):
        super().__init__(params, seed)
        self.rng = random.Random(seed if isinstance(seed, int) else 0)

    def step(self, pos, attn):
        self.rng.random()
        super().step(pos, attn)


EQUIVALENT_POLICIES = {
    "float64-history": Float64History,
    "sum-from-negative-zero": SumFromNegativeZero,
    "recent-by-admission-order": RecentByAdmissionOrder,
    "sort-by-index-not-position": SortByPosition,
    "full-sort-vs-partial-selection": FullSortSelection,
    "pooling-split-into-halves": PoolingSplitIntoHalves,
    "seed-used": SeedUsed,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EQUIVALENT_POLICIES))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_an_argued_equivalent_mistake_answers_every_scenario_like_the_reference(
    name: str, scenario: Scenario
) -> None:
    policy = EQUIVALENT_POLICIES[name]
    requests = list(scenario.calls)
    expected = [outcome(answer) for answer in scenario.expected]
    assert [outcome(answer) for answer in replay(requests, policy)] == expected


def test_no_vector_sends_an_integral_value_written_as_a_float():
    """The argument for integral-float-params-accepted: no vector exercises the latitude."""
    from conformance.spec import resources
    from conformance.suite.vectors import load_suite

    for vector in load_suite([resources.suite_dir()]):
        for call in vector.calls:
            request = call.request
            values = [request.get("seed"), request.get("pos")]
            if isinstance(request.get("params"), dict):
                values += list(request["params"].values())
            floats = [v for v in values if type(v) is float and v == int(v)]
            assert floats == [], (vector.id, request)


def test_lookup_of_an_unknown_name_lists_the_catalogue():
    with pytest.raises(KeyError, match="ties-to-higher-position"):
        lookup("no-such-mutant")


def _adapter(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "conformance", "adapter", *args],
        input=stdin,
        capture_output=True,
        timeout=30,
        check=False,
    )


def test_adapter_serves_a_mutant_under_its_own_name():
    requests = (
        b'{"id":1,"op":"hello","protocol":1}\n'
        b'{"id":2,"op":"new","params":{"budget":1,"recentWindow":0,"obsWindow":1,'
        b'"poolKernel":1},"seed":0}\n'
        b'{"id":3,"op":"step","pos":0,"attn":null}\n'
        b'{"id":4,"op":"step","pos":1,"attn":null}\n'
        b'{"id":5,"op":"evict"}\n{"id":6,"op":"bye"}\n'
    )
    done = _adapter("--mutant", "ties-to-higher-position", stdin=requests)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert b'"name":"mutant:ties-to-higher-position"' in lines[0]
    assert lines[4] == b'{"id":5,"ok":true,"victims":[1]}'  # the reference evicts 0


def test_adapter_refuses_an_unknown_mutant_with_the_list_of_names():
    done = _adapter("--mutant", "no-such-mutant")
    assert done.returncode == 2
    assert b"unknown mutant 'no-such-mutant'" in done.stderr
    assert b"running-sum" in done.stderr


# -- the kill matrix ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def witness_suite():
    """Every witness as a vector, expectations filled in by the reference."""
    from conformance.tools.generate.builders.mutant_traps import trap
    from conformance.tools.generate.generator import realize

    return [realize(trap(mutant, ("ties",))) for mutant in WITNESSED]


def test_each_witness_vector_kills_its_mutant_through_the_checker(witness_suite):
    from conformance.explain.kill_matrix import kill_matrix

    matrix = kill_matrix(witness_suite, WITNESSED)
    by_id = {vector.id: vector for vector in witness_suite}
    for row in matrix.rows:
        # The checker's verdict agrees with a plain comparison of the mutant's answers with
        # the expectations the reference wrote into the witness vector.
        own = by_id[f"mutant-traps/{row.mutant.name}"]
        answers = replay([call.request for call in own.calls], row.mutant.factory)
        assert [outcome(answer) for answer in answers] != expected_outcomes(own)
        assert own.id in row.killers, row.mutant.name


def test_the_reference_passes_every_witness_vector(witness_suite):
    from conformance.judge.checker import judge

    for vector in witness_suite:
        answers = replay([call.request for call in vector.calls], new_policy)
        assert judge(vector, answers).passed, vector.id


def test_the_runner_fails_a_mutant_served_by_a_real_adapter_process(witness_suite, tmp_path):
    from conformance.suite.vectors import dumps_vector

    chosen = ("ties-to-higher-position", "running-sum", "null-advances-ring")
    for vector in witness_suite:
        if vector.id.rsplit("/", 1)[-1] in chosen:
            path = tmp_path / f"{vector.id.replace('/', '__')}.json"
            path.write_text(dumps_vector(vector), encoding="utf-8")
    adapter = f"{sys.executable} -m conformance adapter --mutant running-sum"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--adapter", adapter, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "mutant:running-sum" in done.stdout + done.stderr
    assert "mutant-traps/running-sum" in done.stdout
    assert done.stdout.rstrip().endswith("2 passed, 1 failed")


# -- the committed suite -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def suite_matrix():
    """The kill matrix of the whole catalogue over the committed suite, as the shipped outcomes
    record it (tests/explain/test_triage.py recomputes them, and checks they are current)."""
    from conformance.explain.kill_matrix import shipped_matrix
    from conformance.spec import resources
    from conformance.suite.vectors import load_suite

    return shipped_matrix(load_suite([resources.suite_dir()]), CATALOGUE)


@pytest.mark.numpy_dispatch
def test_the_shipped_matrix_is_the_replayed_one_on_a_sample():
    """The shipped matrix agrees with judging replays (the whole catalogue on a sample of the
    suite; the drift check of the shipped outcomes covers the rest)."""
    from conformance.explain.kill_matrix import kill_matrix, shipped_matrix
    from conformance.spec import resources
    from conformance.suite.vectors import load_suite

    sample = [v for v in load_suite([resources.suite_dir()]) if len(v.calls) < 40][::3]
    replayed = kill_matrix(sample, CATALOGUE)
    shipped = shipped_matrix(sample, CATALOGUE)
    for a, b in zip(replayed.rows, shipped.rows, strict=True):
        assert set(a.killers) == set(b.killers), a.mutant.name
        assert a.guards == b.guards


def test_the_committed_suite_kills_every_mutant(suite_matrix):
    assert [m.name for m in suite_matrix.survivors] == []


def test_every_mutant_is_killed_by_a_vector_whose_description_names_the_mistake(suite_matrix):
    """A porter who made the mistake can find the vector that explains it."""
    assert [m.name for m in suite_matrix.unguarded] == []
    by_id = {vector.id: vector for vector in suite_matrix.vectors}
    for row in suite_matrix.rows:
        # Rechecked without the matrix: the guard's catches text names the mistake, and the
        # mutant's own answers differ from what the file expects.
        guard = by_id[row.guards[0]]
        catches = guard.description.partition("Catches:")[2].lower()
        words = (row.mutant.name, *row.mutant.keywords)
        assert any(word.lower() in catches for word in words), (row.mutant.name, guard.id)
        answers = replay([call.request for call in guard.calls], row.mutant.factory)
        assert [outcome(answer) for answer in answers] != expected_outcomes(guard)


def test_every_trap_is_needed(suite_matrix):
    """A trap whose mutant another vector already kills and names only repeats that vector."""
    from conformance.tools.generate.builders.mutant_traps import TRAPPED

    for row in suite_matrix.rows:
        if row.mutant.name in TRAPPED:
            others = [g for g in row.guards if not g.startswith("mutant-traps/")]
            assert others == [], f"{row.mutant.name} is guarded by {others}; drop its trap"


def test_readme_tables_match_the_kill_matrix(suite_matrix):

    from conformance.cli.commands.mutants import format_markdown, readme_block

    readme = ROOT / "README.md"
    block = readme_block(readme.read_text(encoding="utf-8"))
    assert block == format_markdown(suite_matrix), (
        "README's 'The suite's power' tables are stale: run "
        "`snapkv-conformance mutants --update-readme README.md`"
    )


def test_readme_states_the_catalogue_s_size():

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"| `snapkv-conformance mutants` | {len(CATALOGUE)} plausible wrong ports " in readme


def test_mutants_command_exit_statuses(tmp_path, witness_suite):
    """0 when all are killed, 1 when one survives, 2 for vectors that cannot be loaded."""
    from conformance.cli import main
    from conformance.suite.vectors import dumps_vector

    suite = tmp_path / "suite"
    suite.mkdir()
    own = next(v for v in witness_suite if v.id == "mutant-traps/ties-to-higher-position")
    (suite / "ties.json").write_text(dumps_vector(own), encoding="utf-8")
    report = tmp_path / "matrix.json"
    args = ["mutants", str(suite), "--json", str(report)]
    assert main([*args, "--mutant", "ties-to-higher-position"]) == 0
    assert main([*args, "--mutant", "running-sum"]) == 1
    assert json.loads(report.read_text())["survived"] == ["running-sum"]
    (suite / "broken.json").write_text("{", encoding="utf-8")
    assert main(["mutants", str(suite)]) == 2
    assert main(["mutants", "--mutant", "no-such-mutant"]) == 2
