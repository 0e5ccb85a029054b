//! Unit tests of the policy: the rules of SPEC.md §2, refusals, ties, summation order,
//! pooling and the ring. Expected values here are worked out by hand or by an independent
//! oracle written in the test, never by the code under test.

use super::*;

fn params(budget: i64, recent: i64, obs: i64, kernel: i64) -> Params {
    Params::new(budget, recent, obs, kernel).expect("valid params")
}

fn policy(budget: i64, recent: i64, obs: i64, kernel: i64) -> SnapKV {
    SnapKV::new(params(budget, recent, obs, kernel))
}

/// Everything observable about a policy's state, for checking that refusals change nothing.
fn snapshot(p: &SnapKV) -> (Vec<u32>, u32, Option<u32>, Vec<Vec<f32>>) {
    let rows = (0..p.kept().len()).map(|i| p.history(i)).collect();
    (p.kept().to_vec(), p.slot(), p.last_admitted(), rows)
}

/// Admit `positions` in order, each with an observed step of zero weights.
fn admit_with_zeros(p: &mut SnapKV, positions: &[i64]) {
    for &pos in positions {
        let zeros = vec![0.0; p.kept().len()];
        p.step(pos, Some(&zeros)).unwrap();
    }
}

/// A tiny deterministic generator (xorshift64*) so tests need no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

// -- params ------------------------------------------------------------------------------------

#[test]
fn params_accept_the_limits() {
    let big = INT31_MAX;
    assert!(Params::new(big, big - 1, big, big).is_ok());
    assert!(Params::new(1, 0, 1, 1).is_ok());
}

#[test]
fn params_refuse_every_rule_break() {
    let cases = [
        (0, 0, 1, 1),             // budget < 1
        (4, 4, 1, 1),             // recentWindow == budget
        (4, 5, 1, 1),             // recentWindow > budget
        (4, -1, 1, 1),            // negative
        (4, 0, 0, 1),             // obsWindow 0
        (4, 0, 1, 0),             // poolKernel 0
        (4, 0, 1, 2),             // even kernel
        (4, 0, 1, 8),             // even kernel
        (INT31_MAX + 1, 0, 1, 1), // beyond 2^31 - 1
        (4, 0, INT31_MAX + 1, 1), // beyond 2^31 - 1
        (4, 0, 1, INT31_MAX + 2), // beyond, and odd
    ];
    for (b, r, o, k) in cases {
        let error = Params::new(b, r, o, k).expect_err("must be refused");
        assert_eq!(error.kind, ErrorKind::InvalidParams, "{b} {r} {o} {k}");
    }
}

#[test]
fn huge_params_allocate_by_use_only() {
    let big = INT31_MAX;
    let mut p = policy(big, big - 1, big, big);
    for pos in 0..200 {
        let attn = vec![0.5f32; p.kept().len()];
        p.step(pos, Some(&attn)).unwrap();
    }
    assert_eq!(p.evict(), Vec::<u32>::new());
    assert_eq!(p.ring_width(), 200);
    // 200 rows by 200 written slots of float32, plus small change: far from 2^31 of anything.
    assert!(p.heap_bytes() < 400_000, "{} bytes", p.heap_bytes());
}

// -- step --------------------------------------------------------------------------------------

#[test]
fn positions_must_increase_and_stay_in_range() {
    let mut p = policy(4, 0, 2, 1);
    for bad in [-1, INT31_MAX + 1, i64::MAX, i64::MIN] {
        assert_eq!(
            p.step(bad, None).unwrap_err().kind,
            ErrorKind::InvalidPosition
        );
    }
    p.step(5, None).unwrap();
    assert_eq!(
        p.step(5, Some(&[0.0])).unwrap_err().kind,
        ErrorKind::InvalidPosition
    );
    assert_eq!(
        p.step(4, Some(&[0.0])).unwrap_err().kind,
        ErrorKind::InvalidPosition
    );
    p.step(INT31_MAX, Some(&[1.0])).unwrap();
    assert_eq!(p.kept(), &[5, INT31_MAX as u32]);
}

#[test]
fn evicted_positions_still_bound_the_next_position() {
    let mut p = policy(1, 0, 1, 1);
    p.step(3, None).unwrap();
    p.step(7, Some(&[0.0])).unwrap();
    assert_eq!(p.evict(), vec![3]);
    assert_eq!(
        p.step(5, Some(&[0.0])).unwrap_err().kind,
        ErrorKind::InvalidPosition
    );
}

#[test]
fn position_is_judged_before_attention() {
    let mut p = policy(4, 0, 2, 1);
    p.step(1, None).unwrap();
    // Both the position and the attention are wrong: the position is named.
    let error = p.step(1, Some(&[-1.0, 2.0])).unwrap_err();
    assert_eq!(error.kind, ErrorKind::InvalidPosition);
}

#[test]
fn attention_must_match_kept_and_be_finite_non_negative() {
    let mut p = policy(4, 0, 2, 1);
    p.step(0, None).unwrap();
    p.step(1, Some(&[0.25])).unwrap();
    let bad: [&[f32]; 6] = [
        &[0.25],
        &[0.25, 0.5, 0.5],
        &[0.25, -1e-30],
        &[f32::INFINITY, 0.0],
        &[0.0, f32::NEG_INFINITY],
        &[f32::NAN, 0.0],
    ];
    for attn in bad {
        assert_eq!(
            p.step(2, Some(attn)).unwrap_err().kind,
            ErrorKind::InvalidAttention,
            "{attn:?}"
        );
    }
    p.step(2, Some(&[-0.0, f32::MAX])).unwrap();
}

#[test]
fn empty_attention_is_an_observed_step() {
    // With nothing kept the list is empty, but it is not null: the cursor advances.
    let mut p = policy(4, 0, 3, 1);
    p.step(0, Some(&[])).unwrap();
    assert_eq!(p.slot(), 1);
}

#[test]
fn refusals_change_nothing() {
    let mut p = policy(3, 1, 3, 3);
    let mut rng = Rng(7);
    for pos in 0..9 {
        let attn: Vec<f32> = (0..p.kept().len())
            .map(|_| rng.below(4) as f32 / 4.0)
            .collect();
        p.step(pos * 2, Some(&attn)).unwrap();
        if pos % 3 == 2 {
            p.evict();
        }
    }
    let before = snapshot(&p);
    let kept = p.kept().len();
    let refused: Vec<(i64, Option<Vec<f32>>)> = vec![
        (16, None),
        (100, Some(vec![0.5; kept + 1])),
        (100, Some(vec![0.5; kept - 1])),
        (100, Some([vec![0.5; kept - 1], vec![-2.0]].concat())),
        (
            100,
            Some([vec![f32::INFINITY], vec![0.5; kept - 1]].concat()),
        ),
        (-3, Some(vec![0.5; kept])),
    ];
    for (pos, attn) in refused {
        assert!(p.step(pos, attn.as_deref()).is_err());
        assert_eq!(snapshot(&p), before);
    }
}

// -- the ring ----------------------------------------------------------------------------------

#[test]
fn null_attention_is_inert() {
    let mut p = policy(8, 0, 2, 1);
    p.step(0, None).unwrap();
    p.step(1, Some(&[1.0])).unwrap(); // slot 0
    assert_eq!(p.slot(), 1);
    let before = (0..2).map(|i| p.history(i)).collect::<Vec<_>>();
    p.step(2, None).unwrap();
    p.step(3, None).unwrap();
    assert_eq!(p.slot(), 1, "a null step must not move the cursor");
    assert_eq!((0..2).map(|i| p.history(i)).collect::<Vec<_>>(), before);
    p.step(4, Some(&[2.0, 3.0, 4.0, 5.0])).unwrap(); // slot 1
    assert_eq!(p.history(0), vec![1.0, 2.0]);
    p.step(5, Some(&[6.0, 7.0, 8.0, 9.0, 10.0])).unwrap(); // wraps to slot 0
    assert_eq!(p.history(0), vec![6.0, 2.0]);
    assert_eq!(p.history(4), vec![10.0, 0.0]);
    assert_eq!(p.slot(), 1);
}

#[test]
fn admitted_positions_start_with_zero_history_after_reuse() {
    // Evicting an entry and admitting a new one must not hand it the old ring.
    let mut p = policy(1, 0, 2, 1);
    p.step(0, None).unwrap();
    p.step(1, Some(&[9.0])).unwrap();
    p.step(2, Some(&[9.0, 0.0])).unwrap();
    assert_eq!(p.evict(), vec![1, 2]);
    p.step(3, Some(&[1.0])).unwrap();
    assert_eq!(p.kept(), &[0, 3]);
    assert_eq!(p.history(1), vec![0.0, 0.0]);
    // Position 0 keeps its own ring: 1 (slot 0, just written) + 9 (slot 1).
    assert_eq!(p.scores().sums, vec![10.0, 0.0]);
}

#[test]
fn sums_run_in_slot_index_order_not_chronological() {
    // obsWindow 3, four observed steps: slots hold [d, b, c] with b, c, d = 1, 2^53, 1.
    // Slot order: (1 + 1) + 2^53 = 2^53 + 2 exactly. Chronological order (b, c, d) or a
    // float32 accumulator would give 2^53.
    let two53 = 2f32.powi(53);
    let mut p = policy(8, 0, 3, 1);
    p.step(0, None).unwrap();
    for (pos, weight) in [(1, 5.0), (2, 1.0), (3, two53), (4, 1.0)] {
        let mut attn = vec![0.0; p.kept().len()];
        attn[0] = weight;
        p.step(pos, Some(&attn)).unwrap();
    }
    assert_eq!(p.history(0), vec![1.0, 1.0, two53]);
    assert_eq!(p.scores().sums[0], 2f64.powi(53) + 2.0);
}

#[test]
fn sums_start_from_positive_zero() {
    let mut p = policy(8, 0, 2, 1);
    p.step(0, None).unwrap();
    p.step(1, Some(&[-0.0])).unwrap();
    p.step(2, Some(&[-0.0, -0.0])).unwrap();
    for sum in p.scores().sums {
        assert_eq!(sum.to_bits(), 0.0f64.to_bits());
    }
}

// -- pooling -----------------------------------------------------------------------------------

fn naive_pool(sums: &[f64], radius: usize) -> Vec<f64> {
    (0..sums.len())
        .map(|i| {
            let lo = i.saturating_sub(radius);
            let hi = (i + radius).min(sums.len() - 1);
            sums[lo..=hi]
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect()
}

#[test]
fn pooling_clamps_at_both_ends() {
    let sums = [5.0, 1.0, 0.0, 0.0, 3.0, 0.0, 0.0];
    let mut pooled = Vec::new();
    pool(&sums, 1, &mut pooled);
    assert_eq!(pooled, vec![5.0, 5.0, 1.0, 3.0, 3.0, 3.0, 0.0]);
    pool(&sums, 100, &mut pooled);
    assert_eq!(pooled, vec![5.0; 7]);
    pool(&[], 3, &mut pooled);
    assert!(pooled.is_empty());
}

#[test]
fn both_pooling_methods_match_an_oracle() {
    let mut rng = Rng(99);
    for _ in 0..300 {
        let count = rng.below(40) as usize;
        let sums: Vec<f64> = (0..count).map(|_| rng.below(6) as f64).collect();
        for radius in [0, 1, 3, 8, 9, 12, 39, 1000] {
            let mut pooled = Vec::new();
            pool(&sums, radius, &mut pooled);
            assert_eq!(pooled, naive_pool(&sums, radius), "{sums:?} r={radius}");
        }
    }
}

#[test]
fn pooling_runs_over_kept_entries_not_position_numbers() {
    // Positions 0, 10, 20, 30 after gaps: neighbours are adjacent kept entries.
    let mut p = policy(3, 0, 1, 3);
    admit_with_zeros(&mut p, &[0, 10, 20]);
    p.step(30, Some(&[0.0, 4.0, 0.0])).unwrap();
    let scores = p.scores();
    assert_eq!(scores.pooled, vec![4.0, 4.0, 4.0, 0.0]);
    // The lowest is position 30 (the newest; recentWindow 0 leaves it a candidate).
    assert_eq!(p.evict(), vec![30]);
}

#[test]
fn protected_recent_entries_still_defend_their_neighbours() {
    // budget 3, recent 2: kept 0..4 with sums [0.5, 0.25, 0, 9, 0]; position 3 is protected
    // but still pools onto position 2: pooled [0.5, 0.5, 9, 9, 9], so two victims among the
    // candidates 0, 1, 2 are 0 and 1. Leaving 3 out of the pooling would evict 0 and 2.
    let mut p = policy(3, 2, 1, 3);
    admit_with_zeros(&mut p, &[0, 1, 2, 3]);
    p.step(4, Some(&[0.5, 0.25, 0.0, 9.0])).unwrap();
    assert_eq!(p.scores().pooled, vec![0.5, 0.5, 9.0, 9.0, 9.0]);
    assert_eq!(p.evict(), vec![0, 1]);
}

// -- selection ---------------------------------------------------------------------------------

#[test]
fn ties_evict_the_lower_position() {
    // recent 1 protects 9 (admitted with zeros); 3, 5 and 8 tie at 0.5.
    let mut p = policy(2, 1, 1, 1);
    admit_with_zeros(&mut p, &[3, 5, 8]);
    p.step(9, Some(&[0.5, 0.5, 0.5])).unwrap();
    assert_eq!(p.evict(), vec![3, 5]);
}

#[test]
fn victims_come_back_ascending_not_in_rank_order() {
    let mut p = policy(2, 0, 1, 1);
    admit_with_zeros(&mut p, &[0, 1, 2]);
    p.step(3, Some(&[0.3, 0.1, 0.9])).unwrap();
    // Sums [0.3, 0.1, 0.9, 0]: rank order 3, 1, 0; evict two: 3 and 1, reported [1, 3].
    assert_eq!(p.evict(), vec![1, 3]);
    assert_eq!(p.kept(), &[0, 2]);
}

#[test]
fn the_recent_window_is_never_evicted() {
    let mut p = policy(3, 2, 1, 1);
    for pos in 0..6 {
        let attn = vec![1.0; p.kept().len()];
        p.step(pos, Some(&attn)).unwrap();
    }
    // Kept 0..5 with positions 4 and 5 protected; 4 and 5 have the lowest scores (0 and 1).
    assert_eq!(p.evict(), vec![0, 1, 2]);
    assert_eq!(p.kept(), &[3, 4, 5]);
}

#[test]
fn several_steps_between_evictions() {
    let mut p = policy(4, 1, 4, 3);
    let mut rng = Rng(3);
    for pos in 0..40 {
        let attn: Vec<f32> = (0..p.kept().len()).map(|_| rng.below(8) as f32).collect();
        p.step(pos, Some(&attn)).unwrap();
    }
    assert_eq!(p.kept().len(), 40);
    let victims = p.evict();
    assert_eq!(victims.len(), 36);
    assert!(victims.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(p.kept().len(), 4);
    assert!(p.kept().contains(&39));
    assert_eq!(p.evict(), Vec::<u32>::new());
}

// -- reductions against independent oracles ----------------------------------------------------

/// Run a policy and an oracle side by side on random weights with ties; the oracle maps each
/// kept position's record of observed weights (oldest first) to a score.
fn against_oracle(budget: i64, recent: i64, obs: i64, oracle: impl Fn(&[f32]) -> f64) {
    let mut p = policy(budget, recent, obs, 1);
    let mut rng = Rng(budget as u64 * 31 + obs as u64);
    let mut kept: Vec<(u32, Vec<f32>)> = Vec::new();
    for pos in 0..300u32 {
        let attn: Vec<f32> = (0..kept.len())
            .map(|_| rng.below(5) as f32 * 0.25)
            .collect();
        p.step(i64::from(pos), Some(&attn)).unwrap();
        for ((_, seen), weight) in kept.iter_mut().zip(&attn) {
            seen.push(*weight);
        }
        kept.push((pos, Vec::new()));
        if rng.below(3) == 0 {
            let excess = kept.len().saturating_sub(budget as usize);
            let candidates = kept.len().saturating_sub(recent as usize);
            let mut ranked: Vec<(f64, u32)> = kept[..candidates]
                .iter()
                .map(|(pos, seen)| (oracle(seen), *pos))
                .collect();
            ranked.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let mut expected: Vec<u32> = ranked[..excess].iter().map(|&(_, pos)| pos).collect();
            expected.sort_unstable();
            kept.retain(|(pos, _)| !expected.contains(pos));
            assert_eq!(p.evict(), expected);
        }
    }
}

#[test]
fn kernel_one_window_one_is_tova() {
    // The latest observed weight, or 0 for a position observed never.
    against_oracle(6, 0, 1, |seen| seen.last().map_or(0.0, |&w| f64::from(w)));
    against_oracle(5, 2, 1, |seen| seen.last().map_or(0.0, |&w| f64::from(w)));
}

#[test]
fn kernel_one_long_window_is_h2o() {
    // Cumulative attention; quarters sum exactly, so the order of additions cannot matter.
    let cumulative = |seen: &[f32]| seen.iter().map(|&w| f64::from(w)).sum::<f64>();
    against_oracle(6, 2, 1000, cumulative);
    against_oracle(4, 0, INT31_MAX, cumulative);
}

// -- storage -----------------------------------------------------------------------------------

#[test]
fn remove_sorted_keeps_order() {
    let mut items: Vec<u32> = (0..10).collect();
    remove_sorted(&mut items, &[0, 3, 4, 9]);
    assert_eq!(items, vec![1, 2, 5, 6, 7, 8]);
    remove_sorted(&mut items, &[]);
    assert_eq!(items.len(), 6);
}

#[test]
fn steady_state_keeps_budget_plus_one_rows() {
    let mut p = SnapKV::new(Params::DEFAULT);
    for pos in 0..2000 {
        let attn = vec![0.125; p.kept().len()];
        p.step(pos, Some(&attn)).unwrap();
        p.evict();
    }
    assert_eq!(p.kept().len(), 512);
    let slot_bytes = 4 + 4 * 16 + 2 * 8;
    assert_eq!(p.rows, 513);
    // positions, 16 ring columns and two scratch vectors at 513 rows, plus the column headers.
    assert_eq!(
        p.heap_bytes(),
        513 * slot_bytes + 16 * std::mem::size_of::<Vec<f32>>()
    );
}
