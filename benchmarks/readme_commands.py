"""README's two fresh-machine commands, run verbatim in a fresh virtual environment, timed.

README.md opens with two commands for a fresh machine: one installs the kit and runs the main
job, one installs the test extra and runs the kit's tests. This script takes them from README
itself (the first ``sh`` block), makes a fresh ``python3 -m venv`` with nothing else installed
(its old setuptools and no ``wheel``, as a new user has), and runs each line, exactly as
written, with bash from the checkout's root, the venv activated and ``CI`` unset (a developer's
machine: tests that need a missing toolchain or optional extra skip there). It prints each
command's wall time and the last line it printed, and exits with the first non-zero status.

``.ci/run`` runs it first, so CI proves what README promises. The docs quote this script's
output: docs/getting-started.md holds its last run as printed, between the markers
``<!-- docs:readme-commands:begin/end -->``, and README.md and that page quote the first
command's count (tests/system/test_readme.py derives it from the suite and checks the pasted
run says the same).

- ``--record`` runs both commands and pastes what it printed into that block: the one command
  that refreshes the figures once tests or vectors have changed.
- ``--check`` runs both commands and exits 1 if the counts either printed (passed, failed,
  skipped, ...; not the times) differ from the pasted run's, naming both and ``--record``.
  ``.ci/run`` runs it so.
- ``--repeats N`` runs both commands N times in the same venv (the second install finds
  everything in place) and prints the median of each.
- ``--skipped FILE`` lists the tests that skipped in the last run, one node id per line (the
  conftest writes them where ``SNAPKV_SKIPPED_LOG`` points), so that CI can run exactly those
  again once it has installed the extras and set ``CI``.

It runs with any python3 (3.11+), before the kit is installed: it imports nothing of it.

    python3 benchmarks/readme_commands.py [--record | --check] [--repeats N] [--venv DIR]
                                          [--skipped FILE]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The page that holds the pasted run, and its markers (the block syntax of conformance/docs).
PAGE = ROOT / "docs" / "getting-started.md"
BEGIN = "<!-- docs:readme-commands:begin -->"
END = "<!-- docs:readme-commands:end -->"
SCRIPT = "python3 benchmarks/readme_commands.py"
#: What a command's last line counts: ``223 passed, 0 failed``, ``1816 passed, 11 skipped in
#: 78.94s``.
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|error|xfailed|xpassed|deselected)s?\b")
#: A command's result line as this script prints it: ``    exit 0 after 24 s: LAST``.
_RESULT = re.compile(r"^    exit -?\d+ after \d+ s: (.*)$", re.M)


def readme_commands(readme: Path = ROOT / "README.md") -> list[str]:
    """The lines of README's first ``sh`` block, comments and all (bash ignores them)."""
    text = readme.read_text(encoding="utf-8")
    block = re.search(r"^```sh\n(.*?)^```", text, re.M | re.S)
    if block is None:
        raise SystemExit("README.md has no ```sh block")
    commands = [line for line in block[1].splitlines() if line.strip()]
    if len(commands) != 2:
        raise SystemExit(f"README.md's first sh block should hold two commands: {commands}")
    return commands


def run_in_venv(command: str, venv: Path, env_extra: dict[str, str]) -> tuple[int, float, str]:
    """Run ``command`` with bash in the checkout, the venv activated, ``CI`` unset; return its
    exit status, wall time and the last line it printed."""
    env = {key: value for key, value in os.environ.items() if key not in ("CI", "PYTHONPATH")}
    env.update(env_extra)
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    started = time.monotonic()
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    wall = time.monotonic() - started
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0:
        sys.stdout.write(done.stdout[-6000:])
    return done.returncode, wall, lines[-1] if lines else ""


def counts(line: str) -> dict[str, int]:
    """What a command's last line counts, by word (``{"passed": 223, "failed": 0}``); warnings
    are not counted (a new numpy may add one)."""
    return {word: int(number) for number, word in _COUNT.findall(line)}


def _shown(page: Path) -> str:
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else str(page)


def pasted(page: Path = PAGE) -> str:
    """The pasted run: what the page holds between the markers (raises SystemExit without)."""
    text = page.read_text(encoding="utf-8")
    _, begin, rest = text.partition(BEGIN)
    inside, end, _ = rest.partition(END)
    if not begin or not end:
        raise SystemExit(f"{_shown(page)}: no {BEGIN} ... {END} block")
    return inside.strip("\n")


def pasted_lasts(page: Path = PAGE) -> list[str]:
    """Each command's last line in the pasted run, in order."""
    return _RESULT.findall(pasted(page))


def block(printed: list[str]) -> str:
    """The block's content for a run that printed ``printed``."""
    return "\n".join(["```console", f"$ {SCRIPT} --record", *printed, "```"])


def record(printed: list[str], page: Path = PAGE) -> None:
    """Paste ``printed`` into the page's block, the rest of the page as it is."""
    text = page.read_text(encoding="utf-8")
    pasted(page)  # the markers are there
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    page.write_text(f"{head}{BEGIN}\n{block(printed)}\n{END}{tail}", encoding="utf-8")


def differences(lasts: list[str], page: Path = PAGE) -> list[str]:
    """One line per command whose counts differ from the pasted run's (times aside)."""
    quoted = pasted_lasts(page)
    if len(quoted) != len(lasts):
        return [f"{_shown(page)} quotes {len(quoted)} commands, this run made {len(lasts)}"]
    return [
        f"{_shown(page)} quotes {old!r}; this run printed {new!r}"
        for old, new in zip(quoted, lasts, strict=True)
        if counts(old) != counts(new)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--venv", type=Path, help="where to make the fresh venv (default: a new temp dir)"
    )
    parser.add_argument("--skipped", type=Path, help="write the node ids of skipped tests here")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--record", action="store_true", help=f"paste this run into {_shown(PAGE)}")
    what.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 if the counts differ from the run {_shown(PAGE)} pastes",
    )
    args = parser.parse_args()
    if (args.record or args.check) and args.repeats != 1:
        parser.error("--record and --check paste or compare one run: leave out --repeats")
    if args.check:
        pasted_lasts(PAGE)  # the page holds the block, before minutes of running

    commands = readme_commands()
    venv = args.venv or Path(tempfile.mkdtemp(prefix="snapkv-readme-")) / "venv"
    if venv.exists():
        raise SystemExit(f"{venv} exists: the venv must be fresh")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    printed: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        printed.append(line)

    say(f"fresh venv {venv} ({sys.version.split()[0]}); load average {os.getloadavg()[0]:.1f}")
    lasts: list[str] = []
    env_extra = {"SNAPKV_SKIPPED_LOG": str(args.skipped)} if args.skipped else {}
    walls: dict[str, list[float]] = {command: [] for command in commands}
    for repeat in range(args.repeats):
        for command in commands:
            if args.skipped:
                args.skipped.unlink(missing_ok=True)
            status, wall, last = run_in_venv(command, venv, env_extra)
            walls[command].append(wall)
            lasts.append(last)
            say(f"[{repeat + 1}/{args.repeats}] {command}")
            say(f"    exit {status} after {wall:.0f} s: {last}")
            if status != 0:
                return status
    if args.repeats > 1:
        for command, times in walls.items():
            shown = ", ".join(f"{t:.0f}" for t in times)
            say(f"median {statistics.median(times):.0f} s ({shown}): {command}")
    say(f"load average at the end {os.getloadavg()[0]:.1f}")
    if args.record:
        record(printed, PAGE)
        print(f"pasted into {_shown(PAGE)}")
    if args.check:
        found = differences(lasts, PAGE)
        for line in found:
            print(line)
        if found:
            print(f"refresh the docs' figures with: {SCRIPT} --record")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
