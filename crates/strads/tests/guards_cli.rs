//! Numerical guards: degenerate but valid data gives a defined model with no NaN or infinity in any
//! output, and values too large to square are refused before any work.

mod common;

use common::{stderr, strads};

use std::path::Path;

/// Every output file of a run folder, checked for NaN and infinity (text outputs).
fn assert_finite_outputs(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "npy") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap().to_ascii_lowercase();
        for bad in ["nan", "inf"] {
            assert!(!text.contains(bad), "{}: contains {bad}", path.display());
        }
        // JSON writes a NaN as null; the summaries have no field that may be null.
        if path.file_name().is_some_and(|n| n == "summary.json") {
            assert!(!text.contains("null"), "{}: contains null", path.display());
        }
    }
}

#[test]
fn degenerate_columns_and_large_lambdas_give_finite_models() {
    let dir = tempfile::tempdir().unwrap();
    // Columns 1 and 2 duplicate each other, column 3 is constant, column 5 is all zero (only named
    // by a 0 value), and labels are separable by column 1.
    let data = dir.path().join("degenerate.svm");
    std::fs::write(&data, "1 1:1 2:1 3:5 5:0\n-1 1:-2 2:-2 3:5\n1 1:3 2:3 3:5\n-1 1:-0.5 2:-0.5 3:5\n").unwrap();
    let data = data.to_str().unwrap();
    for command in ["lasso", "logreg"] {
        for extra in [
            &["--lambda-ratio", "0.01"][..],
            &["--lambda-ratio", "0.01", "--intercept"],
            &["--lambda-ratio", "0.01", "--l1-ratio", "0.5", "--scheduler", "shotgun", "--workers", "2"],
            &["--lambda", "1000"],
            &["--lambda-ratio", "0.01", "--path", "4"],
        ] {
            let out = dir.path().join(format!("{command}-{}", extra.join("_")));
            let mut args =
                vec![command, "--data", data, "--quiet", "--max-seconds", "20", "--out", out.to_str().unwrap()];
            args.extend_from_slice(extra);
            let run = strads(&args);
            assert!(run.status.success(), "{command} {extra:?}: {}", stderr(&run));
            assert_finite_outputs(&out);
            let summary: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
            if extra[0] == "--lambda" {
                assert_eq!(summary["nnz"], 0, "{command}: above lambda_max every coefficient is zero");
            }
        }
    }
}

#[test]
fn values_whose_squares_overflow_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("huge.svm");
    std::fs::write(&data, "1 1:1 2:1\n-1 1:1e300 2:2\n1 1:2 2:1\n").unwrap();
    let out = dir.path().join("run");
    for command in ["lasso", "logreg"] {
        let run = strads(&[
            command,
            "--data",
            data.to_str().unwrap(),
            "--lambda-ratio",
            "0.1",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.status.code(), Some(2), "{command}");
        assert!(stderr(&run).contains("row 2: feature value 1e300 is too large"), "{}", stderr(&run));
        assert!(!out.exists());
    }
    let ratings = dir.path().join("huge.csv");
    std::fs::write(&ratings, "u1,i1,4\nu1,i2,3\nu2,i1,-1e200\n").unwrap();
    let run = strads(&["mf", "--data", ratings.to_str().unwrap(), "--rank", "2", "--out", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr(&run).contains("huge.csv:3: rating -1e200 is too large"), "{}", stderr(&run));
    assert!(!out.exists());
}

#[test]
fn factorizations_without_regularization_or_with_cold_rows_stay_finite() {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.csv");
    std::fs::write(&train, "u1,i1,5\nu1,i2,3\nu2,i1,4\nu2,i2,2\nu3,i3,1\n").unwrap();
    let test = dir.path().join("test.csv");
    std::fs::write(&test, "u1,i3,4\nu9,i1,3\nu2,i9,2\n").unwrap();
    for algorithm in ["ccdpp", "ccd", "als"] {
        for bias in ["none", "full"] {
            let out = dir.path().join(format!("{algorithm}-{bias}"));
            let run = strads(&[
                "mf",
                "--data",
                train.to_str().unwrap(),
                "--test",
                test.to_str().unwrap(),
                "--rank",
                "3",
                "--lambda",
                "0",
                "--algorithm",
                algorithm,
                "--bias",
                bias,
                "--iterations",
                "5",
                "--quiet",
                "--out",
                out.to_str().unwrap(),
            ]);
            assert!(run.status.success(), "{algorithm} {bias}: {}", stderr(&run));
            assert_finite_outputs(&out);
        }
    }
}

#[test]
fn memory_beyond_the_limit_is_refused_before_any_allocation() {
    let dir = tempfile::tempdir().unwrap();
    // Two lines whose largest index claims four billion features: 32 GB of column offsets alone.
    let data = dir.path().join("claim.svm");
    std::fs::write(&data, "1 4000000000:1\n-1 1:1\n").unwrap();
    let out = dir.path().join("run");
    for (command, limit) in [("lasso", "auto"), ("logreg", "100M")] {
        let run = strads(&[
            command,
            "--data",
            data.to_str().unwrap(),
            "--lambda-ratio",
            "0.5",
            "--max-memory",
            limit,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.status.code(), Some(2), "{command}: {}", stderr(&run));
        assert!(stderr(&run).contains("4000000000 features need about") && stderr(&run).contains("--max-memory"));
        assert!(!out.exists());
    }
    let small = dir.path().join("small.svm");
    std::fs::write(&small, "1 1:1 2:3\n-1 1:2\n1 2:1\n").unwrap();
    let tight = strads(&[
        "lasso",
        "--data",
        small.to_str().unwrap(),
        "--lambda-ratio",
        "0.5",
        "--max-memory",
        "100",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(tight.status.code(), Some(2), "a limit below any run");
    let unit = strads(&[
        "lasso",
        "--data",
        small.to_str().unwrap(),
        "--lambda-ratio",
        "0.5",
        "--max-memory",
        "3X",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(unit.status.code(), Some(2));
    assert!(stderr(&unit).contains("unknown unit"));
    let fine = strads(&[
        "lasso",
        "--data",
        small.to_str().unwrap(),
        "--lambda-ratio",
        "0.5",
        "--max-memory",
        "1G",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(fine.status.success(), "{}", stderr(&fine));
}

#[test]
fn lda_and_mf_refuse_runs_above_the_memory_limit_before_training() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    let ratings = dir.path().join("ratings");
    let corpus_s = corpus.to_str().unwrap();
    let ratings_s = ratings.to_str().unwrap();
    assert!(strads(&["gen", "lda", "--out", corpus_s, "--documents", "200", "--vocabulary", "300"]).status.success());
    assert!(strads(&["gen", "mf", "--out", ratings_s, "--users", "200", "--items", "100"]).status.success());
    let ldac = corpus.join("corpus.ldac");
    let vocab = corpus.join("vocab.txt");
    let train = ratings.join("train.tsv");
    let lda = |limit: &str, out: &str| {
        let out = dir.path().join(out);
        let run = strads(&[
            "lda",
            "--data",
            ldac.to_str().unwrap(),
            "--vocab",
            vocab.to_str().unwrap(),
            "--topics",
            "1000",
            "--iterations",
            "1",
            "--quiet",
            "--max-memory",
            limit,
            "--out",
            out.to_str().unwrap(),
        ]);
        (run, out)
    };
    let (refused, out) = lda("1M", "lda-refused");
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let message = stderr(&refused);
    assert!(message.contains("1000 topics need about") && message.contains("--max-memory"), "{message}");
    assert!(!out.exists());
    let (fine, out) = lda("off", "lda-fine");
    assert!(fine.status.success(), "{}", stderr(&fine));
    assert!(out.join("word_topic.npy").exists());

    let mf = |limit: &str, out: &str| {
        let out = dir.path().join(out);
        let run = strads(&[
            "mf",
            "--data",
            train.to_str().unwrap(),
            "--rank",
            "400",
            "--iterations",
            "1",
            "--quiet",
            "--max-memory",
            limit,
            "--out",
            out.to_str().unwrap(),
        ]);
        (run, out)
    };
    let (refused, out) = mf("100K", "mf-refused");
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("at rank 400 need about"), "{}", stderr(&refused));
    assert!(!out.exists());
    let (fine, _) = mf("1G", "mf-fine");
    assert!(fine.status.success(), "{}", stderr(&fine));
}
