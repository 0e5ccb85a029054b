//! A small strict JSON reader and writer for protocol v1's request and response lines.
//!
//! Written in-tree rather than taken from a crate because the protocol needs what general
//! readers blur: an integer literal (`4`, `-0`, `10**30` written out) is kept apart from a
//! float literal (`4.0`, `4e0`) exactly as written, integers of any size are kept, and floats
//! are parsed straight to the nearest float64 (Rust's `str::parse`, correctly rounded) with no
//! allocation per number on the hot path (a step's attention list).
//!
//! Strings are kept as UTF-16 code units, so a lone surrogate written as `\ud800` (which JSON
//! allows) survives and can be echoed back escaped. Input must be strict UTF-8, as the
//! reference adapter requires: no encoded surrogates, no overlong forms, no byte order mark.

use std::fmt::Write as _;

/// How deep arrays and objects may nest; a protocol-v1 request needs 3. (The reference's
/// reader stops near 1000, at Python's recursion limit; SPEC.md sets no number.)
pub const MAX_DEPTH: usize = 512;

/// A decoded JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// An integer literal (no fraction, no exponent) that fits in an `i64`; `-0` is `Int(0)`.
    Int(i64),
    /// An integer literal beyond `i64`, as written (it has no leading zeros and is not `-0`).
    BigInt(Box<str>),
    /// A literal with a fraction or an exponent, read as the nearest float64 (may be infinite
    /// when the literal is beyond the float64 range, like `1e400`).
    Float(f64),
    /// A string as UTF-16 code units.
    Str(Vec<u16>),
    Array(Vec<Json>),
    /// A non-empty array whose every element is a literal with a fraction or an exponent:
    /// the `Float` values, stored without a `Json` per element (building and dropping one per
    /// weight was the larger part of the adapter's time on long attention lists).
    Floats(Vec<f64>),
    /// Members in the order written; a repeated key is kept, and [`Json::get`] takes the last.
    Object(Vec<(Vec<u16>, Json)>),
}

impl Json {
    /// The value of member `key` of an object (the last one if the key repeats).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members
                .iter()
                .rev()
                .find(|(name, _)| units_eq(name, key))
                .map(|(_, value)| value),
            _ => None,
        }
    }

    /// True for an integer literal of any size.
    pub fn is_integer(&self) -> bool {
        matches!(self, Json::Int(_) | Json::BigInt(_))
    }

    /// The nearest float64 to a number literal, or `None` for anything but a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            // `as` rounds an i64 to the nearest float64, ties to even.
            Json::Int(value) => Some(*value as f64),
            // Correctly rounded; beyond the float64 range it gives an infinity.
            Json::BigInt(text) => text.parse().ok(),
            Json::Float(value) => Some(*value),
            _ => None,
        }
    }

    /// A short name of the value's type for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) | Json::BigInt(_) => "an integer",
            Json::Float(_) => "a non-integer number",
            Json::Str(_) => "a string",
            Json::Array(_) | Json::Floats(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// True when UTF-16 `units` spell the ASCII `text`.
pub fn units_eq(units: &[u16], text: &str) -> bool {
    units.len() == text.len()
        && units
            .iter()
            .zip(text.bytes())
            .all(|(&u, b)| u == u16::from(b))
}

/// Why a line is not one JSON value, and the byte offset where that was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub reason: &'static str,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.offset)
    }
}

/// Parse one line holding exactly one JSON value (surrounding JSON whitespace allowed).
pub fn parse(line: &[u8]) -> Result<Json, ParseError> {
    let mut reader = Reader {
        bytes: line,
        at: 0,
        depth: 0,
    };
    reader.skip_whitespace();
    let value = reader.value()?;
    reader.skip_whitespace();
    if reader.at != line.len() {
        return Err(reader.error("extra data after the value"));
    }
    Ok(value)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

impl Reader<'_> {
    fn error(&self, reason: &'static str) -> ParseError {
        ParseError {
            offset: self.at,
            reason,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect_word(&mut self, word: &[u8], value: Json) -> Result<Json, ParseError> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("expecting a value"))
        }
    }

    fn value(&mut self) -> Result<Json, ParseError> {
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.expect_word(b"true", Json::Bool(true)),
            Some(b'f') => self.expect_word(b"false", Json::Bool(false)),
            Some(b'n') => self.expect_word(b"null", Json::Null),
            _ => Err(self.error("expecting a value")),
        }
    }

    /// Step past an opening bracket; true when the `close` byte follows at once (and is
    /// consumed): the container is empty.
    fn enter(&mut self, close: u8) -> Result<bool, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.at += 1; // the opening bracket
        self.skip_whitespace();
        if self.peek() == Some(close) {
            self.at += 1;
            self.depth -= 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// After an element: `,` (and whitespace) to go on, or the closing byte to stop.
    fn next_element(&mut self, close: u8) -> Result<bool, ParseError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                self.skip_whitespace();
                Ok(true)
            }
            Some(byte) if byte == close => {
                self.at += 1;
                self.depth -= 1;
                Ok(false)
            }
            _ => Err(self.error("expecting ',' or a closing bracket")),
        }
    }

    fn array(&mut self) -> Result<Json, ParseError> {
        let mut items = Vec::new();
        if self.enter(b']')? {
            return Ok(Json::Array(items));
        }
        let first = self.at;
        if let Some(floats) = self.floats()? {
            return Ok(Json::Floats(floats));
        }
        // Not floats only: read the elements again as values (nested arrays balance the
        // depth they enter, so `depth` is as it was at `first`).
        self.at = first;
        loop {
            items.push(self.value()?);
            if !self.next_element(b']')? {
                return Ok(Json::Array(items));
            }
        }
    }

    /// The elements of an array entered at `self.at` if every one is a literal with a
    /// fraction or an exponent (the closing bracket consumed), or `None` at the first element
    /// that is not one.
    fn floats(&mut self) -> Result<Option<Vec<f64>>, ParseError> {
        let mut floats = Vec::new();
        loop {
            if !matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
                return Ok(None);
            }
            match self.number()? {
                Json::Float(value) => floats.push(value),
                _ => return Ok(None),
            }
            if !self.next_element(b']')? {
                return Ok(Some(floats));
            }
        }
    }

    fn object(&mut self) -> Result<Json, ParseError> {
        let mut members = Vec::new();
        if self.enter(b'}')? {
            return Ok(Json::Object(members));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error("expecting a member name in double quotes"));
            }
            let name = self.string()?;
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(self.error("expecting ':'"));
            }
            self.at += 1;
            self.skip_whitespace();
            members.push((name, self.value()?));
            if !self.next_element(b'}')? {
                return Ok(Json::Object(members));
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let int_start = self.at;
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("expecting a digit")),
        }
        let int_end = self.at;
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.error("expecting a digit after '.'"));
            }
            integer = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("expecting a digit in the exponent"));
            }
            integer = false;
        }
        // SAFETY: the grammar above admitted only ASCII bytes, so the slice is valid UTF-8.
        // (Checking it again cost an eighth of the adapter's time on a long attention list.)
        let text = unsafe { std::str::from_utf8_unchecked(&self.bytes[start..self.at]) };
        if !integer {
            return Ok(Json::Float(
                text.parse().expect("a JSON number parses as f64"),
            ));
        }
        let digits = &self.bytes[int_start..int_end];
        let mut magnitude: u64 = 0;
        for &digit in digits {
            match magnitude
                .checked_mul(10)
                .and_then(|m| m.checked_add(u64::from(digit - b'0')))
            {
                Some(m) => magnitude = m,
                None => return Ok(Json::BigInt(text.into())),
            }
        }
        Ok(if !negative {
            i64::try_from(magnitude).map_or_else(|_| Json::BigInt(text.into()), Json::Int)
        } else if magnitude <= 1 << 63 {
            // `-0` is the integer 0; the wrapping negation is exact for -2^63.
            Json::Int((magnitude as i64).wrapping_neg())
        } else {
            Json::BigInt(text.into())
        })
    }

    fn hex4(&mut self) -> Result<u16, ParseError> {
        let mut unit: u16 = 0;
        for _ in 0..4 {
            let digit = match self.peek() {
                Some(byte @ b'0'..=b'9') => byte - b'0',
                Some(byte @ b'a'..=b'f') => byte - b'a' + 10,
                Some(byte @ b'A'..=b'F') => byte - b'A' + 10,
                _ => return Err(self.error("expecting four hex digits after \\u")),
            };
            unit = unit * 16 + u16::from(digit);
            self.at += 1;
        }
        Ok(unit)
    }

    fn string(&mut self) -> Result<Vec<u16>, ParseError> {
        self.at += 1; // the opening quote
        let mut units = Vec::new();
        loop {
            let Some(byte) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            match byte {
                b'"' => {
                    self.at += 1;
                    return Ok(units);
                }
                b'\\' => {
                    self.at += 1;
                    let unit = match self.peek() {
                        Some(b'"') => 0x22,
                        Some(b'\\') => 0x5C,
                        Some(b'/') => 0x2F,
                        Some(b'b') => 0x08,
                        Some(b'f') => 0x0C,
                        Some(b'n') => 0x0A,
                        Some(b'r') => 0x0D,
                        Some(b't') => 0x09,
                        Some(b'u') => {
                            self.at += 1;
                            units.push(self.hex4()?);
                            continue;
                        }
                        _ => return Err(self.error("invalid escape")),
                    };
                    self.at += 1;
                    units.push(unit);
                }
                0x00..=0x1F => return Err(self.error("control character in a string")),
                0x20..=0x7F => {
                    self.at += 1;
                    units.push(u16::from(byte));
                }
                _ => {
                    let code = self.utf8_sequence()?;
                    push_code_point(&mut units, code);
                }
            }
        }
    }

    /// One multi-byte UTF-8 sequence, strictly: no overlong forms, no encoded surrogates
    /// (ED A0..BF), nothing past U+10FFFF.
    fn utf8_sequence(&mut self) -> Result<u32, ParseError> {
        let lead = self.bytes[self.at];
        let (length, low, high, initial) = match lead {
            0xC2..=0xDF => (2, 0x80, 0xBF, u32::from(lead & 0x1F)),
            0xE0 => (3, 0xA0, 0xBF, 0),
            0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF, u32::from(lead & 0x0F)),
            0xED => (3, 0x80, 0x9F, u32::from(lead & 0x0F)),
            0xF0 => (4, 0x90, 0xBF, 0),
            0xF1..=0xF3 => (4, 0x80, 0xBF, u32::from(lead & 0x07)),
            0xF4 => (4, 0x80, 0x8F, 4),
            _ => return Err(self.error("invalid UTF-8")),
        };
        let mut code = initial;
        for n in 1..length {
            let byte = self.bytes.get(self.at + n).copied().unwrap_or(0);
            let (lo, hi) = if n == 1 { (low, high) } else { (0x80, 0xBF) };
            if !(lo..=hi).contains(&byte) {
                return Err(ParseError {
                    offset: self.at + n,
                    reason: "invalid UTF-8",
                });
            }
            code = (code << 6) | u32::from(byte & 0x3F);
        }
        self.at += length;
        Ok(code)
    }
}

fn push_code_point(units: &mut Vec<u16>, code: u32) {
    if code >= 0x1_0000 {
        let offset = code - 0x1_0000;
        units.push(0xD800 | (offset >> 10) as u16);
        units.push(0xDC00 | (offset & 0x3FF) as u16);
    } else {
        units.push(code as u16);
    }
}

/// Append `value` as a JSON number: the shortest decimal that reads back as the same float64.
///
/// Rust's `{:?}` gives exactly that (`0.1`, `1.0`, `1e16`, `5e-324`), always valid JSON for a
/// finite value. Non-finite values have no JSON form; callers never pass one.
pub fn write_f64(out: &mut String, value: f64) {
    debug_assert!(value.is_finite());
    write!(out, "{value:?}").expect("writing to a String cannot fail");
}

/// Append UTF-16 `units` as a JSON string, escaping every non-ASCII unit as `\uXXXX` (so a
/// lone surrogate stays representable).
pub fn write_units(out: &mut String, units: &[u16]) {
    out.push('"');
    for &unit in units {
        match unit {
            0x22 => out.push_str("\\\""),
            0x5C => out.push_str("\\\\"),
            0x0A => out.push_str("\\n"),
            0x0D => out.push_str("\\r"),
            0x09 => out.push_str("\\t"),
            0x20..=0x7E => out.push(char::from(unit as u8)),
            _ => write!(out, "\\u{unit:04x}").expect("writing to a String cannot fail"),
        }
    }
    out.push('"');
}

/// Append `text` as a JSON string (see [`write_units`]).
pub fn write_str(out: &mut String, text: &str) {
    let units: Vec<u16> = text.encode_utf16().collect();
    write_units(out, &units);
}

/// Append a decoded value back as JSON text (a non-finite float becomes `null`).
pub fn write_value(out: &mut String, value: &Json) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Json::Int(number) => write!(out, "{number}").expect("writing to a String cannot fail"),
        Json::BigInt(text) => out.push_str(text),
        Json::Float(number) if number.is_finite() => write_f64(out, *number),
        Json::Float(_) => out.push_str("null"),
        Json::Str(units) => write_units(out, units),
        Json::Array(items) => write_seq(out, ('[', ']'), items, write_value),
        Json::Floats(floats) => write_seq(out, ('[', ']'), floats, |out, float| {
            write_value(out, &Json::Float(*float))
        }),
        Json::Object(members) => write_seq(out, ('{', '}'), members, |out, (name, item)| {
            write_units(out, name);
            out.push(':');
            write_value(out, item);
        }),
    }
}

/// Append `items` written by `write`, comma-separated between the `brackets`.
pub fn write_seq<T>(
    out: &mut String,
    brackets: (char, char),
    items: &[T],
    mut write: impl FnMut(&mut String, &T),
) {
    out.push(brackets.0);
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        write(out, item);
    }
    out.push(brackets.1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Json {
        parse(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn units(text: &str) -> Vec<u16> {
        text.encode_utf16().collect()
    }

    #[test]
    fn arrays_of_float_literals_only_are_read_as_floats() {
        assert_eq!(
            ok("[0.5, 1e3 ,-2.5E-1]"),
            Json::Floats(vec![0.5, 1000.0, -0.25])
        );
        // One integer literal, or any other value, and the array is read element by element.
        assert_eq!(
            ok("[0.5,1]"),
            Json::Array(vec![Json::Float(0.5), Json::Int(1)])
        );
        assert_eq!(
            ok("[[1.5],0.5,null]"),
            Json::Array(vec![Json::Floats(vec![1.5]), Json::Float(0.5), Json::Null])
        );
        assert_eq!(
            ok("[0.5,[2.5,[3]],{}]").type_name(),
            "an array",
            "nested containers re-read after a float prefix"
        );
        assert_eq!(ok("[]"), Json::Array(Vec::new()));
        for bad in ["[0.5,]", "[0.5 0.25]", "[0.5,1.]", "[0.5", "[0.5,NaN]"] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad}");
        }
        let mut text = String::new();
        write_value(&mut text, &ok("[0.5,0.25]"));
        assert_eq!(text, "[0.5,0.25]");
    }

    #[test]
    fn integer_literals_stay_apart_from_float_literals() {
        assert_eq!(ok("4"), Json::Int(4));
        assert_eq!(ok("4.0"), Json::Float(4.0));
        assert_eq!(ok("4e0"), Json::Float(4.0));
        assert_eq!(ok("4E+0"), Json::Float(4.0));
        assert_eq!(ok("-0"), Json::Int(0));
        assert!(matches!(ok("-0.0"), Json::Float(z) if z == 0.0 && z.is_sign_negative()));
        assert_eq!(ok("9223372036854775807"), Json::Int(i64::MAX));
        assert_eq!(ok("-9223372036854775808"), Json::Int(i64::MIN));
        assert_eq!(
            ok("9223372036854775808"),
            Json::BigInt("9223372036854775808".into())
        );
        assert_eq!(
            ok("-9223372036854775809"),
            Json::BigInt("-9223372036854775809".into())
        );
        let huge = "1".repeat(400);
        assert_eq!(ok(&huge), Json::BigInt(huge.clone().into()));
        assert_eq!(ok(&huge).as_f64(), Some(f64::INFINITY));
        assert_eq!(ok("100000000000000000000").as_f64(), Some(1e20));
    }

    #[test]
    fn floats_read_as_the_nearest_double() {
        assert_eq!(ok("0.1"), Json::Float(0.1));
        assert_eq!(ok("1e400"), Json::Float(f64::INFINITY));
        assert_eq!(ok("4.9e-324"), Json::Float(5e-324));
        assert_eq!(ok("2e-324"), Json::Float(0.0));
        // Halfway between 1 and the next double, then just above: ties to even, then up.
        assert_eq!(
            ok("1.00000000000000011102230246251565404236316680908203125").as_f64(),
            Some(1.0)
        );
        assert_eq!(
            ok("1.00000000000000011102230246251565404236316680908203126").as_f64(),
            Some(1.0 + f64::EPSILON)
        );
    }

    #[test]
    fn malformed_numbers_and_tokens_are_refused() {
        for bad in [
            "01",
            "-",
            "1.",
            ".5",
            "+1",
            "1e",
            "1e+",
            "NaN",
            "Infinity",
            "-Infinity",
            "0x10",
            "tru",
            "nul",
            "[1,]",
            "{\"a\":1,}",
            "[1 2]",
            "{\"a\" 1}",
            "{a:1}",
            "'a'",
            "",
            "  ",
            "1 2",
            "[",
            "{",
            "\"abc",
            "[1]]",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn strings_decode_escapes_and_keep_lone_surrogates() {
        assert_eq!(
            ok(r#""a\"\\\/\b\f\n\r\t""#),
            Json::Str(units("a\"\\/\u{8}\u{c}\n\r\t"))
        );
        assert_eq!(ok(r#""\u0069d""#), Json::Str(units("id")));
        assert_eq!(ok(r#""\ud83d\ude00""#), Json::Str(units("😀")));
        assert_eq!(ok("\"😀é\""), Json::Str(units("😀é")));
        assert_eq!(ok(r#""\uD800""#), Json::Str(vec![0xD800]));
        assert_eq!(parse(b"\"\xED\x9F\xBF\"").unwrap(), Json::Str(vec![0xD7FF]));
        for bad in [
            &b"\"\x01\""[..],
            b"\"\\x\"",
            b"\"\\u12\"",
            b"\"\xFF\"",
            b"\"\xC0\x80\"",
            b"\"\xE0\x80\x80\"",
            b"\"\xF4\x90\x80\x80\"",
            b"\"\xC3\"",
            b"\"\xED\xA0\x80\"", // an encoded surrogate is not UTF-8
        ] {
            assert!(parse(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn whitespace_bom_and_depth() {
        assert_eq!(ok(" \t\r\n{} \r\n"), Json::Object(vec![]));
        // A byte order mark is not JSON whitespace: the reference refuses it too.
        assert!(parse(b"\xEF\xBB\xBF{}\n").is_err());
        assert!(parse(b"\x0c{}").is_err());
        let deep = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(deep.as_bytes()).is_ok());
        let deeper = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse(deeper.as_bytes()).is_err());
    }

    #[test]
    fn objects_keep_the_last_of_repeated_keys() {
        let value = ok(r#"{"id":1,"op":"x","id":2}"#);
        assert_eq!(value.get("id"), Some(&Json::Int(2)));
        assert_eq!(value.get("nope"), None);
    }

    #[test]
    fn writing_round_trips() {
        let text = r#"{"a":[1,-2,0.1,1e16,5e-324,true,false,null,"\ud800\u00e9\"\n"],"b":{}}"#;
        let mut out = String::new();
        write_value(&mut out, &ok(text));
        assert_eq!(ok(&out), ok(text));
        assert_eq!(
            out,
            r#"{"a":[1,-2,0.1,1e16,5e-324,true,false,null,"\ud800\u00e9\"\n"],"b":{}}"#
        );
        let mut out = String::new();
        write_value(&mut out, &Json::Float(f64::INFINITY));
        assert_eq!(out, "null");
    }
}
