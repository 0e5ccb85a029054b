//! Protocol v1 (SPEC.md §3): one JSON request per line in, one JSON response per line out.
//!
//! A request is judged in this order (SPEC.md §6, item 1): not a JSON object, no integer
//! `id`, an unknown `op` or a missing required field is `bad-request`; then `no-policy` for
//! `step`/`evict`/`scores` before any accepted `new`; then `invalid-position`; then
//! `invalid-attention`. Unknown extra fields are ignored. Nothing a caller sends panics.

use crate::json::{self, Json};
use crate::{ErrorKind, Params, PolicyError, SnapKV};

/// The protocol version this adapter speaks.
pub const PROTOCOL_VERSION: i64 = 1;
/// The optional ops this adapter announces.
pub const CAPABILITIES: [&str; 1] = ["scores"];
/// The `implementation` object of the `hello` answer.
pub const IMPLEMENTATION: (&str, &str, &str) = ("snapkv-rust", "rust", env!("CARGO_PKG_VERSION"));

type Answer = Result<String, PolicyError>;

fn bad_request(message: String) -> PolicyError {
    PolicyError::new(ErrorKind::BadRequest, message)
}

/// One adapter connection: the current policy, if any, and whether `bye` was answered.
#[derive(Default)]
pub struct Session {
    policy: Option<SnapKV>,
    finished: bool,
    /// Reused buffer for a step's narrowed weights.
    weights: Vec<f32>,
}

impl Session {
    pub fn new() -> Session {
        Session::default()
    }

    /// True once `bye` has been answered: the caller should exit 0.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The current policy, if a `new` was accepted.
    pub fn policy(&self) -> Option<&SnapKV> {
        self.policy.as_ref()
    }

    /// Answer one request line: appends exactly one response line (with its `\n`) to `out`.
    pub fn handle_line(&mut self, line: &[u8], out: &mut String) {
        let request = match json::parse(line) {
            Ok(request @ Json::Object(_)) => request,
            Ok(other) => {
                let message = format!("request must be an object, got {}", other.type_name());
                return respond(out, &Json::Null, Err(bad_request(message)));
            }
            Err(error) => {
                let message = format!("request is not a JSON object line: {error}");
                return respond(out, &Json::Null, Err(bad_request(message)));
            }
        };
        let id = request.get("id").unwrap_or(&Json::Null);
        if !id.is_integer() {
            // SPEC §3.1: only an integer id is echoed; every other answer carries null.
            let message = format!("id must be an integer, got {}", id.type_name());
            return respond(out, &Json::Null, Err(bad_request(message)));
        }
        let answer = self.dispatch(&request);
        respond(out, id, answer);
    }

    fn dispatch(&mut self, request: &Json) -> Answer {
        let op = match request.get("op") {
            Some(Json::Str(units)) => units.as_slice(),
            _ => {
                return Err(bad_request(
                    "op must be one of the protocol's op names".into(),
                ))
            }
        };
        let name = ["hello", "new", "step", "evict", "scores", "bye"]
            .into_iter()
            .find(|name| json::units_eq(op, name))
            .ok_or_else(|| bad_request("unknown op".into()))?;
        match name {
            "hello" => hello(request),
            "new" => self.new_policy(request),
            "step" => self.step(request),
            "evict" => Ok(victims_answer(&self.policy_mut()?.evict())),
            "scores" => Ok(scores_answer(self.policy_mut()?)),
            _ => {
                self.finished = true;
                Ok(String::new())
            }
        }
    }

    fn policy_mut(&mut self) -> Result<&mut SnapKV, PolicyError> {
        self.policy.as_mut().ok_or_else(|| {
            PolicyError::new(ErrorKind::NoPolicy, "no policy: send an accepted new first")
        })
    }

    /// `new`: a refusal leaves any earlier policy in place.
    fn new_policy(&mut self, request: &Json) -> Answer {
        let params = required(request, "new", "params")?;
        let seed = required(request, "new", "seed")?;
        if !seed.is_integer() {
            return Err(PolicyError::new(
                ErrorKind::InvalidParams,
                format!("seed must be an integer, got {}", seed.type_name()),
            ));
        }
        // The seed feeds the registry's Rng, which SnapKV never uses.
        self.policy = Some(SnapKV::new(parse_params(params)?));
        Ok(String::new())
    }

    fn step(&mut self, request: &Json) -> Answer {
        let pos = required(request, "step", "pos")?;
        let attn = required(request, "step", "attn")?;
        let mut weights = std::mem::take(&mut self.weights);
        let result = self.judge_step(pos, attn, &mut weights);
        self.weights = weights;
        result.map(|()| String::new())
    }

    fn judge_step(
        &mut self,
        pos: &Json,
        attn: &Json,
        weights: &mut Vec<f32>,
    ) -> Result<(), PolicyError> {
        let policy = self.policy_mut()?;
        let position = match pos {
            Json::Int(value) => *value,
            // Beyond i64, hence beyond 2^31 - 1: let the policy word the range refusal.
            Json::BigInt(text) if text.starts_with('-') => i64::MIN,
            Json::BigInt(_) => i64::MAX,
            other => {
                return Err(PolicyError::new(
                    ErrorKind::InvalidPosition,
                    format!("pos must be an integer, got {}", other.type_name()),
                ))
            }
        };
        policy.check_position(position)?;
        let attn = match attn {
            Json::Null => None,
            Json::Floats(floats) => {
                // `as` from f64 to f32 rounds to nearest, ties to even, and overflows to
                // infinity, which the policy refuses.
                weights.clear();
                weights.extend(floats.iter().map(|&wide| wide as f32));
                Some(weights.as_slice())
            }
            Json::Array(items) => {
                narrow(items, weights)?;
                Some(weights.as_slice())
            }
            other => {
                return Err(PolicyError::new(
                    ErrorKind::InvalidAttention,
                    format!("attn must be null or a list, got {}", other.type_name()),
                ))
            }
        };
        policy.step(position, attn)
    }
}

/// Read each weight as the nearest float64, then round that to the nearest float32 (ties to
/// even; beyond the float32 range gives an infinity, which the policy refuses).
fn narrow(items: &[Json], weights: &mut Vec<f32>) -> Result<(), PolicyError> {
    weights.clear();
    for (index, item) in items.iter().enumerate() {
        let wide = item.as_f64().ok_or_else(|| {
            PolicyError::new(
                ErrorKind::InvalidAttention,
                format!("attn[{index}] is not a number: {}", item.type_name()),
            )
        })?;
        // `as` from f64 to f32 rounds to nearest, ties to even, and overflows to infinity.
        weights.push(wide as f32);
    }
    Ok(())
}

fn required<'a>(request: &'a Json, op: &str, field: &str) -> Result<&'a Json, PolicyError> {
    request
        .get(field)
        .ok_or_else(|| bad_request(format!("{op} request is missing {field:?}")))
}

fn hello(request: &Json) -> Answer {
    let protocol = required(request, "hello", "protocol")?;
    if *protocol != Json::Int(PROTOCOL_VERSION) {
        return Err(PolicyError::new(
            ErrorKind::Unsupported,
            format!("this adapter speaks protocol {PROTOCOL_VERSION} only"),
        ));
    }
    let (name, language, version) = IMPLEMENTATION;
    let mut out = format!(",\"protocol\":{PROTOCOL_VERSION},\"implementation\":{{\"name\":");
    json::write_str(&mut out, name);
    out.push_str(",\"language\":");
    json::write_str(&mut out, language);
    out.push_str(",\"version\":");
    json::write_str(&mut out, version);
    out.push('}');
    push_list(&mut out, "capabilities", &CAPABILITIES, |out, name| {
        json::write_str(out, name)
    });
    Ok(out)
}

/// Validate a `params` object: exactly the four names, each a JSON integer literal in range.
pub fn parse_params(raw: &Json) -> Result<Params, PolicyError> {
    let invalid = |message: String| PolicyError::new(ErrorKind::InvalidParams, message);
    let Json::Object(members) = raw else {
        return Err(invalid(format!(
            "params must be an object, got {}",
            raw.type_name()
        )));
    };
    let missing: Vec<&str> = Params::NAMES
        .into_iter()
        .filter(|name| raw.get(name).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(invalid(format!("params is missing {}", missing.join(", "))));
    }
    if let Some((name, _)) = members.iter().find(|(name, _)| {
        !Params::NAMES
            .iter()
            .any(|known| json::units_eq(name, known))
    }) {
        let mut shown = String::new();
        json::write_units(&mut shown, name);
        return Err(invalid(format!("params has unknown field {shown}")));
    }
    let mut values = [0i64; 4];
    for (value, name) in values.iter_mut().zip(Params::NAMES) {
        *value = match raw.get(name) {
            Some(Json::Int(number)) => *number,
            Some(Json::BigInt(text)) => {
                return Err(invalid(format!(
                    "{name} must be in [0, 2^31 - 1], got {text}"
                )))
            }
            Some(other) => {
                return Err(invalid(format!(
                    "{name} must be an integer, got {}",
                    other.type_name()
                )))
            }
            None => unreachable!("missing names were refused above"),
        };
    }
    Params::new(values[0], values[1], values[2], values[3])
}

fn push_list<T>(out: &mut String, key: &str, items: &[T], write: impl FnMut(&mut String, &T)) {
    out.push_str(",\"");
    out.push_str(key);
    out.push_str("\":");
    json::write_seq(out, ('[', ']'), items, write);
}

fn write_u32(out: &mut String, value: &u32) {
    use std::fmt::Write as _;
    write!(out, "{value}").expect("writing to a String cannot fail");
}

fn victims_answer(victims: &[u32]) -> String {
    let mut out = String::new();
    push_list(&mut out, "victims", victims, write_u32);
    out
}

fn scores_answer(policy: &mut SnapKV) -> String {
    let scores = policy.scores();
    let mut out = String::new();
    push_list(&mut out, "positions", &scores.positions, write_u32);
    push_list(&mut out, "sums", &scores.sums, |out, value| {
        json::write_f64(out, *value)
    });
    push_list(&mut out, "pooled", &scores.pooled, |out, value| {
        json::write_f64(out, *value)
    });
    out
}

/// Append one response line: `{"id":..,"ok":true,<fields>}` or a refusal.
fn respond(out: &mut String, id: &Json, answer: Answer) {
    out.push_str("{\"id\":");
    json::write_value(out, id);
    match answer {
        Ok(fields) => {
            out.push_str(",\"ok\":true");
            out.push_str(&fields);
        }
        Err(error) => {
            out.push_str(",\"ok\":false,\"error\":{\"kind\":\"");
            out.push_str(error.kind.as_str());
            out.push_str("\",\"message\":");
            json::write_str(out, &error.message);
            out.push('}');
        }
    }
    out.push_str("}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Send `lines` through one session; return each answer decoded.
    fn run(lines: &[&str]) -> Vec<Json> {
        let mut session = Session::new();
        lines
            .iter()
            .map(|line| {
                let mut out = String::new();
                session.handle_line(line.as_bytes(), &mut out);
                assert!(
                    out.ends_with('\n') && out.matches('\n').count() == 1,
                    "{out:?}"
                );
                json::parse(out.as_bytes()).expect("answers are JSON")
            })
            .collect()
    }

    fn kind(answer: &Json) -> Option<String> {
        match answer.get("error")?.get("kind")? {
            Json::Str(units) => Some(String::from_utf16(units).unwrap()),
            _ => None,
        }
    }

    fn kinds(lines: &[&str]) -> Vec<Option<String>> {
        run(lines).iter().map(kind).collect()
    }

    const NEW: &str = r#"{"id":1,"op":"new","params":{"budget":2,"recentWindow":0,"obsWindow":2,"poolKernel":3},"seed":0}"#;

    fn err(kind: &str) -> Option<String> {
        Some(kind.to_string())
    }

    #[test]
    fn hello_announces_scores_and_names_the_port() {
        let answers = run(&[r#"{"id":7,"op":"hello","protocol":1}"#]);
        let text = {
            let mut out = String::new();
            json::write_value(&mut out, &answers[0]);
            out
        };
        assert_eq!(
            text,
            r#"{"id":7,"ok":true,"protocol":1,"implementation":{"name":"snapkv-rust","language":"rust","version":"0.1.0"},"capabilities":["scores"]}"#
        );
        for other in ["2", "1.0", "true", "\"1\"", "null", "0"] {
            let line = format!(r#"{{"id":1,"op":"hello","protocol":{other}}}"#);
            assert_eq!(kinds(&[&line]), vec![err("unsupported")], "{other}");
        }
        assert_eq!(
            kinds(&[r#"{"id":1,"op":"hello"}"#]),
            vec![err("bad-request")]
        );
    }

    #[test]
    fn judgement_order_follows_decision_one() {
        // Missing fields are bad-request even before any policy exists.
        assert_eq!(
            kinds(&[r#"{"id":1,"op":"step","attn":null}"#]),
            vec![err("bad-request")]
        );
        assert_eq!(
            kinds(&[r#"{"id":1,"op":"step","pos":0}"#]),
            vec![err("bad-request")]
        );
        // Then no-policy, even when position and attention are both wrong.
        assert_eq!(
            kinds(&[r#"{"id":1,"op":"step","pos":-1,"attn":7}"#]),
            vec![err("no-policy")]
        );
        assert_eq!(kinds(&[r#"{"id":1,"op":"evict"}"#]), vec![err("no-policy")]);
        assert_eq!(
            kinds(&[r#"{"id":1,"op":"scores"}"#]),
            vec![err("no-policy")]
        );
        // Then the position, then the attention.
        assert_eq!(
            kinds(&[NEW, r#"{"id":2,"op":"step","pos":1.5,"attn":7}"#]),
            vec![None, err("invalid-position")]
        );
        assert_eq!(
            kinds(&[NEW, r#"{"id":2,"op":"step","pos":0,"attn":7}"#]),
            vec![None, err("invalid-attention")]
        );
        // Unknown extra fields are ignored.
        assert_eq!(
            kinds(&[NEW, r#"{"id":2,"op":"step","pos":0,"attn":null,"x":[]}"#]),
            vec![None, None]
        );
    }

    #[test]
    fn malformed_requests_are_bad_requests() {
        let lines = [
            "garbage",
            "[1]",
            "{\"id\":1,\"op\":\"hello\",\"protocol\":1",
            r#"{"op":"hello","protocol":1}"#,
            r#"{"id":1.0,"op":"hello","protocol":1}"#,
            r#"{"id":"1","op":"hello","protocol":1}"#,
            r#"{"id":1,"op":"Hello"}"#,
            r#"{"id":1,"op":7}"#,
            r#"{"id":1}"#,
            r#"{"id":1,"op":"new","seed":0}"#,
            r#"{"id":1,"op":"new","params":{}}"#,
            r#"{"id":NaN,"op":"evict"}"#,
        ];
        assert!(kinds(&lines).iter().all(|k| *k == err("bad-request")));
    }

    #[test]
    fn only_integer_ids_are_echoed() {
        let ids: Vec<String> = run(&[
            "not json",
            r#"{"id":[1],"op":"bye"}"#,
            r#"{"id":true,"op":"bye"}"#,
            r#"{"id":"x","op":"bye"}"#,
            r#"{"id":2.5,"op":"bye"}"#,
            r#"{"id":1e400,"op":"bye"}"#,
            r#"{"id":-0,"op":"nope"}"#,
            r#"{"id":123456789012345678901234567890,"op":"nope"}"#,
        ])
        .iter()
        .map(|answer| {
            let mut out = String::new();
            json::write_value(&mut out, answer.get("id").unwrap());
            out
        })
        .collect();
        assert_eq!(
            ids,
            [
                "null",
                "null",
                "null",
                "null",
                "null",
                "null",
                "0",
                "123456789012345678901234567890"
            ]
        );
    }

    #[test]
    fn params_and_seed_must_be_integer_literals() {
        let base = r#""budget":2,"recentWindow":0,"obsWindow":2"#;
        for (kernel, seed) in [
            ("3.0", "0"),
            ("3e0", "0"),
            ("true", "0"),
            ("\"3\"", "0"),
            ("2", "0"),
            ("3", "0.0"),
            ("3", "null"),
            ("3", "\"0\""),
            ("2147483649", "0"),
            ("99999999999999999999", "0"),
        ] {
            let line = format!(
                r#"{{"id":1,"op":"new","params":{{{base},"poolKernel":{kernel}}},"seed":{seed}}}"#
            );
            assert_eq!(kinds(&[&line]), vec![err("invalid-params")], "{line}");
        }
        for params in [
            r#"[]"#,
            r#"null"#,
            r#"{"budget":2}"#,
            r#"{"budget":2,"recentWindow":0,"obsWindow":2,"poolKernel":3,"extra":1}"#,
        ] {
            let line = format!(r#"{{"id":1,"op":"new","params":{params},"seed":0}}"#);
            assert_eq!(kinds(&[&line]), vec![err("invalid-params")], "{line}");
        }
        // -0 is an integer literal, and the seed may be any integer.
        let line = r#"{"id":1,"op":"new","params":{"budget":2,"recentWindow":-0,"obsWindow":2,"poolKernel":3},"seed":-123456789012345678901234567890}"#;
        assert_eq!(kinds(&[line]), vec![None]);
    }

    #[test]
    fn a_refused_new_keeps_the_earlier_policy() {
        let answers = kinds(&[
            NEW,
            r#"{"id":2,"op":"step","pos":4,"attn":null}"#,
            r#"{"id":3,"op":"new","params":{"budget":2,"recentWindow":2,"obsWindow":2,"poolKernel":3},"seed":0}"#,
            r#"{"id":4,"op":"step","pos":4,"attn":[]}"#,
            r#"{"id":5,"op":"step","pos":5,"attn":[0.5]}"#,
        ]);
        assert_eq!(
            answers,
            vec![
                None,
                None,
                err("invalid-params"),
                err("invalid-position"),
                None
            ]
        );
    }

    #[test]
    fn weights_narrow_from_the_nearest_double() {
        let step = |attn: &str| {
            let line = format!(r#"{{"id":3,"op":"step","pos":1,"attn":[{attn}]}}"#);
            kinds(&[NEW, r#"{"id":2,"op":"step","pos":0,"attn":null}"#, &line])[2].clone()
        };
        // Accepted: exact floats, integers, values that narrow, -0.0 and tiny negatives.
        for good in [
            "0.1",
            "1",
            "100000000000000000000",
            "-0",
            "-0.0",
            "-1e-50",
            "1e-45",
            "3.4028234663852886e38",
            "3.4028235677973362e38",
            "1E2",
        ] {
            assert_eq!(step(good), None, "{good}");
        }
        // Refused: beyond float32 after narrowing (the halfway point rounds to infinity), negative,
        // not numbers.
        for bad in [
            "3.4028235677973366e38",
            "1e39",
            "1000000000000000000000000000000000000000",
            "1e400",
            "-1e-40",
            "-1",
            "true",
            "null",
            "\"0.5\"",
            "[0.5]",
            "{}",
        ] {
            assert_eq!(step(bad), err("invalid-attention"), "{bad}");
        }
    }

    #[test]
    fn scores_and_evict_answer_in_full() {
        let answers = run(&[
            NEW,
            r#"{"id":2,"op":"step","pos":0,"attn":null}"#,
            r#"{"id":3,"op":"step","pos":2,"attn":[0.1]}"#,
            r#"{"id":4,"op":"step","pos":5,"attn":[0.2,0.3]}"#,
            r#"{"id":5,"op":"scores"}"#,
            r#"{"id":6,"op":"evict"}"#,
            r#"{"id":7,"op":"bye"}"#,
        ]);
        let mut text = String::new();
        json::write_value(&mut text, &answers[4]);
        // 0.1f32 + 0.2f32 in float64 is below 0.3f32, which the max-pool spreads to all three.
        let sum = f64::from(0.1f32) + f64::from(0.2f32);
        let expected = format!(
            r#"{{"id":5,"ok":true,"positions":[0,2,5],"sums":[{sum:?},0.30000001192092896,0.0],"pooled":[{third},{third},{third}]}}"#,
            third = "0.30000001192092896"
        );
        assert_eq!(text, expected);
        // All three tie at pooled 0.3f32: the lowest position goes.
        assert_eq!(
            answers[5].get("victims"),
            Some(&Json::Array(vec![Json::Int(0)]))
        );
    }
}
