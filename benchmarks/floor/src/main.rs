//! `snapkv-floor`: the least work an adapter can do on `bench_floor.py`'s request stream.
//!
//! Not an adapter: it understands only the stream's own lines (`hello`, `new` with the
//! benchmark's parameters, `step` with `"pos":P,"attn":[...]`, `evict`, `bye`, each written
//! as `bench_floor.py` writes them, with `"id":N` first). It finds the fields by position
//! instead of parsing JSON, reads each weight with the standard library's float parser
//! (Eisel-Lemire, correctly rounded), narrows it to float32, runs the Rust port's policy and
//! writes the answers. What an adapter does beyond this (a general, strict JSON reader,
//! validation, error messages) is its overhead over the floor.

use std::io::{self, BufRead, BufReader, BufWriter, Write};

use snapkv::{Params, SnapKV};

fn id_of(line: &str) -> &str {
    let start = line.find("\"id\":").expect("every line has an id") + 5;
    let end = start + line[start..].find(',').expect("the id is followed by a comma");
    &line[start..end]
}

fn main() {
    let mut input = BufReader::with_capacity(1 << 16, io::stdin().lock());
    let mut output = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let params = Params::new(1024, 16, 16, 7).expect("the benchmark's parameters are valid");
    let mut policy = SnapKV::new(params);
    let mut weights: Vec<f32> = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line).expect("reading stdin") == 0 {
            return;
        }
        let id = id_of(&line);
        if let Some(at) = line.find("\"attn\":[") {
            let pos_at = line.find("\"pos\":").expect("a step has a pos") + 6;
            let pos_end = pos_at + line[pos_at..].find(',').expect("pos is followed by a comma");
            let pos: i64 = line[pos_at..pos_end].parse().expect("pos is an integer");
            let list = &line[at + 8..line.rfind(']').expect("the list closes")];
            weights.clear();
            if !list.is_empty() {
                weights.extend(
                    list.split(',')
                        .map(|token| token.parse::<f64>().expect("a weight") as f32),
                );
            }
            policy.step(pos, Some(&weights)).expect("the stream's steps are valid");
            writeln!(output, "{{\"id\":{id},\"ok\":true}}").expect("writing stdout");
        } else if line.contains("\"op\":\"evict\"") {
            let victims = policy.evict();
            let list: Vec<String> = victims.iter().map(u32::to_string).collect();
            writeln!(output, "{{\"id\":{id},\"ok\":true,\"victims\":[{}]}}", list.join(","))
                .expect("writing stdout");
        } else {
            writeln!(output, "{{\"id\":{id},\"ok\":true}}").expect("writing stdout");
        }
        output.flush().expect("flushing stdout");
        if line.contains("\"op\":\"bye\"") {
            return;
        }
    }
}
