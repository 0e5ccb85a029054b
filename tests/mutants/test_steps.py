"""conformance.mutants.steps: std::stof's range refusal is glibc's own rule."""

from __future__ import annotations

import ctypes
import errno
import platform
import random
import struct
from decimal import Decimal
from fractions import Fraction

import pytest

from conformance.mutants.steps import strtof_range_error

#: Decimals around the subnormal range and its edges, and beyond the float32 range.
EDGES = [
    "1.401298464324817e-45",  # 2^-149 as the vectors write it: inexact, tiny
    "1.40129846432481707092372958328991613128026194187651577175706828388979108268586060148663818"
    "836212158203125e-45",  # 2^-149 exactly: no range error
    "1.1754943508222875e-38",  # 2^-126, the smallest normal
    "1.1754942106924411e-38",  # the largest subnormal, inexact
    "1.17549433e-38",  # rounds up to 2^-126 once rounded to 24 bits: not tiny
    "1.1754942807573643e-38",  # the midpoint below 2^-126, within a hair: tiny
    "7.006492321624085e-46",
    "-1.401298464324817e-45",
    "1e-50",
    "-1e-50",
    "0",
    "-0",
    "1e39",
    "3.4028235677973366e+38",
]


@pytest.mark.skipif(platform.system() != "Linux", reason="glibc's strtof is the oracle")
def test_the_range_error_is_glibcs_strtof_errno() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.strtof.restype = ctypes.c_float
    libc.strtof.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    rng = random.Random(20261207)
    texts = list(EDGES)
    for _ in range(2000):
        bits = rng.randrange(0, 0x01000000)  # subnormals and the lowest normals
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
        texts.append(repr(value))
        texts.append(repr(value * (1 + rng.uniform(-1e-7, 1e-7))))
    refused = 0
    for text in texts:
        ctypes.set_errno(0)
        libc.strtof(text.encode("ascii"), None)
        glibc = ctypes.get_errno() == errno.ERANGE
        refused += glibc
        assert strtof_range_error(Fraction(Decimal(text))) == glibc, text
    assert 0 < refused < len(texts)
