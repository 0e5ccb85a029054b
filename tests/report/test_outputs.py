"""Output files: replaced whole when regular, written through when anything else."""

from __future__ import annotations

import io
import os
import stat
import threading
from pathlib import Path

import pytest

from conformance.report import outputs
from conformance.report.outputs import GuardedStream, OutputError, write_output


def test_a_new_file_is_created_with_its_parents_and_the_usual_mode(tmp_path):
    target = tmp_path / "a" / "b" / "report.json"
    write_output(target, b"new")
    assert target.read_bytes() == b"new"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


def test_a_regular_file_is_replaced_keeping_its_mode(tmp_path):
    target = tmp_path / "report.json"
    target.write_bytes(b"old")
    target.chmod(0o600)
    write_output(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_failed_write_keeps_the_old_file_and_names_the_path_asked_for(monkeypatch, tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")

    def failing_replace(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", failing_replace)
    with pytest.raises(OutputError) as caught:
        write_output(target, b"new")
    assert caught.value.filename == str(target)  # not the temporary file
    assert str(caught.value) == f"{target}: No space left on device"
    assert isinstance(caught.value, OSError)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_symlink_stays_a_link_and_its_target_is_updated(tmp_path):
    real = tmp_path / "runs" / "2024.json"
    real.parent.mkdir()
    real.write_bytes(b"old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    write_output(link, b"new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b"new"


def test_a_dangling_symlink_gets_its_target_created(tmp_path):
    real = tmp_path / "out" / "report.json"
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    write_output(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"


def test_a_fifo_is_written_through_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_output(fifo, b"through the pipe")
    reader.join(20)
    assert received == [b"through the pipe"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_device_is_written_through_and_never_replaced():
    before = os.stat(os.devnull)
    write_output(os.devnull, b"discarded")
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_a_symlink_to_a_device_is_written_through(tmp_path):
    link = tmp_path / "sink"
    link.symlink_to(os.devnull)
    write_output(link, b"discarded")
    assert link.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(OutputError, match="is a directory"):
        write_output(tmp_path, b"x")


def test_text_with_a_lone_surrogate_is_written_escaped(tmp_path):
    target = tmp_path / "matrix.md"
    outputs.write_text(target, "name \ud800\n")
    assert target.read_bytes() == b"name \\ud800\n"


class Broken(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


class Ascii(io.StringIO):
    encoding = "ascii"

    def write(self, text: str) -> int:
        text.encode(self.encoding)
        return super().write(text)


def test_a_guarded_stream_goes_quiet_instead_of_raising():
    guard = GuardedStream(Broken())
    assert guard.write("lost\n") == 5
    guard.flush()
    assert guard.lost


def test_a_guarded_stream_escapes_what_its_encoding_cannot_hold():
    stream = Ascii()
    guard = GuardedStream(stream)
    guard.write("caf\xe9 \ud800\n")
    assert stream.getvalue() == "caf\\xe9 \\ud800\n" and not guard.lost


def test_output_paths_are_named_in_errors_even_for_a_bad_parent(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OutputError) as caught:
        write_output(Path(blocker, "sub", "report.json"), b"x")
    assert caught.value.filename == str(blocker / "sub" / "report.json")


def test_dev_stdout_appends_to_a_redirected_file(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "out.txt"
    script = (
        "import sys; from conformance.report.outputs import write_output; "
        "print('before', flush=True); write_output('/dev/stdout', b'report\\n'); print('after')"
    )
    with open(out, "w") as stream:
        subprocess.run([sys.executable, "-c", script], stdout=stream, check=True, timeout=60)
    assert out.read_text() == "before\nreport\nafter\n"
