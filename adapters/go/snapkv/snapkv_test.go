package snapkv

import (
	"math"
	"slices"
	"testing"
)

func mustNew(t *testing.T, p Params) *Policy {
	t.Helper()
	policy, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return policy
}

func mustStep(t *testing.T, p *Policy, pos int64, attn []float64) {
	t.Helper()
	if err := p.Step(pos, attn); err != nil {
		t.Fatal(err)
	}
}

func kindOf(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Kind
	}
	return ""
}

// The session of README.md "Writing an adapter": position 1 received 0.5 then 0.25 (sum
// 0.75), position 2 received 0.1f; with poolKernel 1 and budget 2, position 2 goes.
func TestReadmeSession(t *testing.T) {
	p := mustNew(t, Params{Budget: 2, RecentWindow: 0, ObsWindow: 2, PoolKernel: 1})
	mustStep(t, p, 0, nil)
	mustStep(t, p, 1, []float64{0.5})
	mustStep(t, p, 2, []float64{0.25, 0.10000000149011612})
	if got := p.Evict(); !slices.Equal(got, []int64{2}) {
		t.Fatalf("victims %v, want [2]", got)
	}
	if err := p.Step(2, nil); kindOf(err) != InvalidPosition {
		t.Fatalf("a repeated position: %v", err)
	}
}

func TestTiesEvictTheLowerPositionAndVictimsAreAscending(t *testing.T) {
	p := mustNew(t, Params{Budget: 2, RecentWindow: 0, ObsWindow: 1, PoolKernel: 1})
	for pos := int64(0); pos < 5; pos++ {
		mustStep(t, p, pos*10, nil) // every score is 0
	}
	if got := p.Evict(); !slices.Equal(got, []int64{0, 10, 20}) {
		t.Fatalf("victims %v, want [0 10 20]", got)
	}
	if got := p.Evict(); got == nil || len(got) != 0 {
		t.Fatalf("nothing to evict must give an empty, non-nil list, got %#v", got)
	}
}

func TestRefusedCallsChangeNothing(t *testing.T) {
	p := mustNew(t, Params{Budget: 1, RecentWindow: 0, ObsWindow: 2, PoolKernel: 1})
	mustStep(t, p, 0, nil)
	for _, attn := range [][]float64{{-0.5}, {math.Inf(1)}, {0x1p128 - 0x1p103}, {1, 2}, {}} {
		if err := p.Step(1, attn); kindOf(err) != InvalidAttention {
			t.Fatalf("attn %v: %v", attn, err)
		}
	}
	if err := p.Step(-1, []float64{-1}); kindOf(err) != InvalidPosition {
		t.Fatalf("the position is judged before the attention: %v", err)
	}
	mustStep(t, p, 1, []float64{1})
	if s := p.Scores(); !slices.Equal(s.Sums, []float64{1, 0}) {
		t.Fatalf("sums %v after refusals, want [1 0]", s.Sums)
	}
}

func TestNarrowRoundsViaFloat64AndRefusesTheMidpoint(t *testing.T) {
	const midpoint = 0x1p128 - 0x1p103
	cases := []struct {
		in   float64
		want float32
		ok   bool
	}{
		{0.1, 0.1, true},
		{math.Copysign(0, -1), 0, true},
		{-1e-50, 0, true}, // rounds to -0.0: counts as zero
		{math.MaxFloat32, math.MaxFloat32, true},
		{math.Nextafter(midpoint, 0), math.MaxFloat32, true},
		{midpoint, 0, false},
		{-midpoint, 0, false},
		{-1e-30, 0, false},
	}
	for _, c := range cases {
		got, ok := Narrow(c.in)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("Narrow(%v) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestParametersAtTheLimitCostOnlyWhatIsUsed(t *testing.T) {
	p := mustNew(t, Params{Budget: MaxInt31, RecentWindow: MaxInt31 - 1, ObsWindow: MaxInt31, PoolKernel: MaxInt31})
	mustStep(t, p, 0, nil)
	mustStep(t, p, 1, []float64{0.5})
	if got := len(p.kept[0].ring); got != 1 {
		t.Fatalf("a ring holds %d columns after one observed step, want 1", got)
	}
	for _, bad := range []Params{{0, 0, 1, 1}, {2, 2, 1, 1}, {2, 0, 0, 1}, {2, 0, 1, 2}, {MaxInt31 + 1, 0, 1, 1}} {
		if _, err := New(bad); kindOf(err) != InvalidParams {
			t.Errorf("New(%+v): %v", bad, err)
		}
	}
}
