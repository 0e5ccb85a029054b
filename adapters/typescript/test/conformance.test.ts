import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { test } from "node:test";

// The kit's committed suite against this adapter, so that `npm test` fails when the port
// stops conforming. The kit is a Python package: pip install it first (see the kit's README,
// "Installing"). Under CI a missing kit is a failure, not a skip.
test("the snapkv-conformance suite passes", (t) => {
  // --adapter is split like a POSIX shell splits words: quote each part.
  const quote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;
  const adapter = [process.execPath, path.join(__dirname, "..", "src", "adapter.js")].map(quote).join(" ");
  const run = spawnSync("snapkv-conformance", ["run", "--adapter", adapter], { encoding: "utf8" });
  if (run.error && !process.env.CI) return t.skip("snapkv-conformance is not installed");
  assert.equal(run.status, 0, `${run.error ?? ""}${run.stdout}${run.stderr}`);
});
