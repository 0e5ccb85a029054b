"""README's two fresh-machine commands, run verbatim in a fresh virtual environment, timed.

README.md opens with two commands for a fresh machine: one installs the kit and runs the main
job, one installs the test extra and runs the kit's tests. This script takes them from README
itself (the first ``sh`` block), makes a fresh ``python3 -m venv`` with nothing else installed
(its old setuptools and no ``wheel``, as a new user has), and runs each line, exactly as
written, with bash from the checkout's root, the venv activated and ``CI`` unset (a developer's
machine: tests that need a missing toolchain or optional extra skip there). It prints each
command's wall time and the last line it printed, and exits with the first non-zero status.

``.ci/run`` runs it first, so CI proves what README promises; README's figure for the test
command is this script's. ``--repeats N`` runs both commands N times in the same venv (the
second install finds everything in place) and prints the median of each.
``--skipped FILE`` lists the tests that skipped in the last run, one node id per line (the
conftest writes them where ``SNAPKV_SKIPPED_LOG`` points), so that CI can run exactly those
again once it has installed the extras and set ``CI``.

    python3 benchmarks/readme_commands.py [--repeats N] [--venv DIR] [--skipped FILE]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--venv", type=Path, help="where to make the fresh venv (default: a new temp dir)"
    )
    parser.add_argument("--skipped", type=Path, help="write the node ids of skipped tests here")
    args = parser.parse_args()

    commands = readme_commands()
    venv = args.venv or Path(tempfile.mkdtemp(prefix="snapkv-readme-")) / "venv"
    if venv.exists():
        raise SystemExit(f"{venv} exists: the venv must be fresh")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    print(f"fresh venv {venv} ({sys.version.split()[0]}); load average {os.getloadavg()[0]:.1f}")
    env_extra = {"SNAPKV_SKIPPED_LOG": str(args.skipped)} if args.skipped else {}
    walls: dict[str, list[float]] = {command: [] for command in commands}
    for repeat in range(args.repeats):
        for command in commands:
            if args.skipped:
                args.skipped.unlink(missing_ok=True)
            status, wall, last = run_in_venv(command, venv, env_extra)
            walls[command].append(wall)
            print(f"[{repeat + 1}/{args.repeats}] {command}")
            print(f"    exit {status} after {wall:.0f} s: {last}", flush=True)
            if status != 0:
                return status
    if args.repeats > 1:
        for command, times in walls.items():
            shown = ", ".join(f"{t:.0f}" for t in times)
            print(f"median {statistics.median(times):.0f} s ({shown}): {command}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
