"""The differential fuzzer finds, shrinks and saves the planted bugs; its scenarios are valid.

The planted bugs are catalogued mutants (:mod:`conformance.mutants`), each one classic porting
mistake, served by ``snapkv-conformance adapter --mutant NAME``.
Every test here uses the default example budget, so it also checks the promise that the default
finds these mistakes; the seeds are fixed, so the runs are deterministic.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings

from conformance.adapter.replay import replay
from conformance.judge import verdicts
from conformance.mutants import lookup
from conformance.policy.reference import SnapKV
from conformance.runner.client import Client
from conformance.runner.run import run_suite
from conformance.suite import validation
from conformance.suite.vectors import load_vector
from conformance.tools import fuzz
from conformance.tools.scenarios import scenario_of, scenarios
from conformance.transport.in_process import InProcessAdapter
from tests.heldout_ports import ArgsortSelection
from tests.support.paths import ROOT, TESTS
from tests.support.runner_support import REFERENCE_ARGV, mutant_argv

PLANTED = ("stale-history-on-reuse", "null-advances-ring", "ties-to-higher-position")


@pytest.mark.slow
@pytest.mark.parametrize("name", PLANTED)
def test_default_budget_finds_shrinks_and_saves_the_planted_bug(name, tmp_path):
    with Client.process(mutant_argv(name), timeout=10) as adapter:
        result = fuzz.fuzz(adapter, seed=0, max_shrinks=100)
        port = adapter.handshake.describe()
    finding = result.finding
    assert finding is not None, f"{name}: no difference in {result.examples} examples"
    # The expectations are a fresh reference's answers to the calls, nothing else.
    assert scenario_of(finding.scenario.calls) == finding.scenario
    assert finding.difference.expected.startswith("victims")
    vector = fuzz.difference_vector(finding, port, seed=0)
    path = fuzz.save_vector(vector, tmp_path)
    assert path == tmp_path / f"{vector.id}.json"
    assert vector.id.startswith("fuzz/") and vector.tags == ("fuzz",)
    assert f"calls[{finding.difference.call_index}]" in vector.description
    # The vector ends at the difference (shrinking quality is tested in-process below).
    assert len(vector.calls) == finding.difference.call_index + 1
    _, problems = validation.check_file(path)
    assert problems == []
    on_bug = run_suite([load_vector(path)], mutant_argv(name), timeout=10)
    assert [r.verdict for r in on_bug.results] == [verdicts.WRONG_VICTIMS]
    on_reference = run_suite([load_vector(path)], REFERENCE_ARGV, timeout=10)
    assert on_reference.results[0].passed


#: Real-world mistakes the default budget must find on every seed tried: catalogued summation
#: mutants and a held-out numpy port ranking with the default (unstable) argsort.
REAL_WORLD = (
    "pairwise-summation",
    "kahan-summation",
    "chronological-order",
    "float32-accumulation",
    "argsort",
)


@pytest.mark.slow
@pytest.mark.parametrize("seed", (1, 2, 3))
@pytest.mark.parametrize("name", REAL_WORLD)
def test_default_budget_finds_real_world_summations_and_sorts(name, seed):
    result = fuzz.fuzz(mistake(name), seed=seed)
    finding = result.finding
    assert finding is not None, f"{name}: no difference in {result.examples} examples"
    vector = fuzz.difference_vector(finding, "a port", seed)
    assert len(vector.calls) <= 160  # shrunk: the scenarios that find these run to hundreds
    on_mistake = run_suite([vector], adapter_factory=lambda: mistake(name, start=False).transport)
    assert [r.verdict for r in on_mistake.results] == [verdicts.WRONG_VICTIMS]
    on_reference = run_suite([vector], adapter_factory=InProcessAdapter)
    assert on_reference.results[0].passed


def mistake(name: str, start: bool = True) -> Client:
    if name == "argsort":
        adapter = Client(InProcessAdapter(ArgsortSelection))
    else:
        found = lookup(name)
        adapter = Client(InProcessAdapter(found.factory, found.implementation()))
    if start:
        adapter.start()
    return adapter


@pytest.mark.parametrize("seed", (3, 0, 2))
def test_shrinks_a_tie_bug_to_a_tie_broken_upward_at_its_last_evict(seed):
    """SPEC.md §2.4 step 4: among equal pooled scores the lower position is evicted first.

    Which tie the shrink ends on is hypothesis's choice, not the kit's: the seed fixes the
    random source, but the scenario reached depends on hypothesis's version and the path its
    shrinker takes (seed 3 ends on new, two steps and an evict with budget 1; seed 0 on budget
    12 with 14 steps; an assertion of one smallest scenario once failed on victims [3] where
    it wanted [1], run after other test files). So this asserts
    what every shrink of a tie bug has, whatever tie it lands on, with the scores and victims
    taken from the reference and the mutant, not from the fuzzer: the difference is at the last
    call, an evict; the port evicts as many positions as the reference; the positions only the
    reference evicts are all lower than those only the port evicts, and all of them have one
    pooled score. That no call can go is the next test's."""
    name = "ties-to-higher-position"
    finding = fuzz.fuzz(planted(name), seed=seed).finding
    assert finding is not None
    calls = list(finding.scenario.calls)
    assert finding.difference.call_index == len(calls) - 1 and calls[-1]["op"] == "evict"
    expected = replay(calls)[-1]["victims"]
    actual = replay(calls, lookup(name).factory)[-1]["victims"]
    assert finding.difference.expected == f"victims {json.dumps(expected)}"
    assert len(actual) == len(expected) and actual != expected
    lower, higher = set(expected) - set(actual), set(actual) - set(expected)
    assert max(lower) < min(higher)
    scores = replay([*calls[:-1], {"op": "scores"}])[-1]
    pooled = dict(zip(scores["positions"], scores["pooled"], strict=True))
    assert len({pooled[position] for position in lower | higher}) == 1


def test_the_last_pass_drops_every_call_a_difference_does_not_need():
    finding = fuzz.fuzz(planted("ties-to-higher-position"), seed=3).finding
    assert finding is not None
    calls = finding.scenario.calls
    for index in range(1, len(calls) - 1):  # none of them can go without the difference
        shorter = scenario_of(calls[:index] + calls[index + 1 :])
        assert fuzz.differential(shorter, planted("ties-to-higher-position")) is None


def test_the_default_shrink_budget_gets_stale_history_down_to_a_few_calls():
    finding = fuzz.fuzz(planted("stale-history-on-reuse"), seed=3).finding
    assert finding is not None
    # The smallest has 7: new, two steps, evict (a ring freed), a step (admitted with the
    # victim's ring), a step and the evict that tells. Found in a scenario that opens with a
    # duel of summation orders, it keeps the duel's run of at least 8 steps.
    assert 7 <= len(finding.scenario.calls) <= 24


def test_the_same_seed_gives_the_same_vector():
    first = fuzz.fuzz(planted("null-advances-ring"), seed=11, max_shrinks=60).finding
    second = fuzz.fuzz(planted("null-advances-ring"), seed=11, max_shrinks=60).finding
    assert first is not None and second is not None
    assert first.scenario == second.scenario
    assert first.examples_to_find == second.examples_to_find


def test_no_difference_against_the_reference():
    adapter = Client(InProcessAdapter())
    adapter.start()
    result = fuzz.fuzz(adapter, seed=5, max_examples=60)
    assert result.finding is None
    assert result.examples == 60  # exactly the budget: hypothesis is stopped there


def test_a_crash_is_a_difference_and_the_adapter_is_restarted(tmp_path):
    class CrashOnEvict(SnapKV):
        def evict(self):
            if len(self.kept) > self.params.budget:
                raise RuntimeError("boom")
            return super().evict()

    adapter = Client(InProcessAdapter(CrashOnEvict))
    adapter.start()
    finding = fuzz.fuzz(adapter, seed=2, max_shrinks=80).finding
    assert finding is not None
    assert finding.difference.actual.startswith("crash")
    assert finding.scenario.calls[finding.difference.call_index]["op"] == "evict"


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenarios())
def test_every_scenario_makes_a_valid_vector(scenario):
    last = len(scenario.calls) - 1
    finding = fuzz.Finding(scenario, fuzz.Difference(last, "x", "y"), 1, 0)
    vector = fuzz.difference_vector(finding, "a port", seed=1)
    text = json.dumps(vector.to_json())
    _, problems = validation.check_document(text, f"somewhere/{vector.id}.json")
    assert problems == []
    assert [call.request for call in vector.calls] == list(scenario.calls)


@pytest.mark.slow
def test_cli_saves_a_vector_that_fails_through_run(tmp_path):
    command = shlex.join(mutant_argv("ties-to-higher-position"))
    save = tmp_path / "found"
    fuzzed = cli("fuzz", "--adapter", command, "--seed", "3", "--save", str(save))
    assert fuzzed.returncode == 1, fuzzed.stderr
    (path,) = save.rglob("*.json")
    assert f"saved: {path}" in fuzzed.stdout
    replay = next(line for line in fuzzed.stdout.splitlines() if line.startswith("replay: "))
    argv = shlex.split(replay.removeprefix("replay: "))
    assert argv[:2] == ["snapkv-conformance", "run"]
    replayed = cli(*argv[1:])
    assert replayed.returncode == 1
    assert "wrong-victims" in replayed.stdout
    assert cli("validate", str(path)).returncode == 0


@pytest.mark.slow
def test_cli_exit_codes(tmp_path):
    reference = shlex.join(REFERENCE_ARGV)
    clean = cli("fuzz", "--adapter", reference, "--max-examples", "15", "--seed", "1")
    assert clean.returncode == 0, clean.stderr
    # The count printed is the count announced: at most --max-examples.
    assert "up to 15 examples" in clean.stdout
    assert re.search(r"^no difference in 15 examples \(seed 1\)$", clean.stdout, re.M)
    missing = cli("fuzz", "--adapter", str(tmp_path / "no-such-adapter"))
    assert missing.returncode == 2
    assert "cannot start" in missing.stderr
    assert cli("fuzz", "--adapter", reference, "--max-examples", "0").returncode == 2
    assert cli("fuzz").returncode == 2


def test_a_save_blocked_by_a_file_names_that_file(tmp_path):
    command = shlex.join(mutant_argv("ties-to-higher-position"))
    (tmp_path / "fuzz").write_text("in the way")
    fuzzed = cli("fuzz", "--adapter", command, "--seed", "3", "--save", str(tmp_path))
    assert fuzzed.returncode == 2
    assert f"{tmp_path / 'fuzz'} is a file, where a directory is needed" in fuzzed.stderr
    assert '"format": "snapkv-vector/1"' in fuzzed.stdout  # the finding is printed, not lost


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def planted(name: str) -> Client:
    """The catalogued mutant ``name``, served in-process (faster than a process)."""
    mutant = lookup(name)
    adapter = Client(InProcessAdapter(mutant.factory, mutant.implementation()))
    adapter.start()
    return adapter


# -- weights that are not float32 values ---------------------------------------------------------

SLIPS = TESTS / "lax_adapters" / "slips.py"


@pytest.mark.slow
@pytest.mark.parametrize("seed", (1, 2, 3))
def test_default_budget_finds_the_single_rounding_slip(seed, tmp_path):
    """Java's Float.parseFloat behind a float64 overflow guard: found and shrunk to a vector
    tagged double-rounding, which keeps its weights as written and fails the slip."""
    argv = [sys.executable, str(SLIPS), "single-rounding"]
    with Client.process(argv, timeout=10) as adapter:
        result = fuzz.fuzz(adapter, seed=seed)
    finding = result.finding
    assert finding is not None, f"no difference in {result.examples} examples"
    assert finding.examples_to_find <= fuzz.DEFAULT_MAX_EXAMPLES
    vector = fuzz.difference_vector(finding, "slip", seed)
    assert vector.tags == ("fuzz", "double-rounding")
    assert len(vector.calls) <= 8
    path = fuzz.save_vector(vector, tmp_path)
    assert validation.check_file(path)[1] == []
    on_slip = run_suite([load_vector(path)], argv, timeout=10)
    assert not on_slip.results[0].passed
    assert run_suite([load_vector(path)], REFERENCE_ARGV, timeout=10).results[0].passed


@pytest.mark.slow
def test_scenarios_draw_weights_of_every_spelling_in_accepted_and_refused_calls():
    from hypothesis import seed as hypothesis_seed

    from conformance.policy.reference import check_weight_literal
    from conformance.spec.protocol import NumberText
    from conformance.tools import spelling as spellings

    texts: dict[str, list[str]] = {"accepted": [], "refused": []}

    @settings(
        max_examples=150, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(scenarios())
    def collect(scenario):
        for call, answer in zip(scenario.calls, scenario.expected, strict=True):
            attn = call.get("attn")
            if call["op"] != "step" or not isinstance(attn, list):
                continue
            kind = "accepted" if answer["ok"] else "refused"
            texts[kind] += [w.text for w in attn if isinstance(w, NumberText)]

    with fuzz.hypothesis_storage():  # the draws of the fuzzer's own: the seed's alone
        hypothesis_seed(7)(collect)()
    accepted, refused = texts["accepted"], texts["refused"]
    assert refused and any(not check_weight_literal(float(t)) for t in accepted)
    assert sum(map(spellings.rounds_apart, accepted)) > 10
    # A tiny negative that one rounding refuses and two read as -0.0, in some spelling.
    assert any(t.startswith("-") and spellings.rounds_apart(t) for t in accepted)


def test_the_rounding_weights_come_in_every_spelling():
    from conformance.tools import spelling
    from conformance.tools.scenarios import ROUNDING_TABLE

    texts = [weight.text for weight in ROUNDING_TABLE]
    joined = " ".join(texts)
    for written in ("e-", "E-", "E+", "e+", ".0000000000"):
        assert written in joined, written
    assert {"-0", "-0e0", "-0E+5", "-0.000", "-0.0e-3", "-0.0"} <= set(texts)
    digits = [t for t in texts if t.lstrip("-").isdigit()]
    assert any(2**53 < int(t) < 2**64 for t in digits) and any(int(t) > 2**64 for t in digits)
    assert any(len(t.split("e")[0]) > 40 for t in texts)  # many digits
    assert any(t.startswith("-") and spelling.rounds_apart(t) for t in texts)
    assert sum(map(spelling.rounds_apart, texts)) > len(texts) // 3


# -- campaigns: the working directory, the database, shards --------------------------------------


@pytest.mark.slow
def test_fuzz_writes_nothing_in_the_working_directory(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    save = tmp_path / "found"
    for command in (shlex.join(REFERENCE_ARGV), shlex.join(mutant_argv("ties-to-higher-position"))):
        for protocol in ((), ("--protocol",)):
            done = subprocess.run(
                [sys.executable, "-m", "conformance", "fuzz", "--adapter", command, *protocol,
                 "--seed", "3", "--max-examples", "20", "--max-shrinks", "20", "--save", str(save)],
                capture_output=True, text=True, timeout=300, cwd=work,
            )  # fmt: skip
            assert done.returncode in (0, 1), done.stderr
            assert list(work.iterdir()) == [], (command, protocol)
    assert list(save.rglob("*.json"))  # the mutant's finding went where it was told


def test_the_database_keeps_a_finding_and_replays_it_first(tmp_path):
    database = tmp_path / "db"
    first = fuzz.fuzz(planted("null-advances-ring"), seed=11, max_shrinks=60, database=database)
    assert first.finding is not None and first.finding.examples_to_find > 1
    assert [p for p in database.rglob("*") if p.is_file()]  # one file per kept failure
    # Another seed: the stored failure is replayed before anything is drawn.
    again = fuzz.fuzz(planted("null-advances-ring"), seed=12, max_shrinks=60, database=database)
    assert again.finding is not None and again.finding.examples_to_find == 1
    # A port without the mistake passes them: stored failures are no findings of their own.
    clean = Client(InProcessAdapter())
    clean.start()
    assert fuzz.fuzz(clean, seed=12, max_examples=5, database=database).finding is None


@pytest.mark.slow
def test_a_shard_searches_its_own_seed_and_replays_as_that_seed(tmp_path):
    assert {fuzz.shard_seed(5, (index, 4)) for index in range(1, 5)} == {20, 21, 22, 23}
    assert fuzz.shard_seed(5, None) == fuzz.shard_seed(5, (1, 1)) == 5
    command = shlex.join(mutant_argv("null-advances-ring"))
    common = ("fuzz", "--adapter", command, "--max-shrinks", "30", "--save")
    sharded = cli(*common, str(tmp_path / "a"), "--seed", "5", "--shard", "3/4")
    plain = cli(*common, str(tmp_path / "b"), "--seed", "22")
    assert sharded.returncode == plain.returncode == 1, sharded.stderr + plain.stderr
    assert "seed 5, shard 3/4 (search seed 22), up to 400 examples" in sharded.stdout
    (found,) = (tmp_path / "a").rglob("*.json")
    (again,) = (tmp_path / "b").rglob("*.json")
    assert found.name == again.name and found.read_text() == again.read_text()
    bad = cli("fuzz", "--adapter", command, "--shard", "5/4")
    assert bad.returncode == 2 and "--shard" in bad.stderr
    mixed = cli("fuzz", "--adapter", command, "--protocol", "--accept", "null-advances-ring")
    assert mixed.returncode == 2 and "--accept" in mixed.stderr
