"""The lab: each claim of the source document about SnapKV, reproduced or refuted side by side.

    python benchmarks/lab.py                   # everything; the real-model part needs the
                                               # 'record' extra and the model wheel
    python benchmarks/lab.py --skip-real       # synthetic traces only (a minute or two)
    python benchmarks/lab.py --plots DIR       # also write PNGs (needs the 'lab' extra)
    python benchmarks/lab.py --quick           # every part in seconds, at toy sizes (a test
                                               # runs it; its figures mean nothing)

Every figure in README's "Real attention and the lab" is printed by this script. Parts:

1. Memory per slot, SnapKV against TOVA: the document's accounting, and the bytes the
   reference and its fast path actually hold per kept position (measured with tracemalloc).
2. A stationary heavy-hitter trace like the document's canonical one (scattered singleton
   heavy hitters, steady within an epoch, fresh noise elsewhere): obsWindow 1/4/16/64 (are the
   victims and metrics identical?), poolKernel 1 against an independent TOVA (identical?),
   and retained attention mass at budgets 256/512/1024 for poolKernel 7 against 1.
3. A phrase-run trace (important tokens in runs of 2-6, attention peaking on one token of a
   run): poolKernel 7 against 1.
4. Real attention (SmolLM2-135M on the shipped text, ``snapkv-conformance record``'s model
   and aggregation): retained mass when each policy replays the full-cache attention, and the
   next-token loss change against the full cache when each policy evicts in the loop, for
   SnapKV (kernels 1/3/7), TOVA, H2O and recent-only.

Retained mass at a step is the share of the step's full attention (over every earlier
position) that falls on the positions the policy kept, averaged over the steps after the
cache first fills. The policies see the attention restricted to what they kept, renormalised
and narrowed to float32, as a model with an evicting cache would give it. TOVA and H2O are
SnapKV's reductions (SPEC.md §2.7: poolKernel 1 with obsWindow 1, and with a window longer
than the run), and part 2 checks the first against an independent TOVA.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads BLAS; the machine is shared

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.policy.fast import fast_policy
from conformance.policy.reference import new_policy
from conformance.report.outputs import write_output

#: A full attention row at step t: raw weights for positions 0..t-1 (t entries).
Trace = Callable[[int], np.ndarray]


# -- policies ------------------------------------------------------------------------------------


class Tova:
    """TOVA written independently of the reference: score = weight at the latest observed step
    (0 if admitted since); the lowest (score, position) outside the recent window goes."""

    def __init__(self, budget: int, recent: int) -> None:
        self.budget, self.recent = budget, recent
        self.kept: list[int] = []
        self.score: list[float] = []

    def step(self, pos: int, attn: list[float] | None) -> None:
        if attn is not None:
            self.score = [float(np.float32(w)) for w in attn]
        self.kept.append(pos)
        self.score.append(0.0)

    def evict(self) -> list[int]:
        count = max(0, len(self.kept) - self.budget)
        candidates = range(len(self.kept) - self.recent)
        ranked = sorted(candidates, key=lambda i: (self.score[i], self.kept[i]))[:count]
        victims = sorted(self.kept[i] for i in ranked)
        gone = set(ranked)
        self.kept = [p for i, p in enumerate(self.kept) if i not in gone]
        self.score = [s for i, s in enumerate(self.score) if i not in gone]
        return victims


class RecentOnly:
    """Keep the ``budget`` newest positions (a sliding window; no attention used)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.kept: list[int] = []

    def step(self, pos: int, attn: Any) -> None:
        self.kept.append(pos)

    def evict(self) -> list[int]:
        count = max(0, len(self.kept) - self.budget)
        victims, self.kept = self.kept[:count], self.kept[count:]
        return victims


def snapkv(budget: int, recent: int, obs: int, kernel: int) -> Any:
    return new_policy(
        {"budget": budget, "recentWindow": recent, "obsWindow": obs, "poolKernel": kernel}
    )


#: Name -> factory(budget, recent, steps) for the side-by-side comparisons.
POLICIES: dict[str, Callable[[int, int, int], Any]] = {
    "SnapKV k7": lambda b, r, n: snapkv(b, r, 16, 7),
    "SnapKV k3": lambda b, r, n: snapkv(b, r, 16, 3),
    "SnapKV k1": lambda b, r, n: snapkv(b, r, 16, 1),
    "TOVA": lambda b, r, n: snapkv(b, r, 1, 1),
    "H2O": lambda b, r, n: snapkv(b, r, n + 1, 1),
    "recent-only": lambda b, r, n: RecentOnly(b),
}


# -- replaying a trace ---------------------------------------------------------------------------


@dataclass
class Replay:
    retained: float  # mean retained mass over the steps after the cache first fills
    victims: list[list[int]]


def replay(trace: Trace, steps: int, policy: Any, budget: int) -> Replay:
    """Feed ``steps`` of ``trace`` to ``policy`` with an evict after every step."""
    kept: list[int] = []
    masses: list[float] = []
    victims_all: list[list[int]] = []
    for t in range(steps):
        if t == 0:
            policy.step(0, None)
        else:
            full = trace(t)
            index = np.asarray(kept, dtype=np.int64)
            seen = full[index]
            total = float(full.sum())
            if t > budget:
                masses.append(float(seen.sum()) / total)
            row = (seen / seen.sum()).astype(np.float32)
            policy.step(t, [float(w) for w in row])
        kept.append(t)
        victims = [int(v) for v in policy.evict()]
        victims_all.append(victims)
        if victims:
            gone = set(victims)
            kept = [p for p in kept if p not in gone]
    return Replay(float(np.mean(masses)) if masses else 1.0, victims_all)


# -- synthetic traces ----------------------------------------------------------------------------


def heavy_hitter_trace(seed: int, epoch: int, fraction: float, fresh: bool = True) -> Trace:
    """Stationary heavy-hitter epochs, like the document's canonical trace: in each epoch of
    ``epoch`` steps a fixed random ``fraction`` of all positions are heavy, with a steady
    weight 0.5-1 (times a 0.95-1.05 jitter); the rest get fresh noise below 0.02 every step.
    Heavy hitters are scattered singletons, drawn independently per position and epoch. With
    ``fresh`` False the noise too is drawn once per epoch: the whole row is steady within an
    epoch, stationary in the strict sense."""
    tables: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def table(e: int) -> tuple[np.ndarray, np.ndarray]:
        if e not in tables:
            rng = np.random.default_rng([seed, 1, e])
            tables[e] = (rng.random(1 << 14) < fraction, 0.5 + 0.5 * rng.random(1 << 14))
        return tables[e]

    def row(t: int) -> np.ndarray:
        heavy, level = table(t // epoch)
        # Steady noise: one stream per epoch, whose first t draws are the same for every t.
        key = [seed, 2, t] if fresh else [seed, 6, t // epoch]
        noise = np.random.default_rng(key).random(t)
        return np.where(heavy[:t], level[:t] * (0.95 + 0.1 * noise), 0.02 * noise)

    return row


def phrase_trace(seed: int, epoch: int) -> Trace:
    """Phrase runs: positions fall into phrases of 2-6 tokens, and about a third of the phrases
    are important for the whole run. In each epoch an important phrase's attention peaks on one
    of its tokens (0.4-0.8) and its other tokens get 0.02-0.06; unimportant positions get noise
    below 0.01. The peak moves to another token of the phrase every epoch, so a run's
    importance is stable while its peak is not: the structure pooling is built for, which a
    trace built this way rewards by construction."""
    rng = np.random.default_rng([seed, 3])
    size = 1 << 14
    lengths = 2 + (5 * rng.random(size)).astype(np.int64)
    phrase_of = np.repeat(np.arange(size), lengths)[:size]
    starts = np.concatenate([[0], np.cumsum(lengths)])[phrase_of]
    important = (rng.random(size) < 0.35)[phrase_of]
    peaks: dict[int, np.ndarray] = {}

    def is_peak(e: int) -> np.ndarray:
        if e not in peaks:
            draw = np.random.default_rng([seed, 4, e]).random(size)[phrase_of]
            peaks[e] = np.arange(size) == starts + (draw * lengths[phrase_of]).astype(np.int64)
        return peaks[e]

    def row(t: int) -> np.ndarray:
        noise = np.random.default_rng([seed, 5, t]).random(t)
        inside = np.where(is_peak(t // epoch)[:t], 0.4 + 0.4 * noise, 0.02 + 0.04 * noise)
        return np.where(important[:t], inside, 0.01 * noise)

    return row


# -- the parts -----------------------------------------------------------------------------------


def memory_part() -> dict[str, Any]:
    print("\n== 1. Memory per slot, SnapKV (obsWindow 16) against TOVA, 512 slots ==")
    # The document's accounting: per slot a 4-byte position and obsWindow float32 of history,
    # plus eviction scratch of two doubles (sums, pooled) and a byte. TOVA's state is a
    # position and one float32 score (its latest weight) where SnapKV keeps the ring.
    snap_slot = 4 + 4 * 16 + 2 * 8 + 1
    snap_state, tova_state = 4 + 4 * 16, 4 + 4
    print(
        f"document's accounting: SnapKV {snap_slot} B/slot = {snap_slot * 512 / 1000:.1f} KB "
        f"(document: about 45 KB); TOVA 6.7 KB by the document = "
        f"{6700 / 512:.1f} B/slot; ratio {snap_slot * 512 / 6700:.1f}x"
    )
    print(
        f"state alone (positions and scores, no scratch): SnapKV {snap_state} B/slot, TOVA "
        f"{tova_state} B/slot; ratio {snap_state / tova_state:.1f}x"
    )
    # What each implementation of the reference holds, measured from outside: the bytes
    # allocated (tracemalloc sees Python objects and numpy arrays alike) and still held by
    # the policy after 600 steps at budget 512.
    # The first run of each warms up what is made once per process (numpy's caches).
    params = {"budget": 512, "recentWindow": 16, "obsWindow": 16, "poolKernel": 7}

    def filled(fast: bool) -> Any:
        policy = (fast_policy if fast else new_policy)(params)
        for t in range(600):
            policy.step(t, None if t == 0 else [1.0 / len(policy.kept)] * len(policy.kept))
            policy.evict()
        return policy

    held: dict[str, float] = {}
    for label, fast in (("reference (plain Python)", False), ("fast path (numpy)", True)):
        filled(fast)
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        policy = filled(fast)
        used = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        kept = len(policy.kept)
        held[label] = used / kept
        print(
            f"{label} after 600 steps at budget 512: {used} B held for {kept} kept = "
            f"{used / kept:.0f} B per kept position"
        )
    return {
        "snapkv_slot": snap_slot,
        "snapkv_state": snap_state,
        "tova_state": tova_state,
        "reference_per_kept": held["reference (plain Python)"],
        "fast_path_per_kept": held["fast path (numpy)"],
    }


def canonical_part(
    steps: int, fresh: bool = True, budgets: Sequence[int] = (256, 512, 1024)
) -> dict[str, Any]:
    what = "fresh noise every step" if fresh else "steady noise: every weight fixed per epoch"
    print(
        f"\n== 2{'' if fresh else 'b'}. Stationary heavy-hitter trace ({steps} steps, epochs of "
        f"512, 5% heavy, {what}) =="
    )
    trace = heavy_hitter_trace(seed=7, epoch=512, fraction=0.05, fresh=fresh)
    out: dict[str, Any] = {"obs": {}, "kernel": {}, "tova_identical": {}}
    print("retained mass by obsWindow (recentWindow 16); 'victims' compares each run's")
    print("victims with obsWindow 1's, call by call")
    print(
        f"{'budget':>6} {'kernel':>6} "
        + " ".join(f"{'obs ' + str(o):>10}" for o in (1, 4, 16, 64))
        + "  victims identical to obs 1"
    )
    for budget in budgets:
        for kernel in (1, 7):
            runs = {
                o: replay(trace, steps, snapkv(budget, 16, o, kernel), budget)
                for o in (1, 4, 16, 64)
            }
            same = [runs[o].victims == runs[1].victims for o in (4, 16, 64)]
            out["obs"][f"{budget}/{kernel}"] = {str(o): r.retained for o, r in runs.items()}
            print(
                f"{budget:>6} {kernel:>6} "
                + " ".join(f"{runs[o].retained:>10.6f}" for o in (1, 4, 16, 64))
                + "  "
                + "/".join("yes" if s else "no" for s in same)
                + " (4/16/64)"
            )
            if kernel == 1:
                out["kernel"].setdefault(str(budget), {})["1"] = runs[16].retained
                tova = replay(trace, steps, Tova(budget, 16), budget)
                identical = tova.victims == runs[16].victims and tova.retained == runs[16].retained
                out["tova_identical"][str(budget)] = {
                    "obs16": identical,
                    "obs1": tova.victims == runs[1].victims,
                }
            else:
                out["kernel"][str(budget)]["7"] = runs[16].retained
    print("poolKernel 1 against the independent TOVA (victims and retained mass identical?):")
    for budget, same in out["tova_identical"].items():
        print(
            f"  budget {budget}: obsWindow 16 {'yes' if same['obs16'] else 'no'}, "
            f"obsWindow 1 {'yes' if same['obs1'] else 'no'}"
        )
    print("poolKernel 7 against 1 (obsWindow 16): retained mass")
    for budget, row in out["kernel"].items():
        print(
            f"  budget {budget:>4}: k7 {row['7']:.6f}  k1 {row['1']:.6f}  "
            f"k7 - k1 {row['7'] - row['1']:+.6f}"
        )
    return out


def phrase_part(steps: int, budgets: Sequence[int] = (256, 512, 1024)) -> dict[str, Any]:
    print(f"\n== 3. Phrase-run trace ({steps} steps, epochs of 256) ==")
    trace = phrase_trace(seed=11, epoch=256)
    out: dict[str, Any] = {}
    for budget in budgets:
        row = {
            str(k): replay(trace, steps, snapkv(budget, 16, 16, k), budget).retained
            for k in (1, 3, 7)
        }
        out[str(budget)] = row
        print(
            f"  budget {budget:>4}: k1 {row['1']:.6f}  k3 {row['3']:.6f}  k7 {row['7']:.6f}  "
            f"k7 - k1 {row['7'] - row['1']:+.6f}"
        )
    return out


def real_part(
    budgets: Sequence[int], nll_budgets: Sequence[int], max_tokens: int | None = None
) -> dict[str, Any]:
    from conformance.tools.record.model import encode, load_weights
    from conformance.tools.record.recorder import run_many
    from conformance.tools.record.texts import get_text

    tokens = encode(get_text("alice").read())[:max_tokens]
    weights = load_weights()
    n = len(tokens)
    started = time.perf_counter()
    print(f"\n== 4. Real attention: SmolLM2-135M on 'alice' ({n} tokens) ==")
    names = list(POLICIES)
    streams: list[Any] = [None]
    for budget in nll_budgets:
        streams += [POLICIES[name](budget, max(1, budget // 8), n) for name in names]
    recordings = run_many(tokens, streams, weights=weights)
    full = recordings[0]
    print(f"(decoded {len(streams)} caches side by side in {time.perf_counter() - started:.0f} s)")
    full_rows = [None, *[np.asarray(r, dtype=np.float64) for r in full.rows[1:]]]
    sink = float(np.mean([r[0] for r in full_rows[1:] if r is not None]))
    print(
        f"full cache: mean NLL {np.mean(full.nll):.4f} nats/token; position 0 draws "
        f"{sink:.3f} of the attention on average"
    )

    def trace(t: int) -> np.ndarray:
        row = full_rows[t]
        assert row is not None
        return row

    out: dict[str, Any] = {
        "tokens": n,
        "full_nll": float(np.mean(full.nll)),
        "retained": {},
        "nll": {},
    }
    print(
        "retained mass when each policy replays the full-cache attention (recentWindow budget/8):"
    )
    print(f"{'budget':>6} " + " ".join(f"{name:>12}" for name in names))
    for budget in budgets:
        row = {
            name: replay(trace, n, POLICIES[name](budget, max(1, budget // 8), n), budget).retained
            for name in names
        }
        out["retained"][str(budget)] = row
        print(f"{budget:>6} " + " ".join(f"{row[name]:>12.4f}" for name in names))
    print(
        "next-token NLL change against the full cache (nats/token, mean over the text), "
        "each policy evicting in the loop:"
    )
    print(f"{'budget':>6} " + " ".join(f"{name:>12}" for name in names))
    for b_index, budget in enumerate(nll_budgets):
        row = {}
        for n_index, name in enumerate(names):
            rec = recordings[1 + b_index * len(names) + n_index]
            row[name] = float(np.mean(rec.nll) - np.mean(full.nll))
        out["nll"][str(budget)] = row
        print(f"{budget:>6} " + " ".join(f"{row[name]:>+12.4f}" for name in names))
    return out


#: Okabe and Ito's palette, told apart with any colour vision; each series also has its own
#: marker and line style, so that lines lying on top of each other stay visible.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000")
MARKERS = ("o", "s", "^", "x", "D", "v", "P")
LINES = ("-", "--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1)), "-")


def _series(ax: Any, index: int, xs: Sequence[int], ys: Sequence[float], label: str) -> None:
    ax.plot(
        xs,
        ys,
        color=PALETTE[index % len(PALETTE)],
        marker=MARKERS[index % len(MARKERS)],
        linestyle=LINES[index % len(LINES)],
        markerfacecolor="none",
        markersize=7 - index % 3,
        label=label,
    )


def _budget_axis(ax: Any, budgets: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(budgets, [str(b) for b in budgets])
    ax.set_xlabel("budget")


def plot(results: dict[str, Any], directory: Path) -> list[Path]:
    """Write ``synthetic.png`` (when a synthetic part ran) and ``real.png`` (when the real part
    did) into ``directory``; return the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    panels = [
        (key, title)
        for key, title in (
            ("canonical", "Heavy hitters, fresh noise"),
            ("steady", "Heavy hitters, steady rows"),
            ("phrase", "Phrase runs"),
        )
        if key in results
    ]
    if panels:
        # One y axis for all: every panel shows retained mass against the budget.
        fig, axes = plt.subplots(
            1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False, sharey=True
        )
        for ax, (key, title) in zip(axes[0], panels, strict=True):
            data = results[key] if key == "phrase" else results[key]["kernel"]
            budgets = sorted(int(b) for b in data)
            for index, kernel in enumerate(("1", "3", "7")):
                if kernel in data[str(budgets[0])]:
                    ys = [data[str(b)][kernel] for b in budgets]
                    _series(ax, index, budgets, ys, f"poolKernel {kernel}")
            _budget_axis(ax, budgets)
            ax.set_title(title)
            ax.legend(fontsize=8)
        axes[0][0].set_ylabel("retained attention mass")
        fig.tight_layout()
        written.append(directory / "synthetic.png")
        fig.savefig(written[-1], dpi=110)
        plt.close(fig)
    real = results.get("real")
    if real is not None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
        names = list(POLICIES)
        for ax, key, label in (
            (axes[0], "retained", "retained attention mass (replay)"),
            (axes[1], "nll", "NLL change vs full cache (nats/token)"),
        ):
            budgets = sorted(int(b) for b in real[key])
            for index, name in enumerate(names):
                _series(ax, index, budgets, [real[key][str(b)][name] for b in budgets], name)
            _budget_axis(ax, sorted({int(b) for k in ("retained", "nll") for b in real[k]}))
            ax.set_ylabel(label)
        # One legend for both panels: the same six policies, drawn alike in each.
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=len(names), fontsize=8)
        fig.suptitle(f"SmolLM2-135M on 'alice' ({real['tokens']} tokens)")
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        written.append(directory / "real.png")
        fig.savefig(written[-1], dpi=110)
        plt.close(fig)
    return written


def _writable(option: str, path: Path, directory: bool) -> None:
    """Make sure ``path`` can be written before hours of work: create what is missing, write
    and remove a probe; exit 2 with one line naming the option and why otherwise."""
    folder = path if directory else path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not directory and path.is_dir():
            raise IsADirectoryError(f"{path} is a directory")
        probe = folder / f".lab-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        print(f"lab: error: {option} {path}: cannot write there: {error}", file=sys.stderr)
        raise SystemExit(2) from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3072, help="synthetic trace length")
    parser.add_argument("--skip-real", action="store_true", help="synthetic traces only")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run in seconds: 200 synthetic steps at budgets 32 and 64, and the real "
        "part on the first 64 tokens (figures too small to read anything into)",
    )
    parser.add_argument("--plots", metavar="DIR", help="write PNGs here (needs matplotlib)")
    parser.add_argument("--json", metavar="FILE", help="write every figure as JSON here")
    parser.add_argument(
        "--plot-from",
        nargs="+",
        metavar="JSON",
        help="only plot, from the --json files of earlier runs (merged in order)",
    )
    parser.add_argument(
        "--parts",
        default="memory,canonical,steady,phrase,real",
        help="comma-separated parts to run (default all): memory, canonical, steady, phrase, real",
    )
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    unknown = parts - {"memory", "canonical", "steady", "phrase", "real"}
    if unknown:
        parser.error(f"--parts: unknown part {', '.join(sorted(unknown))}")
    if args.plots:
        _writable("--plots", Path(args.plots), directory=True)
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("lab: error: --plots needs matplotlib: pip install '.[lab]'", file=sys.stderr)
            return 2
    if args.json:
        _writable("--json", Path(args.json), directory=False)
    if args.plot_from:
        merged: dict[str, Any] = {}
        for name in args.plot_from:
            merged.update(json.loads(Path(name).read_text()))
        for path in plot(merged, Path(args.plots or ".")):
            print(f"wrote {path}")
        return 0
    steps = 200 if args.quick else args.steps
    budgets = (32, 64) if args.quick else (256, 512, 1024)
    results: dict[str, Any] = {}
    if "memory" in parts:
        results["memory"] = memory_part()
    if "canonical" in parts:
        results["canonical"] = canonical_part(steps, budgets=budgets)
    if "steady" in parts:
        results["steady"] = canonical_part(steps, fresh=False, budgets=budgets)
    if "phrase" in parts:
        results["phrase"] = phrase_part(steps, budgets=budgets)
    if "real" in parts and not args.skip_real:
        from conformance.tools.record import RecordSetupError, model_path, require_extras

        try:
            require_extras()
            model_path()
        except RecordSetupError as error:
            print(f"lab: skipping the real-attention part: {error}", file=sys.stderr)
        else:
            if args.quick:
                results["real"] = real_part((16, 32), (16, 32), max_tokens=64)
            else:
                results["real"] = real_part((32, 64, 128, 256), (32, 64, 128))
    if args.json:
        write_output(args.json, (json.dumps(results, indent=1) + "\n").encode())
        print(f"wrote {args.json}")
    if args.plots:
        for path in plot(results, Path(args.plots)):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
