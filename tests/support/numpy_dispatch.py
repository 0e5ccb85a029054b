"""numpy's SIMD dispatch, switched off for a port whose answers must not depend on the CPU.

numpy sends ``argsort``, ``argpartition`` and other kernels to SIMD code (AVX-512, AVX2, ...)
where the CPU has it, and each kernel orders equal keys its own way. The catalogue models
numpy's portable C code (:mod:`conformance.mutants._sorts`), so a test port that calls numpy's
sorts and must be named exactly by the triage runs with every dispatched feature switched off:
then it answers on any machine as numpy's portable code does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any


def dispatched_features() -> list[str]:
    """The features numpy dispatches to on this CPU beyond its build's baseline."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as umath  # type: ignore[no-redef]
    found = umath.__cpu_features__
    return [name for name in umath.__cpu_dispatch__ if found.get(name)]


def portable_numpy_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` run with numpy's dispatch switched off (through ``env``, so that the adapter
    command is still one argument vector)."""
    return ["env", f"NPY_DISABLE_CPU_FEATURES={' '.join(dispatched_features())}", *argv]


def numpy_answers(script: str, payload: Any, disabled: Sequence[str] | None = None) -> Any:
    """Run ``script`` in a fresh interpreter with ``payload`` as JSON on its stdin and return
    the JSON it prints; ``disabled`` names the features switched off for its numpy."""
    env = dict(os.environ)
    if disabled is not None:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(disabled)
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(done.stdout)


def widest_group() -> list[str]:
    """The dispatched features of this CPU's widest SIMD group: switching them off changes what
    numpy runs on any machine that has any (AVX-512 where found, else AVX2, else all of them),
    so a test that depends on the dispatch shows it wherever it runs."""
    found = dispatched_features()
    for prefixes in (("X86_V4", "AVX512"), ("X86_V3", "AVX2", "FMA3", "F16C", "AVX")):
        group = [name for name in found if name.startswith(prefixes)]
        if group:
            return group
    return found


if __name__ == "__main__":  # .ci/run: NPY_DISABLE_CPU_FEATURES="$(python3 -m tests.support...)"
    print(" ".join(widest_group()))
