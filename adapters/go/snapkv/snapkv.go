// Package snapkv is the decode-time SnapKV eviction policy of SPEC.md §2: no I/O, no JSON.
//
// A refused call returns an *Error and changes nothing. Positions are int64 so that a caller
// can pass any parsed integer and let the policy judge its range.
package snapkv

import (
	"fmt"
	"math"
	"sort"
)

// Error kinds of protocol v1 (SPEC.md §3.3) that the policy itself produces.
const (
	InvalidParams    = "invalid-params"
	InvalidAttention = "invalid-attention"
	InvalidPosition  = "invalid-position"
)

// MaxInt31 is 2^31 - 1, the upper bound of every parameter and position.
const MaxInt31 = math.MaxInt32

// Error is a refused call: Kind is a protocol v1 error kind, Message is for people.
type Error struct {
	Kind    string
	Message string
}

func (e *Error) Error() string { return e.Kind + ": " + e.Message }

func refuse(kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Params are the four construction parameters (SPEC.md §2.1).
type Params struct {
	Budget, RecentWindow, ObsWindow, PoolKernel int64
}

type entry struct {
	pos int64
	// ring holds the history columns written so far; columns never written are zeros and
	// change no sum, so the ring grows with use instead of being sized by obsWindow, which
	// may be 2^31 - 1 (SPEC.md §2.1, memory by use).
	ring []float32
	// sum is ring's slot-order sum while the ring has not wrapped (see Policy.wrapped).
	sum float64
}

// Policy is one SnapKV cache.
type Policy struct {
	params Params
	kept   []entry // ascending position
	slot   int64   // the ring cursor shared by every entry
	last   int64   // the highest position ever admitted, -1 before the first
	// wrapped: the cursor came back to slot 0. Until then every write goes to a slot above
	// all the entry has, so adding it to a running sum is the slot-order sum, addition for
	// addition; a ring of 2^31 - 1 slots then costs nothing per evict. After, sums are
	// recomputed from the ring at each scoring.
	wrapped bool
}

// New checks the parameters and builds an empty policy.
func New(p Params) (*Policy, error) {
	switch {
	case p.Budget < 1 || p.Budget > MaxInt31:
		return nil, refuse(InvalidParams, "budget must be in [1, 2^31 - 1], got %d", p.Budget)
	case p.RecentWindow < 0 || p.RecentWindow >= p.Budget:
		return nil, refuse(InvalidParams, "recentWindow must be in [0, budget), got %d", p.RecentWindow)
	case p.ObsWindow < 1 || p.ObsWindow > MaxInt31:
		return nil, refuse(InvalidParams, "obsWindow must be in [1, 2^31 - 1], got %d", p.ObsWindow)
	case p.PoolKernel < 1 || p.PoolKernel > MaxInt31 || p.PoolKernel%2 == 0:
		return nil, refuse(InvalidParams, "poolKernel must be odd and in [1, 2^31 - 1], got %d", p.PoolKernel)
	}
	return &Policy{params: p, last: -1}, nil
}

// float32Midpoint is 2^128 - 2^103, halfway between the largest float32 and 2^128: a float64
// at or beyond it rounds to an infinite float32. Go leaves the result of converting an
// out-of-range float64 to float32 implementation-dependent, so compare before converting.
const float32Midpoint = 0x1p128 - 0x1p103

// Narrow rounds a weight, already the nearest float64 to its decimal, to the nearest float32
// (ties to even) and reports whether it is a weight §2.3 accepts: finite and not negative
// (-0.0 and tiny negatives that round to -0.0 count as zero).
func Narrow(w float64) (float32, bool) {
	if math.IsNaN(w) || math.Abs(w) >= float32Midpoint {
		return 0, false
	}
	f := float32(w)
	return f, !(f < 0)
}

// CheckPosition judges pos as step would (SPEC.md §2.3 rule 1), changing nothing.
func (p *Policy) CheckPosition(pos int64) error {
	if pos < 0 || pos > MaxInt31 {
		return refuse(InvalidPosition, "pos must be in [0, 2^31 - 1], got %d", pos)
	}
	if pos <= p.last {
		return refuse(InvalidPosition, "pos %d must be greater than the last admitted position %d", pos, p.last)
	}
	return nil
}

// Step observes one decode step: attn holds one weight per kept position (as float64, each
// the nearest float64 to its decimal), or is nil for a step whose attention was not observed.
// The whole call is judged before anything changes.
func (p *Policy) Step(pos int64, attn []float64) error {
	if err := p.CheckPosition(pos); err != nil {
		return err
	}
	var weights []float32
	if attn != nil {
		if len(attn) != len(p.kept) {
			return refuse(InvalidAttention, "attn has %d weights, but %d positions are kept", len(attn), len(p.kept))
		}
		weights = make([]float32, len(attn))
		for i, w := range attn {
			f, ok := Narrow(w)
			if !ok {
				return refuse(InvalidAttention, "attn[%d] must be a finite float32 >= 0, got %v", i, w)
			}
			weights[i] = f
		}
		for i := range p.kept {
			e := &p.kept[i]
			for int64(len(e.ring)) <= p.slot {
				e.ring = append(e.ring, 0)
			}
			e.ring[p.slot] = weights[i]
			e.sum += float64(weights[i]) // +0.0 + -0.0 is +0.0, as in the slot-order sum
		}
		// An empty list (nothing kept) still moves the cursor; a null step does not.
		p.slot = (p.slot + 1) % p.params.ObsWindow
		p.wrapped = p.wrapped || p.slot == 0
	}
	p.kept = append(p.kept, entry{pos: pos}) // a new position's history is all zeros
	p.last = pos
	return nil
}

// Scores are what an evict now would rank by (SPEC.md §2.5), one of each per kept position.
type Scores struct {
	Positions []int64
	Sums      []float64
	Pooled    []float64
}

// Scores computes the sums and pooled scores of every kept position, changing nothing.
func (p *Policy) Scores() Scores {
	n := len(p.kept)
	s := Scores{Positions: make([]int64, n), Sums: make([]float64, n), Pooled: make([]float64, n)}
	for i, e := range p.kept {
		s.Positions[i] = e.pos
		// Float64, from +0.0, over ring slots 0 upward: not pairwise, not from the cursor.
		sum := e.sum
		if p.wrapped {
			sum = 0.0
			for _, w := range e.ring {
				sum += float64(w)
			}
		}
		s.Sums[i] = sum
	}
	// Max pooling over neighbouring kept entries (not neighbouring numbers), clamped at both
	// ends. r is clamped to n first: poolKernel may be 2^31 - 1.
	r := int((p.params.PoolKernel - 1) / 2)
	if r > n {
		r = n
	}
	slidingMax(s.Sums, r, s.Pooled)
	return s
}

// slidingMax sets out[i] to the maximum of sums[i-r .. i+r] clamped to the slice, in time
// linear in len(sums) whatever r: a queue of indices whose sums decrease, front the largest.
// Max is exact, so any way of finding it gives the same value.
func slidingMax(sums []float64, r int, out []float64) {
	n := len(sums)
	queue := make([]int, 0, n)
	next := 0 // the next index to enter the window
	for i := 0; i < n; i++ {
		for ; next <= min(n-1, i+r); next++ {
			for len(queue) > 0 && sums[queue[len(queue)-1]] <= sums[next] {
				queue = queue[:len(queue)-1]
			}
			queue = append(queue, next)
		}
		for queue[0] < i-r {
			queue = queue[1:]
		}
		out[i] = sums[queue[0]]
	}
}

// Evict removes max(0, len(kept) - budget) positions, chosen from one scoring of the state,
// and returns them in ascending order (never nil, so that it encodes as [] not null).
func (p *Policy) Evict() []int64 {
	victims := []int64{}
	k := len(p.kept) - int(p.params.Budget)
	if k <= 0 {
		return victims
	}
	pooled := p.Scores().Pooled
	// Candidates are all but the recentWindow highest positions; rank by (pooled, position).
	candidates := make([]int, len(p.kept)-int(p.params.RecentWindow))
	for i := range candidates {
		candidates[i] = i
	}
	sort.Slice(candidates, func(a, b int) bool {
		i, j := candidates[a], candidates[b]
		if pooled[i] != pooled[j] {
			return pooled[i] < pooled[j]
		}
		return p.kept[i].pos < p.kept[j].pos // ties: the lower position goes first
	})
	evicted := make([]bool, len(p.kept))
	for _, i := range candidates[:k] {
		evicted[i] = true
	}
	// One pass in position order keeps survivors in place (rings and cursor untouched) and
	// collects the victims ascending.
	survivors := p.kept[:0]
	for i, e := range p.kept {
		if evicted[i] {
			victims = append(victims, e.pos)
		} else {
			survivors = append(survivors, e)
		}
	}
	clear(p.kept[len(survivors):]) // drop the evicted rings for the garbage collector
	p.kept = survivors
	return victims
}
