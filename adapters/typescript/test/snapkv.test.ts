import { strict as assert } from "node:assert";
import { test } from "node:test";
import { JsonNumber, parseJson } from "../src/json";
import { MAX_INT31, narrow, PolicyError, SnapKV } from "../src/snapkv";

const kindOf = (f: () => void): string => {
  try {
    f();
  } catch (error) {
    if (error instanceof PolicyError) return error.kind;
    throw error;
  }
  return "accepted";
};

// The session of the kit's README, "Writing an adapter".
test("the README session evicts position 2", () => {
  const p = new SnapKV({ budget: 2, recentWindow: 0, obsWindow: 2, poolKernel: 1 });
  p.step(0, null);
  p.step(1, [0.5]);
  p.step(2, [0.25, 0.10000000149011612]);
  assert.deepEqual(p.evict(), [2]);
  assert.equal(kindOf(() => p.step(2, null)), "invalid-position");
});

test("ties evict the lower position; victims come back ascending", () => {
  const p = new SnapKV({ budget: 2, recentWindow: 0, obsWindow: 1, poolKernel: 1 });
  for (const pos of [0, 10, 20, 30, 40]) p.step(pos, null);
  assert.deepEqual(p.evict(), [0, 10, 20]);
  assert.deepEqual(p.evict(), []);
});

test("refused calls change nothing; the position is judged first", () => {
  const p = new SnapKV({ budget: 1, recentWindow: 0, obsWindow: 2, poolKernel: 1 });
  p.step(0, null);
  for (const attn of [[-0.5], [Infinity], [2 ** 128 - 2 ** 103], [1, 2], []])
    assert.equal(kindOf(() => p.step(1, attn)), "invalid-attention", String(attn));
  assert.equal(kindOf(() => p.step(-1, [-1])), "invalid-position");
  p.step(1, [1]);
  assert.deepEqual(p.scores().sums, [1, 0]);
});

test("narrow rounds the double to float32 and refuses the midpoint", () => {
  assert.equal(narrow(0.1), Math.fround(0.1));
  assert.ok(Object.is(narrow(-1e-50), -0)); // rounds to -0: counts as zero
  assert.equal(narrow(3.4028235677973362e38), 3.4028234663852886e38);
  assert.equal(narrow(3.4028235677973366e38), null);
  assert.equal(narrow(-1e-30), null);
});

test("parameters at the limit are accepted", () => {
  const p = new SnapKV({ budget: MAX_INT31, recentWindow: MAX_INT31 - 1, obsWindow: MAX_INT31, poolKernel: MAX_INT31 });
  p.step(0, null);
  p.step(1, [0.5]);
  assert.deepEqual(p.scores(), { positions: [0, 1], sums: [0.5, 0], pooled: [0.5, 0.5] });
  for (const bad of [[0, 0, 1, 1], [2, 2, 1, 1], [2, 0, 0, 1], [2, 0, 1, 2], [MAX_INT31 + 1, 0, 1, 1]]) {
    const [budget, recentWindow, obsWindow, poolKernel] = bad;
    assert.equal(kindOf(() => new SnapKV({ budget, recentWindow, obsWindow, poolKernel })), "invalid-params", String(bad));
  }
});

test("the JSON reader keeps literals and is strict", () => {
  const parsed = parseJson('{"id":9007199254740993,"n":4.0,"id2":-0,"a":1,"a":2}') as Map<string, JsonNumber>;
  assert.equal(parsed.get("id")!.text, "9007199254740993");
  assert.equal(parsed.get("n")!.isInteger, false);
  assert.equal(parsed.get("a")!.text, "2");
  for (const bad of ["NaN", "[1,]", "01", "1.", ".5", "+1", '"\\x"', '"a\rb"', "{} {}", "\ufeff{}", "\u000b{}"])
    assert.throws(() => parseJson(bad), SyntaxError, bad);
  assert.equal(parseJson('"\\ud800"'), "\ud800");
});
