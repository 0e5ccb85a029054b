// Command snapkv-adapter serves the snapkv package over protocol v1 (SPEC.md §3): one JSON
// object per line on stdin, one answer per line on stdout, flushed after each.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"unicode/utf8"

	"snapkv/snapkv"
)

const (
	badRequest  = "bad-request"
	unsupported = "unsupported"
	noPolicy    = "no-policy"
)

var implementation = map[string]string{"name": "snapkv-go", "language": "go", "version": "0.1.0"}

// A JSON integer is a number written without a fraction or exponent (SPEC.md §1).
var integerLiteral = regexp.MustCompile(`^-?[0-9]+$`)

// integer reads v as a JSON integer. Literals beyond int64 saturate (ParseInt returns the
// bound with ErrRange), which every range check then refuses.
func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || !integerLiteral.MatchString(string(n)) {
		return 0, false
	}
	value, _ := strconv.ParseInt(string(n), 10, 64)
	return value, true
}

type refusal struct{ kind, message string }

func refuse(kind, format string, args ...any) *refusal {
	return &refusal{kind, fmt.Sprintf(format, args...)}
}

type session struct {
	policy   *snapkv.Policy
	finished bool
}

// decode parses one line as strict JSON. encoding/json silently replaces invalid UTF-8 with
// U+FFFD, so the bytes are checked first. UseNumber keeps every number as its literal: the id
// is echoed as written (any size), and 4 can be told from 4.0. Decoding into a map (never a
// struct) keeps member names exact: struct fields would match "ID" or "Op" case-insensitively.
// For a repeated member name the last occurrence wins, as SPEC.md §3.1 requires.
func decode(line []byte) (map[string]any, error) {
	if !utf8.Valid(line) {
		return nil, errors.New("the line is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var value any
	if err := dec.Decode(&value); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value on the line")
	}
	object, ok := value.(map[string]any)
	if !ok {
		return nil, errors.New("the request is not a JSON object")
	}
	return object, nil
}

var required = map[string][]string{
	"hello": {"protocol"}, "new": {"params", "seed"}, "step": {"pos", "attn"},
	"evict": nil, "scores": nil, "bye": nil,
}

// answer judges one request line in the order of SPEC.md §3.4.
func (s *session) answer(line []byte) map[string]any {
	request, err := decode(line)
	if err != nil {
		return failure(nil, refuse(badRequest, "%v", err))
	}
	id := request["id"]
	if _, ok := integer(id); !ok {
		return failure(nil, refuse(badRequest, "id must be an integer"))
	}
	op, _ := request["op"].(string)
	fields, known := required[op]
	if !known {
		return failure(id, refuse(badRequest, "unknown op %q", op))
	}
	for _, field := range fields {
		if _, present := request[field]; !present {
			return failure(id, refuse(badRequest, "%s request is missing %q", op, field))
		}
	}
	result, r := s.dispatch(op, request)
	if r != nil {
		return failure(id, r)
	}
	result["id"], result["ok"] = id, true
	return result
}

func (s *session) dispatch(op string, request map[string]any) (map[string]any, *refusal) {
	switch op {
	case "hello":
		if version, ok := integer(request["protocol"]); !ok || version != 1 {
			return nil, refuse(unsupported, "this adapter speaks protocol 1 only")
		}
		return map[string]any{"protocol": 1, "implementation": implementation,
			"capabilities": []string{"scores"}}, nil
	case "new":
		return s.newPolicy(request["params"], request["seed"])
	case "bye":
		s.finished = true
		return map[string]any{}, nil
	}
	if s.policy == nil {
		return nil, refuse(noPolicy, "no policy: send an accepted new first")
	}
	switch op {
	case "step":
		return s.step(request["pos"], request["attn"])
	case "evict":
		return map[string]any{"victims": s.policy.Evict()}, nil
	default: // scores
		scores := s.policy.Scores()
		return map[string]any{"positions": scores.Positions, "sums": scores.Sums,
			"pooled": scores.Pooled}, nil
	}
}

func (s *session) newPolicy(rawParams, seed any) (map[string]any, *refusal) {
	// SnapKV never uses the seed; any JSON integer is accepted, as the reference does.
	if _, ok := integer(seed); !ok {
		return nil, refuse(snapkv.InvalidParams, "seed must be an integer")
	}
	params, ok := rawParams.(map[string]any)
	if !ok || len(params) != 4 {
		return nil, refuse(snapkv.InvalidParams, "params must be an object of exactly budget, recentWindow, obsWindow and poolKernel")
	}
	var values [4]int64
	for i, name := range []string{"budget", "recentWindow", "obsWindow", "poolKernel"} {
		value, ok := integer(params[name]) // a missing name reads as nil: not an integer
		if !ok {
			return nil, refuse(snapkv.InvalidParams, "%s must be an integer", name)
		}
		values[i] = value
	}
	policy, err := snapkv.New(snapkv.Params{Budget: values[0], RecentWindow: values[1],
		ObsWindow: values[2], PoolKernel: values[3]})
	if err != nil {
		return nil, asRefusal(err)
	}
	s.policy = policy // a refused new keeps the earlier policy
	return map[string]any{}, nil
}

func (s *session) step(rawPos, rawAttn any) (map[string]any, *refusal) {
	pos, ok := integer(rawPos)
	if !ok {
		return nil, refuse(snapkv.InvalidPosition, "pos must be an integer")
	}
	if err := s.policy.CheckPosition(pos); err != nil { // the position is judged first
		return nil, asRefusal(err)
	}
	var attn []float64
	if rawAttn != nil {
		list, ok := rawAttn.([]any)
		if !ok {
			return nil, refuse(snapkv.InvalidAttention, "attn must be null or a list")
		}
		attn = make([]float64, len(list)) // non-nil even when empty: [] moves the cursor
		for i, raw := range list {
			number, ok := raw.(json.Number)
			if !ok {
				return nil, refuse(snapkv.InvalidAttention, "attn[%d] is not a number", i)
			}
			// The nearest float64 first (an out-of-range literal gives ±Inf with ErrRange,
			// which Narrow refuses), then float32. ParseFloat(s, 32) would round the decimal
			// straight to float32 and accept 3.4028235677973366e+38, which must be refused.
			attn[i], _ = strconv.ParseFloat(string(number), 64)
		}
	}
	if err := s.policy.Step(pos, attn); err != nil {
		return nil, asRefusal(err)
	}
	return map[string]any{}, nil
}

func asRefusal(err error) *refusal {
	var e *snapkv.Error
	if errors.As(err, &e) {
		return &refusal{e.Kind, e.Message}
	}
	return &refusal{badRequest, err.Error()}
}

func failure(id any, r *refusal) map[string]any {
	return map[string]any{"id": id, "ok": false,
		"error": map[string]string{"kind": r.kind, "message": r.message}}
}

func main() {
	// bufio.Reader, not bufio.Scanner: a Scanner stops at lines over 64 KiB (about 4,000
	// weights) unless given a bigger buffer, and then still has a limit.
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	s := &session{}
	for !s.finished {
		line, err := in.ReadBytes('\n') // only LF ends a line; a CR before it is whitespace
		if len(bytes.Trim(line, " \t\r\n")) > 0 {
			answer, _ := json.Marshal(s.answer(line))
			out.Write(append(answer, '\n'))
			if flushErr := out.Flush(); flushErr != nil {
				os.Exit(1)
			}
		}
		if err != nil { // io.EOF after a last line with or without its LF
			break
		}
	}
}
