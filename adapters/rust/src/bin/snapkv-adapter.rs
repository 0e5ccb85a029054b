//! `snapkv-adapter`: the Rust SnapKV port served over protocol v1 on stdin/stdout.
//!
//! Reads request lines as bytes (so input that is not UTF-8 is answered `bad-request` rather
//! than failing the read), skips blank lines, answers each other line with exactly one
//! response line and flushes it. Exits 0 after answering `bye` or at the end of input.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::ExitCode;

use snapkv::protocol::Session;

/// A line holding only JSON whitespace gets no answer (SPEC §3.1).
fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|byte| matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
}

fn serve(input: &mut impl BufRead, output: &mut impl Write) -> io::Result<()> {
    let mut session = Session::new();
    let mut line = Vec::new();
    let mut answer = String::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if is_blank(&line) {
            continue;
        }
        answer.clear();
        session.handle_line(&line, &mut answer);
        output.write_all(answer.as_bytes())?;
        output.flush()?;
        if session.finished() {
            return Ok(());
        }
    }
}

fn main() -> ExitCode {
    let mut input = BufReader::with_capacity(1 << 16, io::stdin().lock());
    let mut output = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match serve(&mut input, &mut output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("snapkv-adapter: {error}");
            ExitCode::FAILURE
        }
    }
}
