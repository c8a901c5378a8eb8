//! Parallel work for a front end on the listing's thread pool, so that a front end that turns
//! a large result into text in parallel (`list --long`, `list --jsonl`) neither owns threads
//! nor depends on the walk or rayon.

use rayon::prelude::*;

/// Returns `map` of each run of at most `chunk_len` consecutive `items`, in order, computed on
/// the pool of `threads` workers the listing uses (0: one per core). A `chunk_len` of 0 is
/// taken as 1.
pub fn map_chunks<T: Sync, R: Send>(
    threads: usize,
    items: &[T],
    chunk_len: usize,
    map: impl Fn(&[T]) -> R + Sync + Send,
) -> Vec<R> {
    pi_retrospect_walk::with_threads(threads, || {
        items.par_chunks(chunk_len.max(1)).map(&map).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_mapped_in_order_whatever_the_threads() {
        let items: Vec<u32> = (0..1000).collect();
        for threads in [1, 4] {
            let sums = map_chunks(threads, &items, 7, |chunk| chunk.iter().sum::<u32>());
            let expected: Vec<u32> = items.chunks(7).map(|chunk| chunk.iter().sum()).collect();
            assert_eq!(sums, expected, "{threads} threads");
        }
    }
}
