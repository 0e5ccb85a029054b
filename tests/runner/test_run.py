"""run_suite: every vector gets one result, in order, whatever the adapter does.

The broken adapters misbehave only in the vector that admits position 5 (``faults/trigger``);
the plain vectors around it must still pass, which proves the runner restarted the adapter and
went on. Every run must end within a bound.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from conformance import mutants
from conformance.judge.verdicts import (
    BROKEN_INVARIANT,
    CRASH,
    NOT_ASCENDING,
    PASS,
    PROTOCOL_ERROR,
    TIMEOUT,
    UNEXPECTED_REFUSAL,
    WRONG_VICTIMS,
    kept,
)
from conformance.runner import run as runner
from conformance.runner import window
from conformance.spec.text import KEEP_ITEMS, KEEP_TEXT
from conformance.suite import discovery, wire
from conformance.suite.vectors import Call, Vector, dumps_vector
from conformance.transport.failures import AdapterStartError
from conformance.transport.in_process import InProcessAdapter
from conformance.transport.session import AdapterProcess
from tests.support.runner_support import (
    REFERENCE_ARGV,
    broken,
    params,
    plain_vector,
    reference_vector,
    trigger_vector,
    workload,
    write_suite,
)

BOUND = 20.0  # seconds: a few adapter starts on a loaded machine, plus a 1 s timeout or two


def suite() -> list[Vector]:
    return [plain_vector("faults/a-before"), trigger_vector(), plain_vector("faults/z-after", 2)]


def run(argv, vectors=None, **kw) -> runner.RunResult:
    began = time.monotonic()
    result = runner.run_suite(vectors or suite(), argv, timeout=kw.pop("timeout", 1.0), **kw)
    assert time.monotonic() - began < BOUND
    return result


#: A 20 MiB line takes a loaded machine more than a second to write and read.
SLOW = {"huge_line": 10.0}


@functools.cache
def run_broken(name: str) -> runner.RunResult:
    """The default suite on a broken adapter, run once per module and shared by the tests."""
    return run(broken(name), timeout=SLOW.get(name, 1.0))


def verdicts(result: runner.RunResult) -> dict[str, str]:
    return {r.vector_id: r.verdict for r in result.results}


def test_the_reference_passes_everything_in_suite_order():
    vectors = suite()[::-1]  # suite order is the order given, not sorted
    result = run(REFERENCE_ARGV, vectors)
    assert [r.vector_id for r in result.results] == [v.id for v in vectors]
    assert all(r.passed for r in result.results) and result.ok
    assert result.counts == {
        "total": 3,
        "passed": 3,
        "failed": 0,
        "known_failures": 0,
        "stale_known_failures": 0,
    }
    assert result.handshake.name == "snapkv-conformance reference"
    assert result.adapter_argv == REFERENCE_ARGV and result.warnings == []


@pytest.mark.parametrize(
    ("name", "verdict", "words"),
    [
        ("crash_mid_vector", CRASH, "killed by signal SIGSEGV"),
        ("hang", TIMEOUT, "no answer within 1 s"),
        ("non_json", PROTOCOL_ERROR, "not JSON"),
        ("wrong_id", PROTOCOL_ERROR, "has id"),
        ("two_answers", PROTOCOL_ERROR, "answered twice"),
        ("partial_line", CRASH, "stopped in the middle of its answer"),
        ("huge_line", PROTOCOL_ERROR, "longer than 16777216 bytes"),
        ("non_utf8", PROTOCOL_ERROR, "not UTF-8"),
        ("descending_victims", BROKEN_INVARIANT, "strictly ascending"),
        ("deeply_nested", PROTOCOL_ERROR, "more than 64 levels deep"),
        ("lone_surrogate", UNEXPECTED_REFUSAL, "bad \ud800 \x1b[31m red"),
    ],
)
def test_a_broken_adapter_fails_only_its_vector(name, verdict, words):
    result = run_broken(name)
    assert verdicts(result) == {
        "faults/a-before": PASS,
        "faults/trigger": verdict,
        "faults/z-after": PASS,
    }
    failed = result.results[1]
    assert words in failed.message
    assert failed.call_index is not None and failed.op in ("step", "evict")
    assert not result.ok and result.counts["failed"] == 1


def test_crash_results_carry_exit_status_and_stderr():
    failed = run_broken("crash_mid_vector").results[1]
    assert failed.exit_status == -11
    assert "dangling pointer" in failed.stderr_tail


def test_descending_victims_get_a_scores_diagnosis():
    failed = run_broken("descending_victims").results[1]
    assert failed.rule == NOT_ASCENDING
    assert failed.diagnosis.startswith("Its victims are the 3 lowest candidates by (pooled, ")
    assert "in its own scores, but not in ascending order: [" in failed.diagnosis
    assert "Its scores equal the reference's" in failed.diagnosis


def test_unknown_error_kind_is_a_protocol_error():
    refused = reference_vector(
        "faults/bad-weight",
        [
            {"op": "new", "params": params(2, 0, 2, 1), "seed": 0},
            {"op": "step", "pos": 0, "attn": None},
            {"op": "step", "pos": 1, "attn": [-1.0]},
            {"op": "step", "pos": 1, "attn": [1.0]},
            {"op": "evict"},
        ],
    )
    assert refused.calls[2].expected_error == "invalid-attention"
    result = run(broken("unknown_error_kind"), [refused, plain_vector("faults/plain")])
    assert verdicts(result) == {
        "faults/bad-weight": PROTOCOL_ERROR,
        "faults/plain": PASS,
    }
    assert '"invalid-weights" is not one of protocol v1\'s kinds' in result.results[0].message


def test_stderr_flood_passes():
    result = run(broken("stderr_flood"))
    assert result.ok and result.counts["passed"] == 3


def test_ignoring_bye_is_a_warning_not_a_failure():
    result = run(broken("ignore_bye"))
    assert result.ok
    assert result.warnings == ["the adapter did not exit within 1 s after bye; killed it"]


def test_a_bad_exit_after_bye_is_a_warning_naming_the_status():
    result = run(broken("bad_exit_after_bye"))
    assert result.ok and result.counts["passed"] == 3
    assert result.warnings == [
        "the adapter killed by signal SIGSEGV after bye, where protocol v1 says it exits with "
        "status 0 (a crash while shutting down?)"
    ]


def test_hello_answered_before_asked_stops_the_run_at_once():
    began = time.monotonic()
    with pytest.raises(AdapterStartError, match=r"answered hello twice .* before it was asked"):
        run(broken("hello_before_asked"), [plain_vector(f"early/v{i}", i) for i in range(6)])
    assert time.monotonic() - began < 5.0  # not one restart per vector


@pytest.mark.slow
def test_the_answer_to_bye_gets_the_timeout(tmp_path):
    # Answers bye after 1.5 s: within --timeout 3, so no complaint about the answer.
    code = f"""
        import sys, time
        sys.path.insert(0, {str(broken("hang")[1].rsplit("/", 1)[0])!r})
        from _common import serve
        sys.exit(serve(lambda request, line, armed: time.sleep(1.5) if request["op"] == "bye"
                       else None))
    """
    result = run([sys.executable, "-c", textwrap.dedent(code)], timeout=3.0)
    assert result.ok and result.warnings == []


def pid_in(path) -> int:
    return int(path.read_text())


def gone(pid: int, within: float = 5.0) -> bool:
    """True once ``pid`` no longer runs (a zombie waiting for its parent counts as gone)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_an_adapters_child_does_not_outlive_a_normal_bye(tmp_path):
    record = tmp_path / "child"
    result = run([*broken("child_outlives_bye"), str(record)])
    assert result.ok and result.warnings == []
    assert gone(pid_in(record))


def test_a_crash_while_a_child_holds_stdout_is_a_crash_with_its_status(tmp_path):
    record = tmp_path / "child"
    result = run([*broken("child_holds_stdout"), str(record)], timeout=30.0)
    assert verdicts(result) == {
        "faults/a-before": PASS,
        "faults/trigger": CRASH,
        "faults/z-after": PASS,
    }
    assert result.results[1].exit_status == 3 and "exit status 3" in result.results[1].message
    assert result.duration < 25.0  # not a wait for the 30 s timeout
    assert gone(pid_in(record))


@pytest.mark.parametrize(
    "adapter", ["setsid_child_holds_stdout", "setsid_child_without_environment"]
)
def test_a_descendant_that_called_setsid_is_killed_and_the_crash_is_a_crash(adapter, tmp_path):
    """SPEC.md §3.2: what the adapter started does not outlive it, even a descendant that left
    its process group (and even one that cleared its environment, found as a holder of the
    adapter's stdout); while that one held stdout, the adapter's exit 3 is still a crash."""
    record = tmp_path / "child"
    result = run([*broken(adapter), str(record)], timeout=30.0)
    assert verdicts(result)["faults/trigger"] == CRASH
    assert result.results[1].exit_status == 3, result.results[1].message
    assert result.duration < 25.0  # not a wait for the 30 s timeout
    assert gone(pid_in(record))


def test_an_adapter_that_forks_and_exits_cannot_start_and_leaves_nothing(tmp_path):
    record = tmp_path / "child"
    with pytest.raises(AdapterStartError, match=r"exited \(exit status 0\) without answering"):
        run([*broken("forks_and_exits"), str(record)])
    assert gone(pid_in(record))


def test_a_deeply_nested_answer_to_hello_cannot_start():
    with pytest.raises(AdapterStartError, match="more than 64 levels deep"):
        run(broken("deeply_nested_hello"))


def test_crash_at_start_stops_the_run():
    with pytest.raises(AdapterStartError, match="exit status 3"):
        run(broken("crash_at_start"))


def ends_at_armed_evict(vector_id: str) -> Vector:
    """The trigger vector cut right after its first armed evict: its extra answer comes late."""
    vector = trigger_vector(vector_id)
    admitted = next(i for i, c in enumerate(vector.calls) if c.request.get("pos") == 5)
    cut = next(i for i, c in enumerate(vector.calls) if i > admitted and c.op == "evict")
    return Vector(vector.id, "", (), vector.params, vector.seed, vector.calls[: cut + 1])


@pytest.mark.parametrize("last", [False, True])
def test_an_extra_answer_after_a_vector_is_blamed_on_that_vector(last):
    late = ends_at_armed_evict("faults/late")
    vectors = [plain_vector("faults/plain"), late] if last else [late, plain_vector("faults/plain")]
    result = run(broken("two_answers"), vectors)
    assert verdicts(result) == {
        "faults/late": PROTOCOL_ERROR,
        "faults/plain": PASS,
    }
    blamed = next(r for r in result.results if r.vector_id == "faults/late")
    assert blamed.call_index == len(late.calls) - 1 and blamed.op == "evict"
    assert "answered that request twice" in blamed.message


def test_restart_failures_never_lose_a_result(tmp_path):
    # Starts once, crashes at the first step; every later start fails.
    marker = tmp_path / "started"
    code = f"""
        import os, sys
        marker = {str(marker)!r}
        if os.path.exists(marker):
            sys.exit("cannot start twice")
        open(marker, "w").close()
        sys.path.insert(0, {str(broken("crash_mid_vector")[1].rsplit("/", 1)[0])!r})
        from _common import serve
        sys.exit(serve(lambda request, line, armed: os._exit(4) if request["op"] == "step"
                       else None))
    """
    argv = [sys.executable, "-c", textwrap.dedent(code)]
    vectors = [plain_vector(f"faults/v{i}", i) for i in range(5)]
    result = run(argv, vectors)
    assert [r.verdict for r in result.results] == [CRASH] * 5
    assert "exit status 4" in result.results[0].message
    messages = [r.message for r in result.results[1:]]
    assert sum("could not be restarted" in m for m in messages) == window.MAX_FAILED_RESTARTS
    assert sum("every adapter process failed to restart" in m for m in messages) == 2


def test_a_refused_new_runs_on_a_fresh_session():
    # A refused new keeps the earlier policy, so 'no-policy' holds only on a fresh adapter.
    orphan = reference_vector(
        "fresh/refused-new",
        [
            {"op": "new", "params": params(2, 2, 1, 1), "seed": 0},
            {"op": "step", "pos": 0, "attn": None},
            {"op": "evict"},
        ],
    )
    assert [c.expected_error for c in orphan.calls] == ["invalid-params", "no-policy", "no-policy"]
    assert window.Job(0, orphan, wire.prepare_vector(orphan), lambda: orphan).fresh
    result = run(REFERENCE_ARGV, [plain_vector("fresh/a"), orphan, plain_vector("fresh/b", 3)])
    assert result.ok, [r.describe() for r in result.results]


# -- parallel runs, shards, selection -------------------------------------------------------------


def many(count: int) -> list[Vector]:
    return [
        workload(f"many/v{i:02d}", params(4, 1, 3, 3), range(20, 32), seed=i, evict_every=2)
        for i in range(count)
    ]


def test_jobs_run_several_adapters_and_keep_suite_order():
    pids = []

    class Recording(AdapterProcess):
        def send(self, requests):
            pids.append(self.pid)
            return super().send(requests)

    vectors = many(8)
    result = runner.run_suite(
        vectors, adapter_factory=lambda: Recording(REFERENCE_ARGV, timeout=5.0), jobs=2
    )
    assert len(set(pids)) == 2 and result.jobs == 2
    assert [r.vector_id for r in result.results] == [v.id for v in vectors]
    assert result.ok


def test_jobs_with_a_broken_adapter_lose_nothing():
    vectors = [*many(3), trigger_vector(), *many(6)[3:]]
    result = run(broken("crash_mid_vector"), vectors, jobs=2)
    assert [r.vector_id for r in result.results] == [v.id for v in vectors]
    assert [r.vector_id for r in result.results if not r.passed] == ["faults/trigger"]


def test_an_interrupt_while_workers_start_kills_every_adapter(monkeypatch):
    pids: list[int] = []

    class Recording(AdapterProcess):
        def start(self):
            handshake = super().start()
            pids.append(self.pid)
            return handshake

    started = threading.Thread.start

    def start(thread):
        if getattr(thread, "_target", None) is not None and "work" in thread._target.__name__:
            raise KeyboardInterrupt  # Ctrl-C just as the first worker starts
        started(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    with pytest.raises(KeyboardInterrupt):
        runner.run_suite(
            many(4), adapter_factory=lambda: Recording(REFERENCE_ARGV, timeout=5.0), jobs=2
        )
    monkeypatch.undo()
    assert len(pids) == 2 and all(gone(pid) for pid in pids)


def test_shards_partition_the_suite_deterministically():
    vectors = many(10)[::-1]
    shards = [discovery.shard_vectors(vectors, (i, 3)) for i in (1, 2, 3)]
    ids = sorted(v.id for v in vectors)
    assert [v.id for v in shards[0]] == [ids[9], ids[6], ids[3], ids[0]]  # given order kept
    assert sorted(v.id for shard in shards for v in shard) == ids
    assert shards == [discovery.shard_vectors(vectors, (i, 3)) for i in (1, 2, 3)]
    assert discovery.shard_vectors(vectors, (4, 20)) == [v for v in vectors if v.id == ids[3]]


def test_run_suite_applies_the_shard_and_reports_it():
    vectors = many(5)
    result = runner.run_suite(vectors, adapter_factory=InProcessAdapter, shard=(2, 2))
    assert [r.vector_id for r in result.results] == ["many/v01", "many/v03"]
    assert result.shard == (2, 2)


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "x/2", "1", "1/2/3", ""])
def test_bad_shards_are_refused(text):
    with pytest.raises(ValueError, match="shard"):
        discovery.parse_shard(text)


def test_parse_shard():
    assert discovery.parse_shard("3/4") == (3, 4)


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        (["v0"], ["many/v00", "many/v01", "many/v02"]),
        (["many/v0?"], ["many/v00", "many/v01", "many/v02"]),
        (["*1"], ["many/v01", "many/v11"]),
        (["v00", "v11"], ["many/v00", "many/v11"]),
        (["V00"], []),
        (["v1"], ["many/v10", "many/v11"]),
        ([], [f"many/v{i:02d}" for i in (0, 1, 2, 10, 11)]),
    ],
)
def test_k_is_a_substring_or_a_glob(patterns, expected):
    vectors = [Vector(f"many/v{i:02d}", "", (), {}, 0, ()) for i in (0, 1, 2, 10, 11)]
    assert [v.id for v in discovery.select(vectors, patterns)] == expected


# -- known failures -------------------------------------------------------------------------------


#: The catalogued mutant that breaks ties toward the higher position.
TIES_TO_HIGHER = mutants.lookup("ties-to-higher-position").factory


def ties_suite() -> list[Vector]:
    tie = reference_vector(
        "ties/null-steps",
        [
            {"op": "new", "params": params(2, 0, 4, 1), "seed": 0},
            *({"op": "step", "pos": p, "attn": None} for p in range(3)),
            {"op": "evict"},
        ],
    )
    return [tie, workload("ties/none", params(8, 2, 4, 3), range(4), seed=1)]


def run_ties(known: set[str]) -> runner.RunResult:
    return runner.run_suite(
        ties_suite(), adapter_factory=lambda: InProcessAdapter(TIES_TO_HIGHER), known_failures=known
    )


def test_in_process_mutant_gets_wrong_victims_with_a_diagnosis():
    result = run_ties(set())
    failed = result.results[0]
    assert failed.verdict == WRONG_VICTIMS
    assert (failed.expected, failed.actual) == ([0], [2])
    assert "Its selection is wrong" in failed.diagnosis
    assert result.counts["failed"] == 1 and not result.ok


def test_a_listed_failure_does_not_fail_the_run():
    result = run_ties({"ties/null-steps"})
    assert result.ok
    assert result.counts == {
        "total": 2,
        "passed": 1,
        "failed": 0,
        "known_failures": 1,
        "stale_known_failures": 0,
    }


def test_a_listed_vector_that_passes_fails_the_run():
    result = run_ties({"ties/null-steps", "ties/none"})
    assert not result.ok
    stale = result.results[1]
    assert stale.passed and stale.known_failure and stale.fails_run
    assert "remove it from the list" in stale.describe()
    assert result.counts["stale_known_failures"] == 1 and result.counts["failed"] == 1


def test_known_failures_file_format(tmp_path):
    text = "# header\n\nties/a\n  ties/b   # flaky since 0.2\n#ties/c\n"
    assert discovery.parse_known_failures(text) == {"ties/a", "ties/b"}
    path = tmp_path / "known.txt"
    path.write_text(discovery.format_known_failures(["b/2", "a/1", "b/2"], "for port X"))
    assert path.read_text().splitlines()[-2:] == ["a/1", "b/2"]
    assert discovery.read_known_failures(path) == {"a/1", "b/2"}
    with pytest.raises(discovery.KnownFailuresError, match=r"known.txt:2: expected one vector id"):
        discovery.parse_known_failures("ok/one\nnot one\n", "known.txt")
    with pytest.raises(discovery.KnownFailuresError, match="cannot read"):
        discovery.read_known_failures(tmp_path / "missing.txt")


def test_vector_runner_runs_one_vector_at_a_time_and_recovers():
    vector_runner = runner.VectorRunner(AdapterProcess(broken("crash_mid_vector"), timeout=1.0))
    first = vector_runner.run(plain_vector("one/a"))
    crashed = vector_runner.run(trigger_vector("one/trigger"))
    after = vector_runner.run(plain_vector("one/b", 2))
    assert (first.verdict, crashed.verdict, after.verdict) == (
        PASS,
        CRASH,
        PASS,
    )
    assert crashed.exit_status == -11 and crashed.duration > 0
    assert vector_runner.close() == []


def test_run_with_an_adapter_imports_no_numpy_and_no_other_subcommand():
    code = textwrap.dedent(
        """
        import sys
        from conformance.cli import main
        status = main(["run", "--adapter", sys.argv[1], "-k", "ties/"])
        loaded = sorted(sys.modules)
        commands = [m for m in loaded if m.startswith("conformance.cli.commands.")]
        print(status, [m for m in loaded if m == "numpy"] + commands)
        """
    )
    adapter = " ".join(REFERENCE_ARGV)
    done = subprocess.run(
        [sys.executable, "-c", code, adapter], capture_output=True, text=True, timeout=BOUND
    )
    assert done.stdout.splitlines()[-1] == (
        "0 ['conformance.cli.commands._options', 'conformance.cli.commands.run']"
    )


def test_huge_refusal_messages_are_kept_bounded():
    result = run(broken("huge_refusals"), timeout=10.0)
    assert [r.verdict for r in result.results] == [UNEXPECTED_REFUSAL] * 3
    for failed in result.results:
        said = failed.actual["message"]
        assert said.startswith("x" * KEEP_TEXT) and said.endswith("more characters)")
        assert len(said) < KEEP_TEXT + 50 and len(failed.message) < 2 * KEEP_TEXT
    assert len(json.dumps([r.to_json() for r in result.results])) < 20_000


def test_a_kept_value_is_bounded_whatever_its_size():
    value = {
        "victims": list(range(10**5)),
        "note": "y" * 10**6,
        **{f"k{i}": i for i in range(2000)},
    }
    bounded = kept(value)
    assert len(json.dumps(bounded)) < 40_000
    assert bounded["victims"][:KEEP_ITEMS] == list(range(KEEP_ITEMS))
    assert bounded["victims"][-1] == f"... ({10**5 - KEEP_ITEMS:,} more items)"
    assert kept([1, "a", None]) == [1, "a", None]  # small values are kept as they are


# -- the run command on files ---------------------------------------------------------------------


def run_command(capsys, *argv: str) -> tuple[int, str, str]:
    from conformance.cli import main

    code = main(["run", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_vector_with_a_scores_call_is_refused_before_it_is_sent(capsys, tmp_path):
    plain = plain_vector("files/plain")
    scored = Vector(
        "files/scored",
        "holds a scores call",
        (),
        plain.params,
        plain.seed,
        (*plain.calls[:3], Call({"op": "scores"}), *plain.calls[3:]),
    )
    directory = write_suite(tmp_path / "suite", [plain, scored])
    code, out, err = run_command(capsys, str(directory), "--adapter", " ".join(REFERENCE_ARGV))
    assert code == 2 and out == ""
    assert err.startswith("snapkv-conformance run: error: invalid vectors: ")
    assert "scored.json: /calls/3" in err and err.count("\n") == 1


def test_an_id_the_schema_forbids_is_refused(capsys, tmp_path):
    directory = write_suite(tmp_path / "suite", [plain_vector("files/plain")])
    good = plain_vector("x/y")
    odd = Vector("files/has space", good.description, good.tags, good.params, 0, good.calls)
    (directory / "odd.json").write_text(dumps_vector(odd))
    code, _, err = run_command(capsys, str(directory))
    assert code == 2 and "odd.json: /id: " in err and "has space" in err


@pytest.mark.parametrize("line", ["files/has space", "files/#hash", "files/\x1besc", "Upper/case"])
def test_a_known_failures_line_that_is_no_id_is_refused(capsys, tmp_path, line):
    directory = write_suite(tmp_path / "suite", [plain_vector("files/plain")])
    known = tmp_path / "known.txt"
    known.write_text(f"{line}\n")
    code, _, err = run_command(capsys, str(directory), "--known-failures", str(known))
    assert code == 2 and "known.txt:1: " in err


def test_written_known_failures_are_read_back(capsys, tmp_path):
    trigger = trigger_vector("files/trigger")
    directory = write_suite(tmp_path / "suite", [plain_vector("files/plain"), trigger])
    known = tmp_path / "known.txt"
    adapter = " ".join(broken("crash_mid_vector"))
    common = [str(directory), "--adapter", adapter, "--timeout", "2"]
    assert run_command(capsys, *common, "--write-known-failures", str(known))[0] == 1
    assert discovery.read_known_failures(known) == {"files/trigger"}
    assert run_command(capsys, *common, "--known-failures", str(known))[0] == 0


def test_a_failure_is_said_on_stderr_when_judged_and_listed_on_stdout(capsys, tmp_path):
    trigger = trigger_vector("files/trigger")
    directory = write_suite(tmp_path / "suite", [plain_vector("files/plain"), trigger])
    adapter = " ".join(broken("crash_mid_vector"))
    code, out, err = run_command(capsys, str(directory), "--adapter", adapter, "--timeout", "2")
    assert code == 1
    assert err.startswith("FAIL files/trigger: call ") and err.count("\n") == 1
    assert out.startswith("FAIL files/trigger: call ")
