use std::os::unix::fs::FileExt;
use std::time::Instant;
fn main() {
    let root = std::env::args().nth(1).unwrap();
    let mut paths = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(root)];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p)
            } else if p.extension().map_or(false, |x| x == "jsonl") {
                paths.push(p)
            }
        }
    }
    let files: Vec<std::fs::File> = paths
        .iter()
        .map(|p| std::fs::File::open(p).unwrap())
        .collect();
    for round in 0..3 {
        let t = Instant::now();
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0usize;
        for f in &files {
            let n = f.metadata().unwrap().len() as usize;
            let k = f.read_at(&mut buf[..n], 0).unwrap();
            total += k;
        }
        let floor = t.elapsed();
        let t = Instant::now();
        let mut named = 0;
        for (p, f) in paths.iter().zip(&files) {
            let s = pi_retrospect_transcript::read_summary_from(p, f).unwrap();
            if s.name.is_some() {
                named += 1
            }
        }
        let full = t.elapsed();
        let t = Instant::now();
        let fi = memchr::memmem::Finder::new(b"\"session_info\"");
        let mut hits = 0;
        for f in &files {
            let n = f.metadata().unwrap().len() as usize;
            let k = f.read_at(&mut buf[..n], 0).unwrap();
            hits += fi.find_iter(&buf[..k]).count();
        }
        let scan = t.elapsed();
        let t = Instant::now();
        let mut named2 = 0;
        for p in paths.iter() {
            let s = pi_retrospect_transcript::read_summary_in(
                p,
                pi_retrospect_transcript::SummaryScope::Ends,
            )
            .unwrap();
            if s.name.is_some() {
                named2 += 1
            }
        }
        let ends = t.elapsed();
        let t = Instant::now();
        for p in paths.iter() {
            let f = std::fs::File::open(p).unwrap();
            let _ = f.metadata().unwrap();
        }
        let opens = t.elapsed();
        eprintln!("ends {ends:?} named {named2} open+stat {opens:?}");
        eprintln!(
            "round {round}: files {} bytes {total} pread-floor {floor:?} pread+finder {scan:?} read_summary_from {full:?} named {named} hits {hits}",
            files.len()
        );
    }
}
