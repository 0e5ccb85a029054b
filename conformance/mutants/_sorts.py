"""Unstable sorts and selections as a port's library runs them, written out so that they answer
the same on every machine.

A port that ranks with an unstable sort or a partial selection evicts, among equal scores,
whichever positions the algorithm happens to leave in front. Which ones depends on the
algorithm's every comparison and swap, and for numpy also on the machine: numpy dispatches
``argsort`` and ``argpartition`` to SIMD kernels (AVX-512, AVX2, Highway) where the CPU has
them, and each kernel orders ties its own way. The catalogue's mistakes must answer the same
wherever the kit runs (their outcomes on the committed suite are shipped in
``conformance/data/kills.json``), so they call these functions, never numpy's: each is the
portable C code of the library named, step for step, comparing values only (``a < b``) exactly
as it does, and returns the same permutation of indices on every machine.

- :func:`numpy_argsort`: ``np.argsort(values)`` with the default kind, as numpy's portable
  introsort does it (median-of-3 quicksort, insertion sort below 16 elements, heapsort past
  ``2 * floor(log2(n))`` levels): what numpy answers where no SIMD sort is dispatched.
- :func:`numpy_argpartition`: ``np.argpartition(values, kth)``, as numpy's portable introselect
  does it (median-of-3 quickselect, a quadratic selection for a ``kth`` within 3 of the start,
  median of medians of 5 past ``2 * floor(log2(n))`` rounds).
- :func:`std_sort`, :func:`std_nth_element` and :func:`std_partial_sort`: the C++ standard
  library's ``std::sort``, ``std::nth_element`` and ``std::partial_sort`` as libstdc++ (GCC's,
  ``bits/stl_algo.h`` and ``bits/stl_heap.h``) writes them: introsort (median-of-3 quicksort,
  heapsort past ``2 * floor(log2(n))`` levels, one insertion sort over the whole at the end),
  introselect (the same partition, a heap selection past the depth limit, insertion sort below
  4 elements) and heap selection (a max-heap of the first ``middle`` elements, then sorted).
  Each permutes a list in place with the port's own ``less``, called exactly as libstdc++ calls
  its comparator.
- :func:`java_priority_queue_polls`: the indices ``java.util.PriorityQueue`` polls first when
  the indices are offered in order and compared by value alone (OpenJDK's ``siftUp`` and
  ``siftDown``).
- :func:`torch_topk`: ``torch.topk(values, k, largest=...)`` on the CPU, as PyTorch's
  ``aten/src/ATen/native/TopKImpl.h`` runs it: (value, index) pairs compared by value alone,
  ``std::partial_sort`` when ``k * 64 <= n``, otherwise ``std::nth_element`` at ``k - 1`` and
  ``std::sort`` of the ``k - 1`` before it.

numpy's take the values as a sequence of floats and return indices into it; the C++ ones take a
list and a ``less``, as the C++ takes iterators and a comparator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Less = Callable[[Any, Any], bool]

#: numpy's insertion-sort threshold: a part of at most 16 elements is insertion-sorted.
_SMALL_QUICKSORT = 15


def _msb(n: int) -> int:
    """floor(log2(n)) for n >= 1, and 0 for n <= 1 (numpy's ``npy_get_msb``)."""
    depth = 0
    n >>= 1
    while n:
        depth += 1
        n >>= 1
    return depth


def numpy_argsort(values: Sequence[float]) -> list[int]:
    """The indices that sort ``values`` ascending, ties in the order numpy's portable introsort
    leaves them (``np.argsort(values)`` where numpy dispatches no SIMD sort)."""
    v = list(values)
    order = list(range(len(v)))
    if len(order) < 2:
        return order
    stack: list[tuple[int, int, int]] = []
    low, high = 0, len(order) - 1
    depth = _msb(len(order)) * 2
    while True:
        if depth < 0:
            _heapsort(v, order, low, high)
        else:
            while high - low > _SMALL_QUICKSORT:
                mid = low + ((high - low) >> 1)
                if v[order[mid]] < v[order[low]]:
                    order[mid], order[low] = order[low], order[mid]
                if v[order[high]] < v[order[mid]]:
                    order[high], order[mid] = order[mid], order[high]
                if v[order[mid]] < v[order[low]]:
                    order[mid], order[low] = order[low], order[mid]
                pivot = v[order[mid]]
                i, j = low, high - 1
                order[mid], order[j] = order[j], order[mid]
                while True:
                    i += 1
                    while v[order[i]] < pivot:
                        i += 1
                    j -= 1
                    while pivot < v[order[j]]:
                        j -= 1
                    if i >= j:
                        break
                    order[i], order[j] = order[j], order[i]
                order[i], order[high - 1] = order[high - 1], order[i]
                # the larger part waits on the stack; the loop goes on with the smaller one
                depth -= 1
                if i - low < high - i:
                    stack.append((i + 1, high, depth))
                    high = i - 1
                else:
                    stack.append((low, i - 1, depth))
                    low = i + 1
            for i in range(low + 1, high + 1):
                index = order[i]
                value = v[index]
                j = i
                while j > low and value < v[order[j - 1]]:
                    order[j] = order[j - 1]
                    j -= 1
                order[j] = index
        if not stack:
            return order
        low, high, depth = stack.pop()


def _heapsort(v: Sequence[float], order: list[int], low: int, high: int) -> None:
    """numpy's heapsort of ``order[low:high + 1]`` by value (its 1-based heap, a max-heap)."""
    n = high - low + 1

    def at(k: int) -> int:  # the heap's 1-based slot k
        return low + k - 1

    def sift(top: int, item: int, size: int) -> None:
        i, j = top, top * 2
        while j <= size:
            if j < size and v[order[at(j)]] < v[order[at(j + 1)]]:
                j += 1
            if v[item] < v[order[at(j)]]:
                order[at(i)] = order[at(j)]
                i, j = j, j * 2
            else:
                break
        order[at(i)] = item

    for top in range(n >> 1, 0, -1):
        sift(top, order[at(top)], n)
    while n > 1:
        item = order[at(n)]
        order[at(n)] = order[at(1)]
        n -= 1
        sift(1, item, n)


def numpy_argpartition(values: Sequence[float], kth: int) -> list[int]:
    """The indices of ``values`` partitioned around ``kth`` (its element in place, none greater
    before it, none smaller after it), as numpy's portable introselect leaves them
    (``np.argpartition(values, kth)`` where numpy dispatches no SIMD selection)."""
    v = list(values)
    order = list(range(len(v)))
    if not 0 <= kth < len(order):
        raise ValueError(f"kth {kth} is out of bounds for {len(order)} values")
    _introselect(v, order, 0, len(order), kth)
    return order


def _introselect(v: Sequence[float], order: list[int], base: int, num: int, kth: int) -> None:
    """numpy's ``introselect_`` on ``order[base:base + num]`` (``kth`` relative to ``base``)."""

    def swap(a: int, b: int) -> None:
        order[base + a], order[base + b] = order[base + b], order[base + a]

    def value(i: int) -> float:
        return v[order[base + i]]

    low, high = 0, num - 1
    if kth - low < 3:  # quadratic selection of the few smallest
        for i in range(low, kth + 1):
            smallest, least = i, value(i)
            for k in range(i + 1, high + 1):
                if value(k) < least:
                    smallest, least = k, value(k)
            swap(i, smallest)
        return
    if kth == num - 1:  # the maximum: the last of the largest values goes last
        largest, most = low, value(low)
        for k in range(low + 1, num):
            if not value(k) < most:
                largest, most = k, value(k)
        swap(kth, largest)
        return
    depth = _msb(num) * 2
    while low + 1 < high:
        ll, hh = low + 1, high
        if depth > 0 or hh - ll < 5:
            mid = low + (high - low) // 2
            if value(high) < value(mid):
                swap(high, mid)
            if value(high) < value(low):
                swap(high, low)
            if value(low) < value(mid):
                swap(low, mid)
            swap(mid, low + 1)
        else:
            mid = ll + _median_of_medians5(v, order, base + ll, hh - ll)
            swap(mid, low)
            ll -= 1
            hh += 1
        depth -= 1
        pivot = value(low)
        while True:
            ll += 1
            while value(ll) < pivot:
                ll += 1
            hh -= 1
            while pivot < value(hh):
                hh -= 1
            if hh < ll:
                break
            swap(ll, hh)
        swap(low, hh)
        if hh >= kth:
            high = hh - 1
        if hh <= kth:
            low = ll
    if high == low + 1 and value(high) < value(low):
        swap(high, low)


def _median_of_medians5(v: Sequence[float], order: list[int], base: int, num: int) -> int:
    """numpy's ``median_of_median5_``: the medians of each group of 5 moved to the front, then
    their median selected among them; returns its index relative to ``base``."""
    groups = num // 5
    for group in range(groups):
        start = base + group * 5
        middle = _median5(v, order, start)
        order[start + middle], order[base + group] = order[base + group], order[start + middle]
    if groups > 2:
        _introselect(v, order, base, groups, groups // 2)
    return groups // 2


def _median5(v: Sequence[float], order: list[int], start: int) -> int:
    """numpy's ``median5_``: sorts pairs of ``order[start:start + 5]`` by value as it goes and
    returns the index (0-4) of the median."""

    def swap_if_less(a: int, b: int) -> None:  # swap when the value at a is less than at b
        if v[order[start + a]] < v[order[start + b]]:
            order[start + a], order[start + b] = order[start + b], order[start + a]

    swap_if_less(1, 0)
    swap_if_less(4, 3)
    swap_if_less(3, 0)
    swap_if_less(4, 1)
    swap_if_less(2, 1)
    if v[order[start + 3]] < v[order[start + 2]]:
        return 1 if v[order[start + 3]] < v[order[start + 1]] else 3
    return 2


# -- libstdc++ (GCC's C++ standard library) --------------------------------------------------

#: libstdc++'s ``_S_threshold``: parts of at most 16 elements are left to the final insertion sort.
_STL_THRESHOLD = 16


def _lg(n: int) -> int:
    """libstdc++'s ``std::__lg``: floor(log2(n)) for n >= 1."""
    return n.bit_length() - 1


def std_sort(items: list[T], less: Less) -> None:
    """``std::sort(items.begin(), items.end(), less)`` as libstdc++ runs it, in place."""
    if items:
        _introsort_loop(items, 0, len(items), _lg(len(items)) * 2, less)
        _final_insertion_sort(items, 0, len(items), less)


def std_nth_element(items: list[T], nth: int, less: Less) -> None:
    """``std::nth_element(items.begin(), items.begin() + nth, items.end(), less)`` as
    libstdc++ runs it, in place (``nth == len(items)`` changes nothing, as in C++)."""
    if not 0 <= nth <= len(items):
        raise ValueError(f"nth {nth} is out of bounds for {len(items)} items")
    if not items or nth == len(items):
        return
    _stl_introselect(items, 0, nth, len(items), _lg(len(items)) * 2, less)


def std_partial_sort(items: list[T], middle: int, less: Less) -> None:
    """``std::partial_sort(items.begin(), items.begin() + middle, items.end(), less)`` as
    libstdc++ runs it, in place: the ``middle`` least, sorted, in front."""
    if not 0 <= middle <= len(items):
        raise ValueError(f"middle {middle} is out of bounds for {len(items)} items")
    _heap_select(items, 0, middle, len(items), less)
    _sort_heap(items, 0, middle, less)


def _move_median_to_first(
    items: list[Any], result: int, a: int, b: int, c: int, less: Less
) -> None:
    def swap(i: int, j: int) -> None:
        items[i], items[j] = items[j], items[i]

    if less(items[a], items[b]):
        if less(items[b], items[c]):
            swap(result, b)
        elif less(items[a], items[c]):
            swap(result, c)
        else:
            swap(result, a)
    elif less(items[a], items[c]):
        swap(result, a)
    elif less(items[b], items[c]):
        swap(result, c)
    else:
        swap(result, b)


def _unguarded_partition(items: list[Any], first: int, last: int, pivot: int, less: Less) -> int:
    while True:
        while less(items[first], items[pivot]):
            first += 1
        last -= 1
        while less(items[pivot], items[last]):
            last -= 1
        if not first < last:
            return first
        items[first], items[last] = items[last], items[first]
        first += 1


def _unguarded_partition_pivot(items: list[Any], first: int, last: int, less: Less) -> int:
    mid = first + (last - first) // 2
    _move_median_to_first(items, first, first + 1, mid, last - 1, less)
    return _unguarded_partition(items, first + 1, last, first, less)


def _introsort_loop(items: list[Any], first: int, last: int, depth: int, less: Less) -> None:
    while last - first > _STL_THRESHOLD:
        if depth == 0:
            _heap_select(items, first, last, last, less)  # std::__partial_sort(first, last, last)
            _sort_heap(items, first, last, less)
            return
        depth -= 1
        cut = _unguarded_partition_pivot(items, first, last, less)
        _introsort_loop(items, cut, last, depth, less)
        last = cut


def _stl_introselect(
    items: list[Any], first: int, nth: int, last: int, depth: int, less: Less
) -> None:
    while last - first > 3:
        if depth == 0:
            _heap_select(items, first, nth + 1, last, less)
            items[first], items[nth] = items[nth], items[first]
            return
        depth -= 1
        cut = _unguarded_partition_pivot(items, first, last, less)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(items, first, last, less)


def _unguarded_linear_insert(items: list[Any], last: int, less: Less) -> None:
    value = items[last]
    after = last - 1
    while less(value, items[after]):
        items[last] = items[after]
        last = after
        after -= 1
    items[last] = value


def _insertion_sort(items: list[Any], first: int, last: int, less: Less) -> None:
    if first == last:
        return
    for i in range(first + 1, last):
        if less(items[i], items[first]):
            value = items[i]
            items[first + 1 : i + 1] = items[first:i]  # std::move_backward
            items[first] = value
        else:
            _unguarded_linear_insert(items, i, less)


def _final_insertion_sort(items: list[Any], first: int, last: int, less: Less) -> None:
    if last - first > _STL_THRESHOLD:
        _insertion_sort(items, first, first + _STL_THRESHOLD, less)
        for i in range(first + _STL_THRESHOLD, last):  # std::__unguarded_insertion_sort
            _unguarded_linear_insert(items, i, less)
    else:
        _insertion_sort(items, first, last, less)


def _push_heap(items: list[Any], first: int, hole: int, top: int, value: Any, less: Less) -> None:
    parent = (hole - 1) // 2
    while hole > top and less(items[first + parent], value):
        items[first + hole] = items[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    items[first + hole] = value


def _adjust_heap(
    items: list[Any], first: int, hole: int, length: int, value: Any, less: Less
) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(items[first + child], items[first + child - 1]):
            child -= 1
        items[first + hole] = items[first + child]
        hole = child
    if length & 1 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        items[first + hole] = items[first + child - 1]
        hole = child - 1
    _push_heap(items, first, hole, top, value, less)


def _pop_heap(items: list[Any], first: int, last: int, result: int, less: Less) -> None:
    value = items[result]
    items[result] = items[first]
    _adjust_heap(items, first, 0, last - first, value, less)


def _make_heap(items: list[Any], first: int, last: int, less: Less) -> None:
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(items, first, parent, length, items[first + parent], less)
        if parent == 0:
            return
        parent -= 1


def _heap_select(items: list[Any], first: int, middle: int, last: int, less: Less) -> None:
    _make_heap(items, first, middle, less)
    for i in range(middle, last):
        if less(items[i], items[first]):
            _pop_heap(items, first, middle, i, less)


def _sort_heap(items: list[Any], first: int, last: int, less: Less) -> None:
    while last - first > 1:
        last -= 1
        _pop_heap(items, first, last, last, less)


# -- PyTorch's CPU topk ---------------------------------------------------------------------


def torch_topk(values: Sequence[float], k: int, *, largest: bool) -> list[int]:
    """The indices ``torch.topk(values, k, largest=largest).indices`` gives on the CPU
    (``sorted=True``, the default), as ``TopKImpl.h`` computes them: (value, index) pairs
    compared by value alone (NaN counts as the largest), ``std::partial_sort`` of the first
    ``k`` when ``k * 64 <= n``, otherwise ``std::nth_element`` at ``k - 1`` and ``std::sort``
    of the ``k - 1`` before it; the first ``k`` pairs' indices, in that order."""
    n = len(values)
    if not 0 <= k <= n:
        raise ValueError(f"k {k} is out of range for {n} values")
    if k == 0:
        return []
    queue = [(float(value), index) for index, value in enumerate(values)]

    def nan(x: float) -> bool:
        return x != x

    if largest:

        def less(x: tuple[float, int], y: tuple[float, int]) -> bool:
            return (nan(x[0]) and not nan(y[0])) or x[0] > y[0]
    else:

        def less(x: tuple[float, int], y: tuple[float, int]) -> bool:
            return (not nan(x[0]) and nan(y[0])) or x[0] < y[0]

    if k * 64 <= n:
        std_partial_sort(queue, k, less)
    else:
        std_nth_element(queue, k - 1, less)
        head = queue[: k - 1]
        std_sort(head, less)
        queue[: k - 1] = head
    return [index for _, index in queue[:k]]


# -- OpenJDK's java.util.PriorityQueue --------------------------------------------------------


def java_priority_queue_polls(values: Sequence[float], count: int) -> list[int]:
    """The first ``count`` indices polled from a ``java.util.PriorityQueue<Integer>`` ordered by
    ``Double.compare(values[a], values[b])``, the indices ``0, 1, ...`` offered in that order:
    OpenJDK's binary heap (``offer`` sifts up, ``poll`` moves the last element to the root and
    sifts it down, the smaller child winning only when strictly smaller)."""

    def compare(a: int, b: int) -> int:  # Double.compare: no NaN here; -0.0 below +0.0
        left, right = float(values[a]), float(values[b])
        if left < right:
            return -1
        if left > right:
            return 1
        left_bits = math.copysign(1.0, left)
        right_bits = math.copysign(1.0, right)
        return (left_bits > right_bits) - (left_bits < right_bits)

    queue: list[int] = []
    for item in range(len(values)):  # offer: siftUpUsingComparator
        at = len(queue)
        queue.append(item)
        while at > 0:
            parent = (at - 1) >> 1
            above = queue[parent]
            if compare(item, above) >= 0:
                break
            queue[at] = above
            at = parent
        queue[at] = item
    polled: list[int] = []
    for _ in range(min(count, len(values))):  # poll: siftDownUsingComparator
        polled.append(queue[0])
        last = queue.pop()
        size = len(queue)
        if not size:
            break
        at, half = 0, size >> 1
        while at < half:
            child = 2 * at + 1
            smaller = queue[child]
            right = child + 1
            if right < size and compare(smaller, queue[right]) > 0:
                child = right
                smaller = queue[child]
            if compare(last, smaller) <= 0:
                break
            queue[at] = smaller
            at = child
        queue[at] = last
    return polled
