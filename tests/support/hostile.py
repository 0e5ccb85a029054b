"""What the hostile tests share: inline adapters, the kit in a subprocess, bounded waits on
processes and files, and a cleanup that leaves no stray behind even when a test fails.

Every wait here has a deadline and polls; nothing sleeps to synchronise.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: The reference adapter's loop for inline adapters to wrap: ``serve()`` answers every line;
#: ``answer(line)`` gives the reference's answer (None for a blank line).
SERVE = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
from conformance.adapter.server import Session, encode
session = Session()
def answer(line):
    return session.handle_line(line)
def serve():
    for line in sys.stdin.buffer:
        got = session.handle_line(line)
        if got is not None:
            sys.stdout.buffer.write(encode(got))
            sys.stdout.buffer.flush()
"""


def adapter(source: str, *args: str) -> list[str]:
    """An inline adapter: ``source`` run by this Python."""
    return [sys.executable, "-c", textwrap.dedent(source), *args]


def kit(
    *args: str, timeout: float = 300, cwd: Path | None = None, **options: object
) -> subprocess.CompletedProcess[str]:
    """``snapkv-conformance ARGS`` in a subprocess, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        check=False,
        **options,  # type: ignore[call-overload]
    )


def running(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its parent counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return False


def gone(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` is gone within ``within`` seconds."""
    deadline = time.monotonic() + within
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def wait_for_text(path: Path, within: float = 60.0) -> str:
    """The text of ``path`` once something is written there (waited for up to ``within``
    seconds); fails the test otherwise."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):
            text = path.read_text()
            if text.strip():
                return text
        time.sleep(0.02)
    raise AssertionError(f"nothing was written to {path} within {within} s")


def marked(marker: str) -> list[int]:
    """The running processes whose command line holds ``marker``."""
    found = []
    needle = marker.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if needle in handle.read() and running(int(name)):
                    found.append(int(name))
        except OSError:
            continue
    return found


def none_marked(marker: str, within: float = 10.0) -> bool:
    """Whether no process holding ``marker`` runs, within ``within`` seconds."""
    deadline = time.monotonic() + within
    while marked(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def exterminate(marker: str) -> None:
    """Freeze then kill every process holding ``marker``, until none is left: a test's
    cleanup, so that a failing test leaves no fork storm or chain running."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = marked(marker)
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def cleaned(marker: str) -> Iterator[str]:
    """``marker`` for the processes a test starts, exterminated afterwards whatever happens."""
    try:
        yield marker
    finally:
        exterminate(marker)


def hanging_adapter(pid_file: Path, marker: str = "") -> list[str]:
    """An adapter that shakes hands, then at its first step writes its pid to ``pid_file``
    and hangs (a port stuck in a loop); ``marker`` is an argument that names it."""
    return adapter(
        SERVE
        + f"""
import os, time
for line in sys.stdin.buffer:
    if b'"step"' in line:
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        time.sleep(3600)
    got = answer(line)
    if got is not None:
        sys.stdout.buffer.write(encode(got))
        sys.stdout.buffer.flush()
""",
        *([marker] if marker else []),
    )


def signal_another_thread(signum: int, when: Callable[[], bool], within: float = 60.0) -> None:
    """Once ``when()`` holds, deliver ``signum`` to a thread other than the main one, as the
    kernel may deliver a signal sent to the kit (it picks any thread that does not block it):
    Python then runs the handler only when the main thread next runs Python code."""

    def deliver() -> None:
        deadline = time.monotonic() + within
        while not when() and time.monotonic() < deadline:
            time.sleep(0.01)
        signal.pthread_kill(threading.get_ident(), signum)

    threading.Thread(target=deliver, daemon=True).start()
