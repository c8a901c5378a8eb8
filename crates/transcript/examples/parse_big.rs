//! Times parsing a large generated session: `cargo run --release -p pi-retrospect-transcript
//! --example parse_big -- [PATH] [MEGABYTES]`. Generates PATH (default
//! `/tmp/pi-big-session.jsonl`) with the xtask generator when it does not exist, then opens it
//! and builds the tree, leaf, active branch and context, printing the timings.

#[path = "../../../xtask/src/big_store.rs"]
#[allow(dead_code, missing_docs)]
mod big_store;
#[path = "../../../xtask/src/gen_session.rs"]
#[allow(dead_code, missing_docs)]
mod gen_session;

use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use pi_retrospect_transcript::Transcript;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "/tmp/pi-big-session.jsonl".to_owned()),
    );
    let megabytes: u64 = args
        .next()
        .and_then(|text| text.parse().ok())
        .unwrap_or(128);
    if !path.exists() {
        let started = Instant::now();
        let result = std::fs::File::create(&path).and_then(|file| {
            let mut out = BufWriter::new(file);
            gen_session::write_big_session(&mut out, 42, megabytes << 20)
        });
        if let Err(error) = result {
            eprintln!("cannot write {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
        eprintln!("generated {} in {:?}", path.display(), started.elapsed());
    }
    for _ in 0..3 {
        let started = Instant::now();
        let session = match Transcript::open(&path) {
            Ok(session) => session,
            Err(error) => {
                eprintln!("{error}");
                return ExitCode::FAILURE;
            }
        };
        let parsed = started.elapsed();
        let branch = session.active_branch();
        let context = session.context();
        let total = started.elapsed();
        println!(
            "{} bytes, {} entries, branch {} entries, context {} messages, {} warnings: parse {:?}, total {:?}",
            session.snapshot().bytes,
            session.entries().len(),
            branch.len(),
            context.messages.len(),
            session.warnings().len(),
            parsed,
            total
        );
    }
    ExitCode::SUCCESS
}
