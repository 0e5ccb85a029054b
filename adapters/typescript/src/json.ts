// A strict JSON reader (RFC 8259) that keeps every number as its literal text.
//
// JSON.parse cannot be used for requests: it turns numbers into doubles, so an id above 2^53
// could not be echoed as sent (9007199254740993 would come back ...992), and 4 could not be
// told from 4.0 (an integral value with a fraction is not an integer, SPEC.md §1).

/** A JSON number as written; `value` is the nearest double, as Number() reads it. */
export class JsonNumber {
  constructor(readonly text: string) {}
  get value(): number {
    return Number(this.text);
  }
  /** Written without a fraction or exponent. */
  get isInteger(): boolean {
    return /^-?[0-9]+$/.test(this.text);
  }
}

export type Json = null | boolean | string | JsonNumber | Json[] | Map<string, Json>;

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const STRING_RUN = /[^"\\\u0000-\u001f]*/y; // characters that stand for themselves
const ESCAPES: Record<string, string> = {
  '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t",
};
const MAX_DEPTH = 512; // an implementation limit (SPEC.md §3.1): refused as bad-request

/** Parse one JSON text; throw SyntaxError on anything RFC 8259 does not allow. */
export function parseJson(text: string): Json {
  let at = 0;

  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at character ${at}`);
  };
  // JSON whitespace is exactly space, tab, LF and CR.
  const skipSpace = (): void => {
    while (at < text.length && " \t\n\r".includes(text[at])) at++;
  };
  const expect = (word: string): void => {
    if (!text.startsWith(word, at)) fail(`expected ${word}`);
    at += word.length;
  };

  const string = (): string => {
    at++; // the opening quote
    let out = "";
    for (;;) {
      STRING_RUN.lastIndex = at;
      out += STRING_RUN.exec(text)![0];
      at = STRING_RUN.lastIndex;
      const c = text[at++];
      if (c === '"') return out;
      if (c !== "\\") fail("unterminated string or raw control character");
      const e = text[at++];
      if (e === "u") {
        const hex = text.slice(at, at + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
        out += String.fromCharCode(parseInt(hex, 16)); // a lone surrogate is valid JSON
        at += 4;
      } else if (e in ESCAPES) {
        out += ESCAPES[e];
      } else {
        fail("bad escape");
      }
    }
  };

  const value = (depth: number): Json => {
    if (depth > MAX_DEPTH) fail("nesting too deep");
    skipSpace();
    const c = text[at];
    if (c === "{") {
      at++;
      // A Map, not an object: "__proto__" is an ordinary name here. Set() keeps the last
      // value of a repeated name, as SPEC.md §3.1 requires.
      const object = new Map<string, Json>();
      skipSpace();
      if (text[at] === "}") {
        at++;
        return object;
      }
      for (;;) {
        skipSpace();
        if (text[at] !== '"') fail("expected a member name");
        const name = string();
        skipSpace();
        expect(":");
        object.set(name, value(depth + 1));
        skipSpace();
        if (text[at] === ",") at++;
        else if (text[at] === "}") {
          at++;
          return object;
        } else fail("expected , or }");
      }
    }
    if (c === "[") {
      at++;
      const list: Json[] = [];
      skipSpace();
      if (text[at] === "]") {
        at++;
        return list;
      }
      for (;;) {
        list.push(value(depth + 1));
        skipSpace();
        if (text[at] === ",") at++;
        else if (text[at] === "]") {
          at++;
          return list;
        } else fail("expected , or ]");
      }
    }
    if (c === '"') return string();
    if (c === "t") return expect("true"), true;
    if (c === "f") return expect("false"), false;
    if (c === "n") return expect("null"), null;
    NUMBER.lastIndex = at;
    const match = NUMBER.exec(text);
    if (!match) return fail("expected a JSON value"); // NaN, Infinity, +1, .5 ...
    at = NUMBER.lastIndex;
    return new JsonNumber(match[0]);
  };

  const result = value(0);
  skipSpace();
  if (at !== text.length) fail("more than one JSON value");
  return result;
}
