"""The one place the kit starts a program, and the lifetime of everything it starts.

Every adapter (the port under test, the reference, a mutant) is started by :func:`spawn`, from
an argument vector split once by :func:`split_command` and never through a shell, with its
three pipes, in a process group and session of its own. What the adapter starts in turn is
its business while it runs; once it is done with, none of it survives the kit:

- **the process group**: when the adapter (the group's leader) exits, or is killed, the whole
  group is killed (SIGKILL) before the leader is reaped, so the group id cannot be reused
  meanwhile and no child holding a pipe can turn a crash into a wait;
- **a token in the environment**: each adapter gets ``SNAPKV_CONFORMANCE_ADAPTER=<token>``
  (the kit's pid and a random part), which its descendants inherit. A descendant that left
  the group (``setsid``, a daemon's double fork) still carries it, and is found in ``/proc``
  and killed with its adapter; adapters of another kit process are never touched;
- **the pipes it was given**: once the adapter is dead, any process still holding its stdout
  (a descendant still starting, or one that cleared its environment) is found in ``/proc`` by
  the pipe and killed, so that the answers' pipe ends and a crash is never waited out;
- **a child subreaper** (Linux, the command line and the pytest plugin:
  :func:`become_subreaper`): an orphaned descendant is handed to the kit rather than to init,
  so one that also cleared its environment is still the kit's child (and outside the kit's
  session), found and killed when the command or the pytest session ends;
- **frozen before killed** (:func:`kill_strays`): what is found is stopped first, then its
  descendants by parent, again until nothing new is found, and only then killed, so that
  neither a fork storm nor a chain of ``setsid`` children can slip away between a look and a
  kill.

The signal policy (:func:`signal_policy`, used by the command line and by the pytest plugin):
on any of :data:`STOP_SIGNALS` (SIGINT, SIGTERM, SIGHUP) every adapter is killed at once and no
new one may start (:func:`interrupt_all`), so that every thread waiting on one is released
within moments; then :class:`Interrupted` (a ``KeyboardInterrupt``) is raised in the main
thread, and the front end writes what finished and exits 128 plus the signal's number. A
second signal while it does so is noted, not raised: the outputs are not lost to an impatient
sender (a CI runner sends SIGTERM soon after SIGINT).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import queue
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.spec.errors import KitError
from conformance.transport import pipes

#: The environment variable that marks an adapter's descendants (see the module docstring).
TOKEN_VARIABLE = "SNAPKV_CONFORMANCE_ADAPTER"
#: How much of an adapter's stderr is kept (the most recent bytes).
STDERR_KEEP = 64 * 1024


class CommandError(KitError, ValueError):
    """An adapter command that cannot be split into an argument vector, or is empty."""


class StartError(KitError):
    """An adapter command that cannot be started; the message names it and says why."""


def split_command(text: str, option: str = "--adapter") -> list[str]:
    """``text`` split as a POSIX shell splits words (quotes work, nothing else does); raise
    :class:`CommandError` naming ``option`` for unbalanced quotes or an empty command."""
    try:
        argv = shlex.split(text)
    except ValueError as error:
        raise CommandError(f"{option}: cannot split {text!r}: {error}") from None
    if not argv:
        raise CommandError(f"{option} is empty")
    return argv


def _why_not(argv: Sequence[str], error: OSError) -> str:
    """Why ``argv`` could not be started, in words a porter can act on (the command itself is
    named by the caller)."""
    program = argv[0]
    path = Path(program)
    if error.errno == errno.ENOENT:
        if os.sep not in program:
            return f"there is no command {program!r} on PATH"
        if path.exists():
            return f"it exists, but its interpreter (the #! line) {_shebang(path)}"
        return "no such file"
    if error.errno == errno.EACCES:
        if path.is_dir():
            return "it is a directory, not a program"
        return f"it is not executable (chmod +x {shlex.quote(program)}?)"
    if error.errno == errno.ENOEXEC:
        return "it is not a program this machine can run (no #! line?)"
    return error.strerror or str(error)


def _shebang(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            first = handle.readline(200).rstrip()
    except OSError:
        return "cannot be found"
    if first.startswith(b"#!"):
        return f"{first[2:].decode('utf-8', 'replace').strip()!r} cannot be found"
    return "cannot be found (the file has no #! line)"


class Process:
    """One started adapter: its pipes, its group, its descendants (see the module docstring).

    ``write`` queues bytes for its stdin (a writer thread feeds them, so a full pipe never
    blocks the caller); ``close_input`` ends stdin after what is queued. ``stdout`` is the raw
    stream for a bounded reader (:class:`conformance.transport.pipes.LineReader`). stderr is drained
    into a bounded tail. :meth:`wait` gives the leader's exit status; :meth:`kill` kills the
    group and the descendants that left it. Nothing else may reap the process.
    """

    def __init__(self, proc: subprocess.Popen[bytes], token: str, argv: Sequence[str]) -> None:
        self.argv = list(argv)
        self.pid = proc.pid
        self.token = token
        self._proc = proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.stdout = proc.stdout
        self._writes: queue.SimpleQueue[bytes | Iterable[bytes] | None] = queue.SimpleQueue()
        self._stderr = pipes.StderrTail(STDERR_KEEP)
        self._stderr_done = threading.Event()
        #: Set once the leader has exited, its group and strays are dead and it is reaped.
        self.exited = threading.Event()
        self.status: int | None = None
        self._lock = threading.Lock()
        self._reaped = False
        for target, args in (
            (pipes.write_loop, (proc.stdin, self._writes)),
            (pipes.drain_loop, (proc.stderr, self._stderr, self._stderr_done)),
            (self._watch, ()),
        ):
            threading.Thread(target=target, args=args, daemon=True).start()

    # -- input -----------------------------------------------------------------------------

    def write(self, data: bytes | Iterable[bytes]) -> None:
        """Queue ``data`` for the adapter's stdin: bytes, or pieces of bytes made as the
        writer gets to them (in its thread), so that a long batch is never held whole."""
        self._writes.put(data)

    def close_input(self) -> None:
        """Close stdin once what is queued is written (end of input, SPEC.md §3.2)."""
        self._writes.put(None)

    # -- the lifetime ----------------------------------------------------------------------

    def _watch(self) -> None:
        """Wait for the leader to exit without reaping it, kill its group and strays, then
        reap it: while it is an unreaped zombie its pid (the group id) cannot be reused."""
        if hasattr(os, "waitid"):
            with contextlib.suppress(ChildProcessError):
                os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        else:  # no waitid (Windows): no process groups to clean either
            with contextlib.suppress(OSError):
                self._proc.wait()
        with self._lock:
            self._kill_group()
            status = self._proc.wait()
            self._reaped = True
        kill_strays(self.token)
        self._release_stdout()
        self.status = status
        self.exited.set()
        _forget(self)

    def _release_stdout(self) -> None:
        """Kill whatever still holds the adapter's stdout once it is dead: a descendant that
        left the group and had no time to show its token yet (it was still starting), or that
        cleared its environment. Until they are gone the answers' pipe never ends, and a crash
        would be waited out as a timeout. Holders of the pipe are the adapter's descendants by
        construction: the kit made the pipe for it."""
        try:
            fd = self.stdout.fileno()
            inode = os.fstat(fd).st_ino
        except (OSError, ValueError):  # already closed by its reader: nobody waits on it
            return
        deadline = time.monotonic() + 2.0
        while not _hung_up(fd) and time.monotonic() < deadline:
            for pid in _pipe_holders(inode):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def kill(self) -> None:
        """Kill the adapter, its group and its descendants that left the group, and wait
        (briefly) until it is reaped. Idempotent."""
        with self._lock:
            if not self._reaped:
                self._kill_group()
        self._writes.put(None)
        pipes.waited(self.exited.wait, 5.0)

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.name == "posix":
                os.killpg(self.pid, signal.SIGKILL)
            else:
                self._proc.kill()

    def wait(self, timeout: float) -> int | None:
        """The leader's exit status, or None if it is still running after ``timeout`` s."""
        if pipes.waited(self.exited.wait, timeout):
            return self.status
        return None

    @property
    def running(self) -> bool:
        return not self.exited.is_set()

    # -- stderr ----------------------------------------------------------------------------

    def stderr_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines the adapter wrote to stderr, undecodable bytes replaced.

        Waits a moment for the drain thread: stderr written just before a crash or a wrong
        answer is the useful part.
        """
        if not self.running:
            self._stderr_done.wait(0.2)
        else:
            pipes.settle(self._proc.stderr, self._stderr, self._stderr_done, 0.2)
        return self._stderr.text(lines)


# -- starting, and the registry of what runs --------------------------------------------------

# Re-entrant: the signal handler (interrupt_all) runs in the main thread, which may be inside
# spawn() holding it.
_registry_lock = threading.RLock()
_running: dict[int, Process] = {}
_interrupted = False


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    what: str = "the adapter",
) -> Process:
    """Start ``argv`` (see the module docstring); raise :class:`StartError` with a one-line
    reason when it cannot start, or when the run was interrupted."""
    token = f"{os.getpid()}:{os.urandom(8).hex()}"  # whose adapter it is, and which
    environment = {**os.environ, **(env or {}), TOKEN_VARIABLE: token}
    with _registry_lock:
        if _interrupted:
            raise StartError("the run was interrupted")
        try:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=environment,
                cwd=cwd,
                start_new_session=os.name == "posix",
            )
        except OSError as error:
            why = _why_not(argv, error)
            raise StartError(f"cannot run {what} {shlex.join(argv)}: {why}") from None
        process = Process(proc, token, argv)
        _running[process.pid] = process
    return process


def _forget(process: Process) -> None:
    with _registry_lock:
        _running.pop(process.pid, None)


def interrupt_all() -> None:
    """Kill every adapter now and refuse to start new ones (an interrupted command)."""
    global _interrupted
    with _registry_lock:
        _interrupted = True
        processes = list(_running.values())
    for process in processes:
        with process._lock:
            if not process._reaped:
                process._kill_group()


#: The signals that stop a command: Ctrl-C, a cancelled CI job, a closed terminal.
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class Interrupted(KeyboardInterrupt):
    """A stop signal (:data:`STOP_SIGNALS`), raised like Ctrl-C so that the same cleanup runs.

    ``signum`` is the signal; ``status`` the exit status a shell reports for it (128 + its
    number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP); ``name`` says what happened."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.status = 128 + signum
        names = {"SIGINT": "interrupted", "SIGTERM": "terminated", "SIGHUP": "hung up"}
        self.name = names.get(signal.Signals(signum).name, "stopped")


def _stop(signum: int, frame: Any) -> None:
    """The handler of :func:`signal_policy`: kill every adapter, then unwind as from Ctrl-C
    (once: a later signal finds the command already stopping)."""
    first = not _interrupted
    interrupt_all()
    if first:
        raise Interrupted(signum)


@contextlib.contextmanager
def signal_policy() -> Iterator[None]:
    """The signal policy (see the module docstring) for the duration; outside the main thread,
    where Python cannot handle signals, nothing changes."""
    try:
        previous = {sig: signal.signal(sig, _stop) for sig in STOP_SIGNALS}
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def begin() -> None:
    """Start a command: adapters may be started (until :func:`interrupt_all`)."""
    global _interrupted
    with _registry_lock:
        _interrupted = False


def interrupted() -> bool:
    """Whether :func:`interrupt_all` was called: nothing may start any more."""
    return _interrupted


# -- descendants that left the group ------------------------------------------------------------


def _environment_tokens(pid: int) -> str | None:
    """The adapter token in ``pid``'s environment, or None (not ours, gone, or unreadable)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        return None
    prefix = TOKEN_VARIABLE.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode("ascii", "replace")
    return None


def _hung_up(fd: int) -> bool:
    """Whether no process holds the write end of the pipe ``fd`` reads (poll's POLLHUP)."""
    if not hasattr(select, "poll"):
        return True  # no way to tell here (Windows): nothing to wait for either
    poller = select.poll()
    poller.register(fd, select.POLLHUP)
    try:
        return any(event & select.POLLHUP for _, event in poller.poll(0))
    except (OSError, ValueError):
        return True


def _pipe_holders(inode: int) -> list[int]:
    """The other processes with a descriptor on the pipe ``inode`` (from ``/proc``)."""
    target = f"pipe:[{inode}]"
    me = os.getpid()
    holders = []
    for pid in _pids():
        if pid == me:
            continue
        try:
            descriptors = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for descriptor in descriptors:
            try:
                if os.readlink(f"/proc/{pid}/fd/{descriptor}") == target:
                    holders.append(pid)
                    break
            except OSError:
                continue
    return holders


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # no /proc (macOS, Windows): the process group is all there is
        return []


#: The longest one sweep for strays goes on: a fork storm is frozen well within it.
SWEEP_LIMIT = 10.0


def kill_strays(token: str | None = None) -> int:
    """Kill the descendants of adapters that left their process group, and reap those that
    were handed to the kit (a subreaper's orphans); return how many were killed.

    With ``token``, those of that adapter only; without, those of every adapter this process
    started that is no longer running, and every orphan handed to it that is not an adapter it
    started and has left the kit's session (an adapter's descendants always have: every
    adapter starts in a session of its own). Adapters of other processes (another kit,
    another test worker) are never touched.

    What is found is frozen (``SIGSTOP``, which no process can catch) before anything is
    killed, and so are the descendants of what is found, by parent, whatever their
    environment: a process that forks as fast as it can, or a chain of sessions each the
    parent of the next, cannot move out of reach while the rest is found. The sweep repeats
    until it finds nothing new (for at most :data:`SWEEP_LIMIT` seconds); then every frozen
    process is killed.
    """
    me = os.getpid()
    frozen: set[int] = set()
    deadline = time.monotonic() + SWEEP_LIMIT
    while True:
        table = _process_table()
        found = _strays(token, table) | _descendants(frozen, table)
        found = {pid for pid in found - frozen if pid != me and table[pid].state not in "ZX"}
        if not found:
            break
        _freeze(found)
        frozen |= found
        # A stop takes effect when its target next runs: one in the middle of a fork finishes
        # it first. So the next look waits until every target has stopped (or died), and a
        # look that finds nothing new then proves that nothing is left to find.
        _until_stopped(found, deadline)
        _chase(frozen, set(table), deadline)
        if time.monotonic() > deadline:
            break
    killed = []
    for pid in frozen:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    for pid in killed:  # the kit's own children (orphans it was handed) must be reaped
        _reap(pid)
    return len(killed)


def _freeze(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGSTOP)


def _chase(frozen: set[int], seen: set[int], deadline: float) -> None:
    """Freeze, as each is seen, every process new since ``seen`` whose parent is frozen, and
    theirs in turn, until a look finds none (adding to ``frozen``).

    A whole sweep reads every process's environment and takes longer than a fork storm takes
    to fork again: the storm's newest process then always escapes the sweep that finds its
    parent. A look at only the processes new since the last look is quick enough to stop each
    one before it forks."""
    while time.monotonic() < deadline:
        new = sorted(set(_pids()) - seen)  # ascending: a parent is mostly seen before its child
        seen.update(new)
        caught = set()
        for pid in new:
            entry = _stat(pid)
            if entry is not None and entry.parent in frozen and entry.state not in "ZX":
                _freeze({pid})
                frozen.add(pid)
                caught.add(pid)
        if not caught:
            return
        _until_stopped(caught, deadline)


def _until_stopped(pids: set[int], deadline: float) -> None:
    """Wait (until ``deadline``) until every one of ``pids`` is stopped, a zombie or gone."""
    waiting = set(pids)
    while waiting and time.monotonic() < deadline:
        waiting = {pid for pid in waiting if _running_state(pid)}
        if waiting:
            time.sleep(0.001)


def _running_state(pid: int) -> bool:
    """Whether ``pid`` still runs: not stopped (``T``, ``t``), a zombie or gone."""
    entry = _stat(pid)
    return entry is not None and entry.state not in ("T", "t", "Z", "X")


@dataclass(frozen=True)
class _Entry:
    """What the sweep reads of a process in ``/proc``."""

    parent: int
    session: int
    state: str


def _process_table() -> dict[int, _Entry]:
    """Every process's parent, session and state, from ``/proc`` (empty where there is none)."""
    table = {}
    for pid in _pids():
        entry = _stat(pid)
        if entry is not None:
            table[pid] = entry
    return table


def _stat(pid: int) -> _Entry | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses; the last
    # ')' ends it.
    fields = raw[raw.rfind(b")") + 2 :].split()
    if len(fields) < 4:
        return None
    return _Entry(int(fields[1]), int(fields[3]), fields[0].decode("ascii", "replace"))


def _strays(token: str | None, table: Mapping[int, _Entry]) -> set[int]:
    """The processes :func:`kill_strays` looks for (see there), by their environment or, for
    an orphan handed to the kit, by their parent and session."""
    me = os.getpid()
    mine = f"{me}:"
    with _registry_lock:
        live = {process.token for process in _running.values()}
        leaders = set(_running)
    own_session = table[me].session if me in table else None
    found = set()
    for pid, entry in table.items():
        if pid == me or pid in leaders or entry.state in "ZX":
            continue
        carried = _environment_tokens(pid)
        if token is not None:
            ours = carried == token
        else:
            ours = carried is not None and carried.startswith(mine) and carried not in live
            if carried is None and _subreaper and entry.parent == me:
                # An orphan handed to the kit that cleared its environment: an adapter's
                # descendant if it is outside the kit's session (the kit's own children, a
                # pytest run's for instance, stay in it unless they leave on purpose).
                ours = entry.session != own_session
        if ours:
            found.add(pid)
    return found


def _descendants(roots: set[int], table: Mapping[int, _Entry]) -> set[int]:
    """Every process descended from ``roots``, by parent (at the time of ``table``)."""
    children: dict[int, list[int]] = {}
    for pid, entry in table.items():
        children.setdefault(entry.parent, []).append(pid)
    found: set[int] = set()
    stack = list(roots)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found and child not in roots:
                found.add(child)
                stack.append(child)
    return found


def _reap(pid: int) -> None:
    deadline = time.monotonic() + 1.0
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return  # not the kit's child: its own parent (or init) reaps it
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.005)


_subreaper = False


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``), so that
    an adapter's orphaned descendants are handed to it; True when it is one.

    For a process that runs adapters on the kit's behalf: the command line, and a pytest
    session with ``--snapkv-adapter``. Orphans of other programs are handed to it too; the
    sweeps kill only those outside the kit's session (:func:`kill_strays`), which the kit's
    own children (a test's subprocess) stay in unless they leave it on purpose.
    """
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return _subreaper
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_child_subreaper = 36
        _subreaper = libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def shutdown() -> None:
    """At the end of a command: kill what is left (adapters and their strays)."""
    with _registry_lock:
        processes = list(_running.values())
    for process in processes:
        process.kill()
    kill_strays()


__all__ = [
    "STOP_SIGNALS",
    "TOKEN_VARIABLE",
    "CommandError",
    "Interrupted",
    "Process",
    "StartError",
    "become_subreaper",
    "begin",
    "interrupt_all",
    "interrupted",
    "kill_strays",
    "shutdown",
    "signal_policy",
    "spawn",
    "split_command",
]
