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
    // one big sample of ~100 MB, processed in 256 KB pieces that stay hot
    let mut data = Vec::new();
    for p in &paths {
        if data.len() > 100 << 20 {
            break;
        }
        data.extend(std::fs::read(p).unwrap());
    }
    let piece: usize = std::env::args()
        .nth(2)
        .map_or(256 * 1024, |x| x.parse().unwrap());
    let needles: [&[u8]; 5] = [
        b"\"session_info\"",
        b"session_info",
        b"_info\"",
        b"\"session_info",
        b"n_info",
    ];
    for n in needles {
        let f = memchr::memmem::Finder::new(n);
        let t = Instant::now();
        let mut c = 0;
        for _ in 0..3 {
            for ch in data.chunks(piece) {
                c += f.find_iter(ch).count();
            }
        }
        let el = t.elapsed();
        eprintln!(
            "{:<18} {:.1} GB/s hits {}",
            String::from_utf8_lossy(n),
            (3 * data.len()) as f64 / el.as_secs_f64() / 1e9,
            c / 3
        );
    }
    for b in [b'_', b'f', b'\n', b'{'] {
        let t = Instant::now();
        let mut c = 0;
        for _ in 0..3 {
            for ch in data.chunks(piece) {
                c += memchr::memchr_iter(b, ch).count();
            }
        }
        let el = t.elapsed();
        eprintln!(
            "byte {:?} {:.1} GB/s count {}",
            b as char,
            (3 * data.len()) as f64 / el.as_secs_f64() / 1e9,
            c / 3
        );
    }
}
