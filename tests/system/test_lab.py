"""benchmarks/lab.py runs end to end as README documents it: a quick run of every part, with
its JSON and plots, and an unwritable output refused before any work.

The plots need the ``lab`` extra (matplotlib) and the real-attention part the ``record``
extra and the model; without them those parts are skipped here, or fail when ``CI`` is set.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.tools.record import RecordSetupError, model_path, require_extras
from tests.support.paths import ROOT

LAB = ROOT / "benchmarks" / "lab.py"


def lab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(LAB), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _have_model() -> bool:
    try:
        require_extras()
        model_path()
    except RecordSetupError as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the recorder's extra and model: {error}")
        return False
    return True


def test_quick_run_of_every_part_writes_json_and_plots(tmp_path: Path) -> None:
    if importlib.util.find_spec("matplotlib") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install the lab extra (matplotlib)")
        pytest.skip("the plots need the lab extra: pip install '.[lab]'")
    real = _have_model()
    out = tmp_path / "new" / "dir"
    done = lab("--quick", "--plots", str(out), "--json", str(out / "lab.json"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    results = json.loads((out / "lab.json").read_text())
    assert {"memory", "canonical", "steady", "phrase"} <= set(results)
    assert results["memory"]["reference_per_kept"] > results["memory"]["snapkv_state"]
    # TOVA written independently agrees with SnapKV at poolKernel 1, obsWindow 1 (§2.7).
    assert all(same["obs1"] for same in results["canonical"]["tova_identical"].values())
    assert (out / "synthetic.png").stat().st_size > 10_000
    if real:
        assert set(results["real"]["nll"]["16"]) == {
            "SnapKV k7", "SnapKV k3", "SnapKV k1", "TOVA", "H2O", "recent-only"
        }  # fmt: skip
        assert (out / "real.png").stat().st_size > 10_000


def test_plots_of_the_real_part_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--parts real --plots DIR`` has no synthetic panel to draw: only real.png is written
    (it used to end in a ValueError for a figure of zero columns)."""
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("the plots need the lab extra: pip install '.[lab]'")
    spec = importlib.util.spec_from_file_location("lab", LAB)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "lab", module)  # its dataclasses look themselves up
    spec.loader.exec_module(module)
    names = list(module.POLICIES)
    row = {name: 0.5 + index / 20 for index, name in enumerate(names)}
    real = {"tokens": 64, "retained": {"16": row, "32": row}, "nll": {"16": row}}
    written = module.plot({"real": real}, tmp_path)
    assert [path.name for path in written] == ["real.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["real.png"]


def test_an_unwritable_output_is_refused_before_any_work(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = lab("--json", str(blocker / "lab.json"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("lab: error: --json ") and done.stderr.count("\n") == 1
    assert "==" not in done.stdout  # no part ran
    done = lab("--json", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "is a directory" in done.stderr
