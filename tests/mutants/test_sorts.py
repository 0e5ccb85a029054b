"""conformance.mutants._sorts: unstable sorts written out, the same on every machine."""

from __future__ import annotations

import platform
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import mutants
from conformance.explain.play import play
from conformance.mutants._sorts import numpy_argpartition, numpy_argsort
from conformance.spec import resources
from conformance.suite.vectors import load_suite
from tests.support.numpy_dispatch import dispatched_features, numpy_answers

#: Replays the catalogue, the fast path or numpy-built ports: must hold on any CPU and numpy.
pytestmark = pytest.mark.numpy_dispatch

#: Few distinct values, so that most keys are tied: the case where the algorithms differ.
tied_values = st.lists(st.integers(0, 3).map(float), min_size=1, max_size=300)


@settings(max_examples=200, deadline=None)
@given(values=tied_values)
def test_numpy_argsort_returns_a_permutation_that_sorts(values: list[float]) -> None:
    order = numpy_argsort(values)
    assert sorted(order) == list(range(len(values)))
    ranked = [values[index] for index in order]
    assert ranked == sorted(values)


@settings(max_examples=200, deadline=None)
@given(values=tied_values, data=st.data())
def test_numpy_argpartition_puts_the_kth_in_place_and_splits_around_it(
    values: list[float], data: st.DataObject
) -> None:
    kth = data.draw(st.integers(0, len(values) - 1))
    order = numpy_argpartition(values, kth)
    assert sorted(order) == list(range(len(values)))
    ranked = [values[index] for index in order]
    assert ranked[kth] == sorted(values)[kth]
    assert all(value <= ranked[kth] for value in ranked[:kth])
    assert all(value >= ranked[kth] for value in ranked[kth + 1 :])


def test_numpy_argpartition_refuses_a_kth_out_of_bounds() -> None:
    with pytest.raises(ValueError, match="kth 3 is out of bounds for 3 values"):
        numpy_argpartition([1.0, 2.0, 3.0], 3)


def test_the_written_out_sorts_leave_ties_where_no_stable_sort_would() -> None:
    """Not stable: on a tie-heavy input both leave equal keys out of index order (else they
    would model nothing a stable sort does not)."""
    values = [float(i % 3 == 0) for i in range(40)]
    order = numpy_argsort(values)
    assert order != sorted(range(40), key=lambda i: (values[i], i))
    part = numpy_argpartition(values, 10)[:11]
    assert sorted(part) != [i for i in range(40) if values[i] == 0.0][:11]


def _tie_heavy_cases() -> Iterator[tuple[list[float], int]]:
    rng = np.random.default_rng(20261205)
    for size in (2, 3, 16, 17, 33, 129, 200, 1025):
        for distinct in (2, 3, 50):
            values = rng.integers(0, distinct, size).astype(float).tolist()
            yield values, int(rng.integers(0, size))
            yield sorted(values), size // 2
            yield sorted(values, reverse=True), size - 1


_NUMPY_PORTABLE = """
import json, sys
import numpy as np
cases = json.load(sys.stdin)
print(json.dumps([
    [np.argsort(np.array(values)).tolist(), np.argpartition(np.array(values), kth).tolist()]
    for values, kth in cases
]))
"""


@pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"),
    reason="numpy's portable sort is selected by switching off x86 dispatch only",
)
def test_the_written_out_sorts_are_numpys_portable_code() -> None:
    """numpy, with every SIMD kernel it dispatches to switched off, answers as the written-out
    sorts do on tie-heavy inputs of every size the suite uses: they model numpy's own code, not
    a sort of ours that happens to be unstable."""
    cases = list(_tie_heavy_cases())
    answers = numpy_answers(_NUMPY_PORTABLE, cases, dispatched_features())
    for (values, kth), (argsort, argpartition) in zip(cases, answers, strict=True):
        assert numpy_argsort(values) == argsort, (len(values), "argsort")
        assert numpy_argpartition(values, kth) == argpartition, (len(values), kth)


@pytest.mark.slow
def test_no_catalogued_mistake_calls_numpys_unstable_sorts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Their order among equal keys is the CPU's (numpy dispatches to SIMD kernels), so a
    mistake calling them would answer one way on the machine that computed the shipped
    outcomes (conformance/data/kills.json) and another elsewhere. (A replay turns an exception
    into a crash outcome, so the calls are recorded, not refused.)"""
    calls: list[str] = []

    def recording(name: str, original: Any) -> Any:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            if not (name in ("argsort", "sort") and kwargs.get("kind") in ("stable", "mergesort")):
                calls.append(name)
            return original(*args, **kwargs)

        return recorded

    for name in ("argsort", "sort", "argpartition", "partition"):
        monkeypatch.setattr(np, name, recording(name, getattr(np, name)))
    ties = [
        vector
        for vector in load_suite([str(resources.suite_dir())])
        if vector.id.startswith(("ties/", "evict/")) and len(vector.calls) < 2000
    ]
    assert ties
    for mutant in mutants.CATALOGUE:
        for vector in ties:
            play(mutant.policy, vector)
            assert not calls, f"{mutant.name} called np.{calls[0]} on {vector.id}"


# -- libstdc++ and PyTorch's CPU topk, against the real library ---------------------------------

_LIBSTDCXX_PROGRAM = r"""
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>
// Reads cases "n k v0 ... v(n-1)" and prints, per case, the indices std::sort,
// std::nth_element(begin + k), std::partial_sort(begin + k) and the topk of TopKImpl.h
// (largest=false, then largest=true) leave, comparing values only.
typedef std::pair<double, long> elem;
static bool less_value(const elem& x, const elem& y) { return x.first < y.first; }
static bool greater_value(const elem& x, const elem& y) { return x.first > y.first; }
static void show(const std::vector<elem>& v, long count) {
  for (long i = 0; i < count; i++) std::printf("%ld ", v[i].second);
  std::printf("\n");
}
static void topk(std::vector<elem> q, long k, bool largest) {
  bool (*cmp)(const elem&, const elem&) = largest ? greater_value : less_value;
  long n = (long)q.size();
  if (k == 0) { std::printf("\n"); return; }
  if (k * 64 <= n) {
    std::partial_sort(q.begin(), q.begin() + k, q.end(), cmp);
  } else {
    std::nth_element(q.begin(), q.begin() + k - 1, q.end(), cmp);
    std::sort(q.begin(), q.begin() + k - 1, cmp);
  }
  show(q, k);
}
int main() {
  long n, k;
  while (std::scanf("%ld %ld", &n, &k) == 2) {
    std::vector<elem> v(n);
    for (long i = 0; i < n; i++) { std::scanf("%lf", &v[i].first); v[i].second = i; }
    std::vector<elem> a = v, b = v, c = v;
    std::sort(a.begin(), a.end(), less_value);
    show(a, n);
    std::nth_element(b.begin(), b.begin() + k, b.end(), less_value);
    show(b, n);
    std::partial_sort(c.begin(), c.begin() + k, c.end(), less_value);
    show(c, n);
    topk(v, k, false);
    topk(v, k, true);
  }
  return 0;
}
"""


def _libstdcxx_cases() -> Iterator[tuple[list[float], int]]:
    rng = np.random.default_rng(20261206)
    for size in (1, 2, 3, 4, 5, 15, 16, 17, 18, 33, 64, 65, 129, 200, 640, 1025):
        for distinct in (1, 2, 3, 50):
            values = rng.integers(0, distinct, size).astype(float).tolist()
            for k in sorted(
                {0, 1, size // 64, size // 2, size - 1, size, int(rng.integers(0, size + 1))}
            ):
                if 0 <= k <= size:
                    yield values, k
            yield sorted(values), size // 2
            yield sorted(values, reverse=True), max(size - 1, 0)


@pytest.mark.slow
def test_the_written_out_cxx_algorithms_are_libstdcxxs_own(tmp_path: Any) -> None:
    """std::sort, std::nth_element, std::partial_sort and TopKImpl.h's topk, compiled with g++
    against this machine's libstdc++ and comparing values only, leave tied elements exactly
    where the written-out ones do, on tie-heavy inputs of every size the suite uses: they model
    the library's code, not a sort of ours that happens to be unstable."""
    import subprocess

    from conformance.mutants._sorts import std_nth_element, std_partial_sort, std_sort, torch_topk
    from tests.support.toolchains import require_tools

    gxx = require_tools("g++")["g++"]
    source = tmp_path / "sorts.cpp"
    source.write_text(_LIBSTDCXX_PROGRAM)
    binary = tmp_path / "sorts"
    subprocess.run([gxx, "-O2", "-o", str(binary), str(source)], check=True)
    cases = list(_libstdcxx_cases())
    feed = "".join(f"{len(v)} {k} {' '.join(repr(x) for x in v)}\n" for v, k in cases)
    out = subprocess.run([str(binary)], input=feed, capture_output=True, text=True, check=True)
    lines = out.stdout.split("\n")

    def less(x: Any, y: Any) -> bool:
        return x[0] < y[0]

    for number, (values, k) in enumerate(cases):
        got = [[int(i) for i in line.split()] for line in lines[5 * number : 5 * number + 5]]
        pairs = [(value, index) for index, value in enumerate(values)]
        ours = []
        for run, argument in ((std_sort, None), (std_nth_element, k), (std_partial_sort, k)):
            items = list(pairs)
            run(items, less) if argument is None else run(items, argument, less)  # type: ignore[operator]
            ours.append([index for _, index in items])
        ours.append(torch_topk(values, k, largest=False))
        ours.append(torch_topk(values, k, largest=True))
        assert ours == got, (len(values), k)


_JAVA_PROGRAM = """
import java.util.*;
// Reads cases "n k v0 ... v(n-1)" and prints, per case, the first k indices polled from a
// PriorityQueue of 0..n-1 (offered in order) ordered by Double.compare of their values.
public class Polls {
  public static void main(String[] args) {
    Scanner in = new Scanner(System.in).useLocale(Locale.ROOT);
    StringBuilder out = new StringBuilder();
    while (in.hasNextInt()) {
      int n = in.nextInt(), k = in.nextInt();
      double[] v = new double[n];
      for (int i = 0; i < n; i++) v[i] = in.nextDouble();
      PriorityQueue<Integer> queue = new PriorityQueue<>((a, b) -> Double.compare(v[a], v[b]));
      for (int i = 0; i < n; i++) queue.add(i);
      for (int i = 0; i < k; i++) out.append(queue.poll()).append(' ');
      out.append('\\n');
    }
    System.out.print(out);
  }
}
"""


@pytest.mark.slow
def test_the_written_out_priority_queue_is_openjdks(tmp_path: Any) -> None:
    """java.util.PriorityQueue, run by this machine's JDK on tie-heavy inputs, polls the
    indices the written-out heap polls."""
    import subprocess

    from conformance.mutants._sorts import java_priority_queue_polls
    from tests.support.toolchains import require_tools

    tools = require_tools("javac", "java")
    (tmp_path / "Polls.java").write_text(_JAVA_PROGRAM)
    subprocess.run([tools["javac"], "Polls.java"], cwd=tmp_path, check=True)
    cases = list(_libstdcxx_cases())
    feed = "".join(f"{len(v)} {k} {' '.join(repr(x) for x in v)}\n" for v, k in cases)
    out = subprocess.run(
        [tools["java"], "-cp", str(tmp_path), "Polls"],
        input=feed,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = out.stdout.split("\n")
    for number, (values, k) in enumerate(cases):
        assert java_priority_queue_polls(values, k) == [int(i) for i in lines[number].split()]
