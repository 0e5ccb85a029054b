"""`snapkv-conformance generate --out`: a path that is not a suite is refused, and a write that
fails halfway changes nothing.
"""

from __future__ import annotations

from conformance import cli
from conformance.report import outputs
from conformance.tools.generate import generator


def test_generate_refuses_an_out_that_is_a_file_or_holds_other_json(tmp_path, capsys):
    afile = tmp_path / "notes.txt"
    afile.write_text("keep me")
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text("{}")
    assert cli.main(["generate", "--out", str(afile)]) == 2
    assert cli.main(["generate", "--check", "--out", str(afile)]) == 2
    assert cli.main(["generate", "--out", str(project)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"--out {afile}: exists and is not a directory" in captured.err
    assert f"{project / 'package.json'} is not a vector file" in captured.err
    assert afile.read_text() == "keep me"
    assert (project / "package.json").read_text() == "{}"


def test_generate_failing_halfway_changes_nothing(monkeypatch, tmp_path, capsys):
    files = dict(list(generator.build_suite().items())[:3])
    monkeypatch.setattr(generator, "build_suite", lambda: files)
    out = tmp_path / "suite"
    assert cli.main(["generate", "--out", str(out)]) == 0
    for path in out.rglob("*.json"):  # edited by hand: every file must be rewritten
        path.write_text(path.read_text().replace('"description": "', '"description": "Edited. '))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    written = []
    original = outputs.stage

    def fail_on_second(target, data, info):
        written.append(target)
        if len(written) == 2:
            raise OSError(28, "No space left on device", str(target))
        return original(target, data, info)

    monkeypatch.setattr(outputs, "stage", fail_on_second)
    capsys.readouterr()
    assert cli.main(["generate", "--out", str(out)]) == 2
    assert "nothing changed" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]  # no staging left behind
