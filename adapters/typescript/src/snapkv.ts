// The decode-time SnapKV eviction policy of SPEC.md §2: no I/O, no JSON.
// A refused call throws a PolicyError and changes nothing.

export const MAX_INT31 = 2 ** 31 - 1;

export type ErrorKind = "invalid-params" | "invalid-attention" | "invalid-position";

export class PolicyError extends Error {
  constructor(readonly kind: ErrorKind, message: string) {
    super(message);
  }
}

export interface Params {
  budget: number;
  recentWindow: number;
  obsWindow: number;
  poolKernel: number;
}

export interface Scores {
  positions: number[];
  sums: number[];
  pooled: number[];
}

interface Entry {
  pos: number;
  // The history columns written so far. A column never written is zero and changes no sum,
  // so the ring grows with use instead of being sized by obsWindow, which may be 2^31 - 1.
  ring: number[];
  // The ring's slot-order sum while the ring has not wrapped (see SnapKV.wrapped).
  sum: number;
}

/**
 * Round a weight, already the nearest double to its decimal, to the nearest float32 (ties to
 * even); null when §2.3 refuses it: infinite after rounding (at or beyond 2^128 - 2^103) or
 * negative (-0 and tiny negatives that round to -0 count as zero).
 */
export function narrow(weight: number): number | null {
  const f = Math.fround(weight);
  return Number.isFinite(f) && !(f < 0) ? f : null;
}

/**
 * max(sums[i - r .. i + r]) clamped to the array, for every i, in time linear in its length
 * whatever r: a queue of indices whose sums decrease, front the largest. Max is exact, so any
 * way of finding it gives the same value.
 */
export function slidingMax(sums: number[], r: number): number[] {
  const n = sums.length;
  const pooled = new Array<number>(n);
  const queue: number[] = [];
  let head = 0; // queue[head..] is the live part
  let next = 0; // the next index to enter the window
  for (let i = 0; i < n; i++) {
    for (; next <= Math.min(n - 1, i + r); next++) {
      while (queue.length > head && sums[queue[queue.length - 1]] <= sums[next]) queue.pop();
      queue.push(next);
    }
    while (queue[head] < i - r) head++;
    pooled[i] = sums[queue[head]];
  }
  return pooled;
}

export class SnapKV {
  private kept: Entry[] = []; // ascending position
  private slot = 0; // the ring cursor shared by every entry
  private last = -1; // the highest position ever admitted
  // The cursor came back to slot 0. Until then every write goes to a slot above all the entry
  // has, so adding it to a running sum is the slot-order sum, addition for addition; a ring of
  // 2^31 - 1 slots then costs nothing per evict. After, sums are recomputed at each scoring.
  private wrapped = false;

  constructor(readonly params: Params) {
    const { budget, recentWindow, obsWindow, poolKernel } = params;
    const inRange = (v: number, lo: number) => Number.isSafeInteger(v) && v >= lo && v <= MAX_INT31;
    if (!inRange(budget, 1)) throw new PolicyError("invalid-params", `budget must be in [1, 2^31 - 1], got ${budget}`);
    if (!inRange(recentWindow, 0) || recentWindow >= budget)
      throw new PolicyError("invalid-params", `recentWindow must be in [0, budget), got ${recentWindow}`);
    if (!inRange(obsWindow, 1)) throw new PolicyError("invalid-params", `obsWindow must be in [1, 2^31 - 1], got ${obsWindow}`);
    if (!inRange(poolKernel, 1) || poolKernel % 2 === 0)
      throw new PolicyError("invalid-params", `poolKernel must be odd and in [1, 2^31 - 1], got ${poolKernel}`);
  }

  /** Judge pos as step would (§2.3 rule 1), changing nothing. */
  checkPosition(pos: number): void {
    if (!Number.isSafeInteger(pos) || pos < 0 || pos > MAX_INT31)
      throw new PolicyError("invalid-position", `pos must be in [0, 2^31 - 1], got ${pos}`);
    if (pos <= this.last)
      throw new PolicyError("invalid-position", `pos ${pos} must be greater than the last admitted position ${this.last}`);
  }

  /**
   * Observe one decode step: one weight per kept position (each the nearest double to its
   * decimal), or null when the step's attention was not observed. Judged whole first.
   */
  step(pos: number, attn: number[] | null): void {
    this.checkPosition(pos);
    if (attn !== null) {
      if (attn.length !== this.kept.length)
        throw new PolicyError("invalid-attention", `attn has ${attn.length} weights, but ${this.kept.length} positions are kept`);
      const weights = attn.map((w, i) => {
        const f = narrow(w);
        if (f === null) throw new PolicyError("invalid-attention", `attn[${i}] must be a finite float32 >= 0, got ${w}`);
        return f;
      });
      this.kept.forEach((entry, i) => {
        while (entry.ring.length <= this.slot) entry.ring.push(0);
        entry.ring[this.slot] = weights[i];
        entry.sum += weights[i]; // +0 + -0 is +0, as in the slot-order sum
      });
      // An empty list (nothing kept) still moves the cursor; a null step does not.
      this.slot = (this.slot + 1) % this.params.obsWindow;
      this.wrapped ||= this.slot === 0;
    }
    this.kept.push({ pos, ring: [], sum: 0 }); // a new position's history is all zeros
    this.last = pos;
  }

  /** What an evict now would rank by (§2.5), changing nothing. */
  scores(): Scores {
    const n = this.kept.length;
    // Float64 (every JS number is one), from +0, over ring slots 0 upward: not pairwise, not
    // from the cursor.
    const sums = this.kept.map((entry) => {
      if (!this.wrapped) return entry.sum;
      let sum = 0;
      for (const w of entry.ring) sum += w;
      return sum;
    });
    // Max pooling over neighbouring kept entries (not neighbouring numbers), clamped at both
    // ends. r is clamped to n first: poolKernel may be 2^31 - 1.
    const r = Math.min((this.params.poolKernel - 1) / 2, n);
    return { positions: this.kept.map((e) => e.pos), sums, pooled: slidingMax(sums, r) };
  }

  /** Remove max(0, kept - budget) positions chosen from one scoring; return them ascending. */
  evict(): number[] {
    const k = this.kept.length - this.params.budget;
    if (k <= 0) return [];
    const { pooled } = this.scores();
    // Candidates: all but the recentWindow highest; rank by (pooled, position).
    const candidates = Array.from({ length: this.kept.length - this.params.recentWindow }, (_, i) => i);
    const compare = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);
    candidates.sort((i, j) => compare(pooled[i], pooled[j]) || compare(this.kept[i].pos, this.kept[j].pos));
    const evicted = new Set(candidates.slice(0, k));
    // Survivors keep their rings as they are; the cursor does not move.
    const victims = this.kept.filter((_, i) => evicted.has(i)).map((e) => e.pos);
    this.kept = this.kept.filter((_, i) => !evicted.has(i));
    return victims;
  }
}
