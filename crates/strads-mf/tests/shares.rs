//! Loading a rating file in rank shares, on ranks that are threads of this process, against
//! loading it in memory: every rank agrees on the totals, holds exactly its workers' ratings (by
//! user and by item, training, test and validation) as the in-memory ratings have them, and rank 0
//! numbers the ids as one process does.

use std::fmt::Write as _;

use strads_core::{Collectives, InProcess, balanced_ranges};
use strads_mf::ratings::{Duplicates, ReadOptions};
use strads_mf::{RatingSource, TestSet, load_ratings, load_ratings_share};

#[test]
fn rank_shares_hold_their_workers_ratings_as_memory_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let (mut train, mut test) = (String::new(), String::new());
    for n in 0..1200u64 {
        let (user, item) = ((n * 7919) % 61, (n * 104_729 + n / 3) % 37);
        let line = format!("user{user}\titem{item}\t{}\n", 1 + (n * 13) % 5);
        // Repeats of a pair meet on one rank and are averaged, as in memory.
        if n % 10 == 3 { write!(test, "{line}").unwrap() } else { write!(train, "{line}").unwrap() }
    }
    test.push_str("stranger\titem1\t3\n");
    let (train_path, test_path) = (dir.path().join("train.tsv"), dir.path().join("test.tsv"));
    std::fs::write(&train_path, train).unwrap();
    std::fs::write(&test_path, test).unwrap();
    let options = ReadOptions { duplicates: Duplicates::Mean, ..ReadOptions::default() };
    let validation = Some((0.2, 5));
    let (memory, ids) = load_ratings(&train_path, TestSet::File(&test_path), &options, validation).unwrap();
    let totals = memory.totals();
    assert!(
        totals.validation_ratings > 0 && totals.test_cold_pairs >= 1,
        "{} {}",
        totals.validation_ratings,
        totals.test_cold_pairs
    );
    let weights = |counts: &[u32]| counts.iter().map(|&n| u64::from(n) + 1).collect::<Vec<u64>>();
    for (ranks, threads) in [(1, 1), (2, 1), (3, 2)] {
        let workers = ranks * threads;
        let user_ranges = balanced_ranges(&weights(&totals.user_counts), workers);
        let item_ranges = balanced_ranges(&weights(&totals.item_counts), workers);
        let group = InProcess::group(ranks);
        let loaded: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = group
                .iter()
                .map(|c| {
                    let (train_path, test_path, options) = (&train_path, &test_path, &options);
                    scope.spawn(move || {
                        let loaded =
                            load_ratings_share(c, train_path, Some(test_path), options, workers, validation).unwrap();
                        (c.rank(), loaded)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (rank, (mine, rank_ids)) in &loaded {
            let label = format!("{ranks} ranks x {threads}, rank {rank}");
            assert_eq!(mine.totals(), totals, "{label}");
            for w in rank * threads..(rank + 1) * threads {
                let (users, items) = (user_ranges[w].clone(), item_ranges[w].clone());
                assert_eq!(mine.by_users(users.clone()), memory.by_users(users.clone()), "{label}");
                assert_eq!(mine.by_items(items.clone()), memory.by_items(items), "{label}");
                assert_eq!(mine.test_by_users(users.clone()), memory.test_by_users(users.clone()), "{label}");
                assert_eq!(mine.validation_by_users(users.clone()), memory.validation_by_users(users), "{label}");
            }
            if *rank == 0 {
                assert_eq!(rank_ids, &ids, "{label}");
            }
        }
    }
}
