"""Precision-only ports: the reference with its window sums computed as accelerator and BLAS
code computes them, nothing else changed.

Each port stores the float32 weights in some format and sums each ring in some order and
precision, as a GPU or BLAS port does; everything else (what a step accepts, the ring and its
cursor, pooling, selection) is the reference's. They are what ``run --numerics P`` is for: each
fails the exact suite somewhere and must pass under its profile (:data:`PROFILE_OF`).

- ``bf16-warp``: a bfloat16 history summed in float32 by a warp reduction, as vLLM's
  ``warpReduceSum`` does: 32 lanes, lane ``l`` adding slots ``l, l + 32, ...`` in order, then
  a butterfly of shuffles (``__shfl_xor_sync`` with offsets 16, 8, 4, 2, 1).
- ``f16-ring``: a float16 history summed in float32 in slot order.
- ``f16-result``: a float16 history summed by a float32 pairwise tree, the sum kept as float16.
- ``f32-tree``: the float32 history summed by a float32 pairwise tree.
- ``f64-tree``: the same tree in float64.
- ``rolled``: each ring rolled so that the oldest slot comes first (``np.roll`` by the
  cursor), then summed in buffer order in float64.
- ``dgemv``: the rings times a vector of ones as a blocked GEMV computes it: blocks of 8 slots,
  each block added as a tree into the row's total, the tail one by one, in float64.

Run as a script, ``python tests/support/precision_ports.py NAME`` serves the port over protocol
v1, a real adapter process.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

if __name__ == "__main__":  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.adapter.server import main
from conformance.policy.reference import SnapKV

#: A ring longer than this is summed over its written slots only (a port holds what it uses).
FULL_RING_UP_TO = 4096


def to_bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (to nearest, ties to even; infinity past the range),
    returned as float32."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def to_float16(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to float16 (infinity past 65504), returned as float32."""
    with np.errstate(over="ignore"):
        return values.astype(np.float32).astype(np.float16).astype(np.float32)


def pairwise(matrix: np.ndarray, dtype: type) -> np.ndarray:
    """Each row summed as a balanced tree of adjacent pairs, every addition in ``dtype``."""
    level = matrix.astype(dtype)
    with np.errstate(over="ignore"):
        while level.shape[1] > 1:
            if level.shape[1] % 2:
                level = np.concatenate([level, np.zeros((len(level), 1), dtype)], axis=1)
            level = (level[:, 0::2] + level[:, 1::2]).astype(dtype)
    return level[:, 0] if level.shape[1] else np.zeros(len(level), dtype)


def in_order(matrix: np.ndarray, dtype: type) -> np.ndarray:
    """Each row summed from slot 0 upward, every addition in ``dtype``."""
    total = np.zeros(len(matrix), dtype)
    with np.errstate(over="ignore"):
        for column in matrix.T.astype(dtype):
            total = (total + column).astype(dtype)
    return total


def warp_reduce(matrix: np.ndarray) -> np.ndarray:
    """vLLM's block sum in float32: 32 lanes, each over a strided slice of the slots in order,
    then ``val += __shfl_xor_sync(mask, val, offset)`` for offsets 16, 8, 4, 2, 1; lane 0's
    value."""
    rows, width = matrix.shape
    lanes = np.zeros((rows, 32), np.float32)
    with np.errstate(over="ignore"):
        for slot in range(width):
            lanes[:, slot % 32] = lanes[:, slot % 32] + matrix[:, slot].astype(np.float32)
        for offset in (16, 8, 4, 2, 1):
            partner = np.arange(32) ^ offset
            lanes = (lanes + lanes[:, partner]).astype(np.float32)
    return lanes[:, 0]


def blocked_gemv(matrix: np.ndarray) -> np.ndarray:
    """``matrix @ ones`` in float64 as a blocked kernel adds: blocks of 8 slots, each
    ``((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7))`` added to the row's total, then the
    remaining slots one by one."""
    data = matrix.astype(np.float64)
    total = np.zeros(len(data))
    width = data.shape[1]
    body = width - width % 8
    for start in range(0, body, 8):
        x = [data[:, start + i] for i in range(8)]
        total = total + (((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7])))
    for slot in range(body, width):
        total = total + data[:, slot]
    return total


class PrecisionPort(SnapKV):
    """The reference, but each ring's sum is ``sum_rings`` of its slots as stored."""

    def dense(self) -> np.ndarray:
        """The kept rings as a matrix of float32 values, one column per slot: the whole ring,
        unwritten slots zero (or only the slots written, for a ring too long to hold)."""
        written = max((len(ring.values) for ring in self.rings), default=0)
        size = self.params.obsWindow
        width = size if size <= FULL_RING_UP_TO else written
        matrix = np.zeros((len(self.rings), width), np.float32)
        for row, ring in enumerate(self.rings):
            matrix[row, : len(ring.values)] = ring.values
        return matrix

    def window_sums(self) -> list[float]:
        return [float(value) for value in self.sum_rings(self.dense())]

    def sum_rings(self, rings: np.ndarray) -> np.ndarray:
        """Rings (rows of float32 values, slot by slot) to their sums."""
        raise NotImplementedError


class Bf16Warp(PrecisionPort):
    def sum_rings(self, rings: np.ndarray) -> np.ndarray:
        return warp_reduce(to_bfloat16(rings))


class F16Ring(PrecisionPort):
    def sum_rings(self, rings: np.ndarray) -> np.ndarray:
        return in_order(to_float16(rings), np.float32)


class F16Result(PrecisionPort):
    def sum_rings(self, rings: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return pairwise(to_float16(rings), np.float32).astype(np.float16)


class F32Tree(PrecisionPort):
    def sum_rings(self, rings: np.ndarray) -> np.ndarray:
        return pairwise(rings, np.float32)


class F64Tree(PrecisionPort):
    def sum_rings(self, rings: np.ndarray) -> np.ndarray:
        return pairwise(rings, np.float64)


class Rolled(PrecisionPort):
    def sum_rings(self, rings: np.ndarray) -> np.ndarray:
        # The oldest slot is the one the cursor will write next.
        start = self.slot if rings.shape[1] == self.params.obsWindow else 0
        return in_order(np.roll(rings, -start, axis=1), np.float64)


class Dgemv(PrecisionPort):
    def sum_rings(self, rings: np.ndarray) -> np.ndarray:
        return blocked_gemv(rings)


PORTS: dict[str, type[PrecisionPort]] = {
    "bf16-warp": Bf16Warp,
    "f16-ring": F16Ring,
    "f16-result": F16Result,
    "f32-tree": F32Tree,
    "f64-tree": F64Tree,
    "rolled": Rolled,
    "dgemv": Dgemv,
}
#: The profile whose arithmetic each port uses.
PROFILE_OF = {
    "bf16-warp": "bfloat16",
    "f16-ring": "float16",
    "f16-result": "float16-result",
    "f32-tree": "float32",
    "f64-tree": "float64",
    "rolled": "float64",
    "dgemv": "float64",
}

if __name__ == "__main__":
    name = sys.argv[1]
    implementation = {"name": f"precision port {name}", "language": "python", "version": "0"}
    sys.exit(main(PORTS[name], implementation))
