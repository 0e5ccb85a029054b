//! The decode-time SnapKV KV-cache eviction policy (SPEC.md §2), written from the spec text.
//!
//! State: the kept positions in ascending order, a float32 history ring of `obsWindow` values
//! per kept position and one shared ring cursor `slot`. [`SnapKV::step`] records one decode
//! step's attention into the ring and admits a position; [`SnapKV::evict`] removes the
//! positions with the lowest max-pooled window sums outside the protected recent window.
//!
//! Memory layout: 4-byte positions, float32 history, float64 scratch. The ring is
//! stored column by column (`columns[s][i]` is `history[i][s]`), and a column is allocated only
//! when its slot is first written, so `obsWindow` (and `budget`) may be as large as `2^31 - 1`
//! without allocating anything up front: memory follows what the run actually uses.
//!
//! The protocol-v1 adapter lives in [`protocol`] over the small JSON reader in [`json`].

pub mod json;
pub mod protocol;

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fmt;

/// The largest value any parameter or position may take: `2^31 - 1`.
pub const INT31_MAX: i64 = (1 << 31) - 1;

/// The error kinds of protocol v1 (SPEC.md §3). Nothing here may be renamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    InvalidParams,
    InvalidAttention,
    InvalidPosition,
    NoPolicy,
    BadRequest,
    Unsupported,
}

impl ErrorKind {
    /// The wire name of the kind, e.g. `"invalid-params"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidParams => "invalid-params",
            ErrorKind::InvalidAttention => "invalid-attention",
            ErrorKind::InvalidPosition => "invalid-position",
            ErrorKind::NoPolicy => "no-policy",
            ErrorKind::BadRequest => "bad-request",
            ErrorKind::Unsupported => "unsupported",
        }
    }
}

/// A refused call: its kind and a message that names the offending value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    pub kind: ErrorKind,
    pub message: String,
}

impl PolicyError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> PolicyError {
        PolicyError {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

impl std::error::Error for PolicyError {}

fn invalid_params(message: String) -> PolicyError {
    PolicyError::new(ErrorKind::InvalidParams, message)
}

/// Validated construction parameters (SPEC.md §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub budget: u32,
    pub recent_window: u32,
    pub obs_window: u32,
    pub pool_kernel: u32,
}

impl Params {
    /// The defaults for benchmarks and tools; SPEC.md does not fix them.
    pub const DEFAULT: Params = Params {
        budget: 512,
        recent_window: 16,
        obs_window: 16,
        pool_kernel: 7,
    };

    /// The wire names, in the order they are judged.
    pub const NAMES: [&'static str; 4] = ["budget", "recentWindow", "obsWindow", "poolKernel"];

    /// Validate four integer parameters, given in [`Params::NAMES`] order.
    ///
    /// Each must lie in `[0, 2^31 - 1]`, and `budget >= 1`, `recentWindow < budget`,
    /// `obsWindow >= 1`, `poolKernel` odd. Any fault is `invalid-params`.
    pub fn new(
        budget: i64,
        recent_window: i64,
        obs_window: i64,
        pool_kernel: i64,
    ) -> Result<Params, PolicyError> {
        let values = [budget, recent_window, obs_window, pool_kernel];
        for (name, value) in Params::NAMES.iter().zip(values) {
            if !(0..=INT31_MAX).contains(&value) {
                return Err(invalid_params(format!(
                    "{name} must be in [0, 2^31 - 1], got {value}"
                )));
            }
        }
        if budget < 1 {
            return Err(invalid_params(format!("budget must be >= 1, got {budget}")));
        }
        if recent_window >= budget {
            return Err(invalid_params(format!(
                "recentWindow must be < budget, got recentWindow {recent_window} with budget {budget}"
            )));
        }
        if obs_window < 1 {
            return Err(invalid_params(format!(
                "obsWindow must be >= 1, got {obs_window}"
            )));
        }
        if pool_kernel < 1 || pool_kernel % 2 == 0 {
            return Err(invalid_params(format!(
                "poolKernel must be odd and >= 1, got {pool_kernel}"
            )));
        }
        // The range check above makes every narrowing below lossless.
        Ok(Params {
            budget: budget as u32,
            recent_window: recent_window as u32,
            obs_window: obs_window as u32,
            pool_kernel: pool_kernel as u32,
        })
    }
}

/// What an `evict` now would rank by: kept positions with their window sums and pooled scores.
#[derive(Clone, Debug, PartialEq)]
pub struct Scores {
    pub positions: Vec<u32>,
    pub sums: Vec<f64>,
    pub pooled: Vec<f64>,
}

/// Above this pooling radius the O(kept) monotonic-queue max replaces the O(kept × r) scan.
const NAIVE_POOL_RADIUS: usize = 8;
/// Row capacity of the first allocation.
const MIN_ROWS: usize = 16;

/// The SnapKV policy. Every refused call leaves the state exactly as it was.
#[derive(Clone, Debug)]
pub struct SnapKV {
    params: Params,
    /// Kept positions, ascending.
    positions: Vec<u32>,
    /// Ring columns written so far: `columns[s][i]` is slot `s` of kept entry `i`. There are
    /// `min(observed steps, obsWindow)` of them, each exactly `positions.len()` long; a column
    /// never written holds zeros, which add nothing to a sum started at `+0.0`.
    columns: Vec<Vec<f32>>,
    /// The shared ring cursor, in `[0, obsWindow)`.
    slot: u32,
    /// The highest position ever admitted, evicted or not.
    last_admitted: Option<u32>,
    /// The row capacity that `positions`, every column and the scratch are kept at.
    rows: usize,
    /// The window sums, kept current by each step until the ring first wraps, then scratch
    /// recomputed at each evict (see `record`).
    sums: Vec<f64>,
    /// Whether the cursor has come back to slot 0 at least once.
    wrapped: bool,
    /// Scratch for evictions: the pooled scores.
    pooled: Vec<f64>,
}

/// A candidate's rank key: smaller `(pooled, position)` is evicted first.
#[derive(Clone, Copy, Debug)]
struct Rank {
    pooled: f64,
    position: u32,
    index: usize,
}

impl Ord for Rank {
    fn cmp(&self, other: &Rank) -> Ordering {
        // Scores are sums of finite non-negative floats, never NaN, so this order is total.
        self.pooled
            .partial_cmp(&other.pooled)
            .unwrap_or(Ordering::Equal)
            .then(self.position.cmp(&other.position))
    }
}

impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Rank) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Rank {
    fn eq(&self, other: &Rank) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Rank {}

impl SnapKV {
    /// An empty policy. Nothing proportional to `budget` or `obsWindow` is allocated here.
    pub fn new(params: Params) -> SnapKV {
        SnapKV {
            params,
            positions: Vec::new(),
            columns: Vec::new(),
            slot: 0,
            last_admitted: None,
            rows: 0,
            sums: Vec::new(),
            wrapped: false,
            pooled: Vec::new(),
        }
    }

    pub fn params(&self) -> Params {
        self.params
    }

    /// The kept positions, ascending.
    pub fn kept(&self) -> &[u32] {
        &self.positions
    }

    /// The ring cursor: the slot the next observed step writes.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// The highest position ever admitted (evicted or not), if any.
    pub fn last_admitted(&self) -> Option<u32> {
        self.last_admitted
    }

    /// The ring slots allocated so far: `min(observed steps, obsWindow)`.
    pub fn ring_width(&self) -> usize {
        self.columns.len()
    }

    /// Kept entry `index`'s history over the allocated slots (slots beyond are zeros).
    pub fn history(&self, index: usize) -> Vec<f32> {
        self.columns.iter().map(|column| column[index]).collect()
    }

    /// Heap bytes this policy holds now, from its allocations' capacities.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.positions.capacity() * size_of::<u32>()
            + self.columns.capacity() * size_of::<Vec<f32>>()
            + self
                .columns
                .iter()
                .map(|c| c.capacity() * size_of::<f32>())
                .sum::<usize>()
            + (self.sums.capacity() + self.pooled.capacity()) * size_of::<f64>()
    }

    /// Judge a step's position: an integer in `[0, 2^31 - 1]` above every admitted position.
    pub fn check_position(&self, pos: i64) -> Result<u32, PolicyError> {
        if !(0..=INT31_MAX).contains(&pos) {
            return Err(PolicyError::new(
                ErrorKind::InvalidPosition,
                format!("pos must be in [0, 2^31 - 1], got {pos}"),
            ));
        }
        if let Some(last) = self.last_admitted {
            if pos <= i64::from(last) {
                return Err(PolicyError::new(
                    ErrorKind::InvalidPosition,
                    format!("pos {pos} must be greater than the last admitted position {last}"),
                ));
            }
        }
        Ok(pos as u32)
    }

    /// Judge a step's (already float32) weights: one per kept entry, each finite and `>= 0`.
    ///
    /// `-0.0` counts as zero and is accepted. NaN is refused (it cannot come from JSON).
    pub fn check_attention(&self, attn: &[f32]) -> Result<(), PolicyError> {
        if attn.len() != self.positions.len() {
            return Err(PolicyError::new(
                ErrorKind::InvalidAttention,
                format!(
                    "attn has {} weight(s) but {} position(s) are kept",
                    attn.len(),
                    self.positions.len()
                ),
            ));
        }
        for (index, &weight) in attn.iter().enumerate() {
            let reason = if weight.is_infinite() {
                "is beyond the float32 range"
            } else if weight.is_nan() {
                "is not a number"
            } else if weight < 0.0 {
                "is negative"
            } else {
                continue;
            };
            return Err(PolicyError::new(
                ErrorKind::InvalidAttention,
                format!("attn[{index}] {reason}: {weight:?}"),
            ));
        }
        Ok(())
    }

    /// One decode step: record `attn` (if any) into the ring, then admit `pos`.
    ///
    /// The position is judged before the attention; a refusal changes nothing.
    pub fn step(&mut self, pos: i64, attn: Option<&[f32]>) -> Result<(), PolicyError> {
        let position = self.check_position(pos)?;
        if let Some(weights) = attn {
            self.check_attention(weights)?;
            self.record(weights);
        }
        self.admit(position);
        Ok(())
    }

    /// Evict `max(0, len(kept) - budget)` positions and return them in ascending order.
    pub fn evict(&mut self) -> Vec<u32> {
        let excess = self
            .positions
            .len()
            .saturating_sub(self.params.budget as usize);
        if excess == 0 {
            return Vec::new();
        }
        self.rank();
        let victims = self.select(excess);
        let evicted = victims.iter().map(|&index| self.positions[index]).collect();
        remove_sorted(&mut self.positions, &victims);
        for column in &mut self.columns {
            remove_sorted(column, &victims);
        }
        if !self.wrapped {
            remove_sorted(&mut self.sums, &victims);
        }
        evicted
    }

    /// The sums and pooled scores an `evict` now would rank by.
    pub fn scores(&mut self) -> Scores {
        self.rank();
        Scores {
            positions: self.positions.clone(),
            sums: self.sums.clone(),
            pooled: self.pooled.clone(),
        }
    }

    /// Write `history[i][slot] = weights[i]` for every kept `i`, then advance the cursor.
    fn record(&mut self, weights: &[f32]) {
        let slot = self.slot as usize;
        if slot == self.columns.len() {
            // The cursor reaches a slot for the first time: allocate its column. Slots are
            // reached in order 0, 1, 2, ... so `slot` is never beyond the allocated columns.
            let mut column = Vec::with_capacity(self.rows);
            column.resize(self.positions.len(), 0.0);
            self.columns.push(column);
        }
        self.columns[slot].copy_from_slice(weights);
        // Until the ring wraps, slots are written in index order 0, 1, 2, ... and every slot
        // past the cursor is zero, so adding each weight as it arrives performs exactly the
        // additions of a slot-order sum, in the same order: the same bits, without re-adding
        // every written column at each evict (which made a huge obsWindow cost O(steps)).
        if !self.wrapped {
            for (sum, &weight) in self.sums.iter_mut().zip(weights) {
                *sum += f64::from(weight);
            }
        }
        self.slot = ((slot + 1) % self.params.obs_window as usize) as u32;
        if self.slot == 0 {
            self.wrapped = true;
        }
    }

    /// Append `position` with an all-zero history (never a stale one).
    fn admit(&mut self, position: u32) {
        if self.positions.len() == self.rows {
            self.grow_rows();
        }
        self.positions.push(position);
        for column in &mut self.columns {
            column.push(0.0);
        }
        if !self.wrapped {
            self.sums.push(0.0);
        }
        self.last_admitted = Some(position);
    }

    /// Grow every row-indexed allocation together: doubling, but never past `budget + 1` until
    /// the run needs more, so a harness that evicts after every step keeps exactly
    /// `budget + 1` rows.
    fn grow_rows(&mut self) {
        let len = self.positions.len();
        let steady = self.params.budget as usize + 1;
        let doubled = (2 * len).max(MIN_ROWS);
        let rows = if len < steady {
            doubled.min(steady)
        } else {
            doubled
        };
        let extra = rows - len;
        self.positions.reserve_exact(extra);
        for column in &mut self.columns {
            column.reserve_exact(extra);
        }
        self.sums.reserve_exact(rows - self.sums.len());
        self.rows = rows;
    }

    /// Fill the scratch: window sums, then their clamped max-pool over kept entries.
    fn rank(&mut self) {
        let count = self.positions.len();
        self.pooled.clear();
        self.pooled.reserve_exact(self.rows);
        if self.wrapped {
            self.sums.clear();
            self.sums.reserve_exact(self.rows);
            window_sums(&self.columns, count, &mut self.sums);
        }
        let radius = ((self.params.pool_kernel - 1) / 2) as usize;
        pool(&self.sums, radius, &mut self.pooled);
    }

    /// Kept indices of the `count` candidates with the smallest `(pooled, position)`, ascending.
    fn select(&self, count: usize) -> Vec<usize> {
        // Candidates are every kept entry but the `recentWindow` highest; `recentWindow <
        // budget` guarantees more candidates than victims.
        let candidates = self
            .positions
            .len()
            .saturating_sub(self.params.recent_window as usize);
        // A max-heap of the `count` best so far: memory by the number of victims, not kept.
        let mut worst_kept: BinaryHeap<Rank> = BinaryHeap::with_capacity(count + 1);
        for index in 0..candidates {
            let rank = Rank {
                pooled: self.pooled[index],
                position: self.positions[index],
                index,
            };
            if worst_kept.len() < count {
                worst_kept.push(rank);
            } else if let Some(mut top) = worst_kept.peek_mut() {
                if rank < *top {
                    *top = rank;
                }
            }
        }
        let mut victims: Vec<usize> = worst_kept.into_iter().map(|rank| rank.index).collect();
        victims.sort_unstable();
        victims
    }
}

/// `sums[i] = history[i][0] + history[i][1] + ...` in float64, slot index order, from `+0.0`.
///
/// Column by column, so each entry's additions happen in slot order; unallocated slots are
/// zeros and skipping them cannot change a sum that started at `+0.0`.
pub fn window_sums(columns: &[Vec<f32>], count: usize, sums: &mut Vec<f64>) {
    sums.clear();
    sums.resize(count, 0.0);
    for column in columns {
        for (sum, &weight) in sums.iter_mut().zip(column) {
            *sum += f64::from(weight);
        }
    }
}

/// `pooled[i] = max(sums[j])` over kept indices `j` in `[i - radius, i + radius]` clamped to
/// the list. Max is exact, so the two methods below give identical bits.
pub fn pool(sums: &[f64], radius: usize, pooled: &mut Vec<f64>) {
    pooled.clear();
    let count = sums.len();
    let radius = radius.min(count.saturating_sub(1));
    if radius <= NAIVE_POOL_RADIUS {
        pooled.extend_from_slice(sums);
        for offset in 1..=radius {
            for i in 0..count - offset {
                pooled[i] = pooled[i].max(sums[i + offset]);
                pooled[i + offset] = pooled[i + offset].max(sums[i]);
            }
        }
        return;
    }
    // Sliding-window max with a monotonic queue of indices whose sums decrease front to back.
    let mut queue = std::collections::VecDeque::with_capacity(2 * radius + 1);
    let mut next = 0;
    for i in 0..count {
        let end = (i + radius).min(count - 1);
        while next <= end {
            while queue
                .back()
                .is_some_and(|&back: &usize| sums[back] <= sums[next])
            {
                queue.pop_back();
            }
            queue.push_back(next);
            next += 1;
        }
        while queue.front().is_some_and(|&front| front + radius < i) {
            queue.pop_front();
        }
        pooled.push(sums[queue[0]]);
    }
}

/// Remove the entries at `victims` (ascending, distinct indices) in one pass.
fn remove_sorted<T: Copy>(items: &mut Vec<T>, victims: &[usize]) {
    let Some(&first) = victims.first() else {
        return;
    };
    let mut write = first;
    for (n, &victim) in victims.iter().enumerate() {
        let end = victims.get(n + 1).copied().unwrap_or(items.len());
        items.copy_within(victim + 1..end, write);
        write += end - victim - 1;
    }
    items.truncate(write);
}

#[cfg(test)]
mod tests;
