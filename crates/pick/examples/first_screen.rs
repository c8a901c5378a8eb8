//! Times the picker's first screen in process: the current directory's sessions listed from
//! their project directory (`app::picker::list_here`) and drawn into an 80x24 buffer, as
//! `pick` does before its first key, without a terminal. Prints each run and the median.
//!
//! `cargo run --release -p pi-retrospect-pick --example first_screen -- STORE CWD [RUNS]`
//! (`STORE` a sessions root, `CWD` the directory whose sessions come first; it need not exist).

use std::time::{Duration, Instant};

use pi_retrospect_app::{Environment, ListRequest, StoreFlags};
use pi_retrospect_pick::{PickOptions, first_screen};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: first_screen STORE CWD [RUNS]";
    let store = args.next().ok_or(usage)?;
    let cwd = args.next().ok_or(usage)?;
    let runs: usize = args.next().map_or(Ok(15), |runs| runs.parse())?;
    let env = Environment {
        cwd: cwd.into(),
        ..Environment::default()
    };
    let options = PickOptions {
        list: ListRequest {
            stores: StoreFlags {
                sessions_root: Some(store.into()),
                ..StoreFlags::default()
            },
            ..ListRequest::default()
        },
        ..PickOptions::default()
    };
    let mut times: Vec<Duration> = Vec::new();
    for run in 0..runs {
        let start = Instant::now();
        let screen = first_screen(&options, &env, 80, 24)?;
        let elapsed = start.elapsed();
        times.push(elapsed);
        let n_cells = screen
            .content
            .iter()
            .filter(|cell| cell.symbol() != " ")
            .count();
        println!(
            "run {}: {:.2} ms ({n_cells} cells drawn)",
            run + 1,
            elapsed.as_secs_f64() * 1000.0
        );
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "first screen in process: median {:.2} ms, min {:.2} ms over {runs} runs",
        median.as_secs_f64() * 1000.0,
        times[0].as_secs_f64() * 1000.0
    );
    Ok(())
}
