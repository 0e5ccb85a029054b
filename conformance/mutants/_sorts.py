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

Both take the values as a sequence of floats and return indices into it.
"""

from __future__ import annotations

from collections.abc import Sequence

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
