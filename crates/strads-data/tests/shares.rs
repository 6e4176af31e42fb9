//! Loading a LIBSVM file in rank shares, on ranks that are threads of this process, against the
//! whole-file reader: every rank agrees on the rows, features and weights, holds exactly its
//! workers' rows as the whole file has them, and the leader (or every rank) the whole data when asked.

use std::fmt::Write as _;

use strads_core::{Collectives, InProcess, balanced_ranges};
use strads_data::{
    Dataset, Features, IndexBase, LoadOptions, RowSource, WholeOn, distinct_labels, load, load_libsvm_share,
};

/// A LIBSVM file of `rows` rows with uneven lengths (some empty), labels -1 and 1.
fn libsvm(rows: usize) -> String {
    let mut text = String::new();
    for i in 0..rows {
        let label = if i % 3 == 0 { -1 } else { 1 };
        write!(text, "{label}").unwrap();
        let mut features: Vec<usize> = (0..(i * 7) % 11).map(|k| 1 + (k * 7 + i * 3) % 40).collect();
        features.sort_unstable();
        features.dedup();
        for j in features {
            write!(text, " {j}:{}", (i + j) as f64 / 8.0).unwrap();
        }
        text.push('\n');
    }
    text
}

/// Each row's (column, value) pairs: the same rows compare equal however their storage is offset.
fn rows_of(x: &Features) -> Vec<Vec<(usize, f64)>> {
    let Features::Sparse(m) = x else { panic!("LIBSVM rows are sparse") };
    m.outer_iterator().map(|row| row.iter().map(|(j, &v)| (j, v)).collect()).collect()
}

/// Runs `f` on each of `ranks` in-process ranks, in rank order of the results.
fn on_ranks<R: Send>(ranks: usize, f: impl Fn(&InProcess) -> R + Sync) -> Vec<R> {
    let group = InProcess::group(ranks);
    std::thread::scope(|scope| {
        let handles: Vec<_> = group.iter().map(|c| scope.spawn(|| f(c))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn rank_shares_hold_their_workers_rows_as_the_whole_file_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.svm");
    std::fs::write(&path, libsvm(53)).unwrap();
    let whole: Dataset = load(&path, &LoadOptions::default()).unwrap();
    for (ranks, threads) in [(1, 2), (2, 1), (3, 2)] {
        let workers = ranks * threads;
        let shards = balanced_ranges(&whole.row_weights(), workers);
        for mode in [WholeOn::Nowhere, WholeOn::Leader, WholeOn::Everywhere] {
            let loaded = on_ranks(ranks, |c| {
                let rows = load_libsvm_share(c, &path, IndexBase::Auto, workers, mode).unwrap();
                let labels = distinct_labels(c, rows.labels()).unwrap();
                (c.rank(), rows, labels)
            });
            for (rank, rows, labels) in &loaded {
                let label = format!("{ranks} ranks x {threads}, {mode:?}, rank {rank}");
                assert_eq!((rows.rows(), rows.features()), (whole.rows(), whole.features()), "{label}");
                assert_eq!(rows.row_weights(), whole.row_weights(), "{label}");
                assert_eq!(labels, &vec![-1.0, 1.0], "{label}");
                for shard in &shards[rank * threads..(rank + 1) * threads] {
                    let (mine, theirs) = (rows.shard(shard.clone()).unwrap(), whole.shard(shard.clone()).unwrap());
                    assert_eq!((rows_of(&mine.0), mine.1), (rows_of(&theirs.0), theirs.1), "{label}");
                }
                let holds_whole = mode == WholeOn::Everywhere || (mode == WholeOn::Leader && *rank == 0);
                assert_eq!(rows.whole().is_some(), holds_whole, "{label}");
                if let Some(all) = rows.whole() {
                    assert_eq!(all.x, whole.x, "{label}");
                    assert_eq!(all.y, whole.y, "{label}");
                }
                if !holds_whole && ranks > 1 {
                    let elsewhere = &shards[((rank + 1) % ranks) * threads];
                    assert!(rows.shard(elsewhere.clone()).is_err(), "{label}: another rank's rows");
                }
            }
        }
    }
}

#[test]
fn a_bad_line_is_named_by_its_line_in_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.svm");
    // One bad line in each half, so each rank fails at the same step (a rank that stopped alone
    // would leave the others waiting, as under MPI, where the binary then ends the job).
    let mut lines: Vec<String> = libsvm(40).lines().map(str::to_string).collect();
    lines[4] = "1 3:x".into();
    lines.push("1 7:y".into());
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let errors = on_ranks(2, |c| load_libsvm_share(c, &path, IndexBase::Auto, 2, WholeOn::Nowhere).err());
    let messages: Vec<String> =
        errors.iter().map(|e| e.as_ref().map(ToString::to_string).unwrap_or_default()).collect();
    assert!(messages[0].contains("bad.svm:5:"), "{messages:?}");
    assert!(messages[1].contains("bad.svm:41:"), "{messages:?}");
}
