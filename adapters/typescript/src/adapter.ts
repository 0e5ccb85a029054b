// Protocol v1 (SPEC.md §3) over stdin/stdout for the SnapKV policy: one JSON object per line
// in, one answer per line out, in order.
import { Json, JsonNumber, parseJson } from "./json";
import { MAX_INT31, Params, PolicyError, SnapKV } from "./snapkv";

type Kind = "bad-request" | "unsupported" | "no-policy" | PolicyError["kind"];

class Refusal extends Error {
  constructor(readonly kind: Kind, message: string) {
    super(message);
  }
}

const IMPLEMENTATION = { name: "snapkv-typescript", language: "typescript", version: "0.1.0" };
const REQUIRED: Record<string, string[]> = {
  hello: ["protocol"], new: ["params", "seed"], step: ["pos", "attn"], evict: [], scores: [], bye: [],
};
const PARAM_NAMES = ["budget", "recentWindow", "obsWindow", "poolKernel"] as const;

// fatal: invalid UTF-8 (an encoded surrogate included) throws instead of becoming U+FFFD.
// ignoreBOM: keep a byte-order mark in the text, so that the JSON reader refuses it; by
// default TextDecoder silently drops it.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A JSON integer's value, or null; beyond-range literals saturate so range checks refuse them. */
function integer(value: Json | undefined): number | null {
  if (!(value instanceof JsonNumber) || !value.isInteger) return null;
  const big = BigInt(value.text);
  return big > BigInt(MAX_INT31) * 2n ? Infinity : big < -BigInt(MAX_INT31) * 2n ? -Infinity : Number(big);
}

export class Session {
  private policy: SnapKV | null = null;
  finished = false;

  /** One answer line (without its LF) for one request line, judged in the order of §3.4. */
  answer(line: Uint8Array): string {
    let request: Json;
    try {
      request = parseJson(UTF8.decode(line));
    } catch (error) {
      return failure("null", "bad-request", `not a JSON line: ${(error as Error).message}`);
    }
    if (!(request instanceof Map)) return failure("null", "bad-request", "the request is not a JSON object");
    const id = request.get("id");
    if (!(id instanceof JsonNumber) || !id.isInteger) return failure("null", "bad-request", "id must be an integer");
    // The id is echoed as the literal it was sent as: a double would change ids above 2^53.
    const idText = id.text;
    try {
      const op = request.get("op");
      if (typeof op !== "string" || !Object.hasOwn(REQUIRED, op)) throw new Refusal("bad-request", `unknown op ${JSON.stringify(op ?? null)}`);
      for (const field of REQUIRED[op])
        if (!request.has(field)) throw new Refusal("bad-request", `${op} request is missing "${field}"`);
      return `{"id":${idText},"ok":true${fields(this.dispatch(op, request))}}`;
    } catch (error) {
      if (error instanceof Refusal || error instanceof PolicyError) return failure(idText, error.kind, error.message);
      throw error;
    }
  }

  private dispatch(op: string, request: Map<string, Json>): object {
    if (op === "hello") {
      if (integer(request.get("protocol")) !== 1) throw new Refusal("unsupported", "this adapter speaks protocol 1 only");
      return { protocol: 1, implementation: IMPLEMENTATION, capabilities: ["scores"] };
    }
    if (op === "new") return this.newPolicy(request.get("params")!, request.get("seed")!);
    if (op === "bye") {
      this.finished = true;
      return {};
    }
    const policy = this.policy;
    if (policy === null) throw new Refusal("no-policy", "no policy: send an accepted new first");
    if (op === "evict") return { victims: policy.evict() };
    if (op === "scores") return policy.scores();
    const pos = integer(request.get("pos"));
    if (pos === null) throw new PolicyError("invalid-position", "pos must be an integer");
    policy.checkPosition(pos); // the position is judged before the attention
    policy.step(pos, weights(request.get("attn")!));
    return {};
  }

  private newPolicy(raw: Json, seed: Json): object {
    // SnapKV never uses the seed; any JSON integer is accepted, as the reference does.
    if (integer(seed) === null) throw new PolicyError("invalid-params", "seed must be an integer");
    if (!(raw instanceof Map) || raw.size !== PARAM_NAMES.length)
      throw new PolicyError("invalid-params", "params must be an object of exactly budget, recentWindow, obsWindow and poolKernel");
    const params = {} as Params;
    for (const name of PARAM_NAMES) {
      const value = integer(raw.get(name)); // a missing name reads as undefined: not an integer
      if (value === null) throw new PolicyError("invalid-params", `${name} must be an integer`);
      params[name] = value;
    }
    this.policy = new SnapKV(params); // a refused new throws first and keeps the earlier policy
    return {};
  }
}

/** attn as doubles (null for an unobserved step); the policy narrows them to float32. */
function weights(attn: Json): number[] | null {
  if (attn === null) return null;
  if (!Array.isArray(attn)) throw new PolicyError("invalid-attention", "attn must be null or a list");
  return attn.map((w, i) => {
    if (!(w instanceof JsonNumber)) throw new PolicyError("invalid-attention", `attn[${i}] is not a number`);
    return w.value; // the nearest double first, then Math.fround: the double rounding of §2.6
  });
}

/** The members of an answer after id and ok, with a leading comma, or "". */
function fields(result: object): string {
  const text = JSON.stringify(result);
  return text === "{}" ? "" : "," + text.slice(1, -1);
}

function failure(idText: string, kind: Kind, message: string): string {
  return `{"id":${idText},"ok":false,"error":${JSON.stringify({ kind, message })}}`;
}

/** Serve stdin to stdout until bye or end of input. */
function main(): void {
  const session = new Session();
  let pending: Buffer[] = [];
  const handle = (line: Buffer): void => {
    // Blank lines (spaces, tabs and CRs) get no answer; nothing after bye does.
    if (session.finished || line.every((b) => b === 0x20 || b === 0x09 || b === 0x0d)) return;
    // process.stdout.write may queue when the pipe is full: pause reading until it drains,
    // so memory stays bounded. Never process.exit() while answers may be queued: they would
    // be lost. The process ends by itself once stdin is closed and stdout has drained.
    if (!process.stdout.write(session.answer(line) + "\n")) process.stdin.pause();
    if (session.finished) process.stdin.destroy(); // bye: read nothing more
  };
  process.stdout.on("drain", () => process.stdin.resume());
  process.stdout.on("error", () => process.exit(1)); // the reader went away
  // Lines end at LF only. readline would also end one at a lone CR, which is whitespace
  // inside a line here (SPEC.md §3.1), so the bytes are split by hand.
  process.stdin.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      pending.push(chunk.subarray(start, end));
      const line = pending.length === 1 ? pending[0] : Buffer.concat(pending);
      pending = [];
      handle(line);
      start = end + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  });
  process.stdin.on("end", () => {
    if (pending.length > 0) handle(Buffer.concat(pending)); // a last line without its LF
  });
}

if (require.main === module) main();
