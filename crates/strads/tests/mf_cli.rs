//! `strads mf`, `strads mf predict`, `strads mf recommend` and `strads gen mf` as users call them.

mod common;

use common::{stderr, strads};

use std::path::Path;
use std::process::Output;

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Ratings with string ids: two taste groups, each user rates most items of the catalogue.
fn write_ratings(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let mut train = String::from("user_id:token\titem_id:token\trating:float\ttimestamp:float\n");
    let mut test = String::from("user\titem\trating\n");
    for u in 0..30 {
        for i in 0..20 {
            let likes = (u % 2 == 0) == (i % 2 == 0);
            let rating = if likes { 4.0 + f64::from((u + i) % 2) } else { 1.0 + f64::from((u * i) % 2) };
            let line = format!("user-{u}\tbook {i}\t{rating}\t{}\n", u * 100 + i);
            if (u + 3 * i) % 7 == 0 && i != 19 {
                test.push_str(line.rsplit_once('\t').unwrap().0);
                test.push('\n');
            } else if !(u == 0 && i == 19) {
                train.push_str(&line);
            }
        }
    }
    // A user and an item seen only in the test set.
    test.push_str("newcomer\tbook 3\t4\nuser-1\tnew book\t2\n");
    let (a, b) = (dir.join("train.tsv"), dir.join("test.tsv"));
    std::fs::write(&a, train).unwrap();
    std::fs::write(&b, test).unwrap();
    (a, b)
}

#[test]
fn train_predict_and_recommend_speak_original_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = write_ratings(dir.path());
    let out = dir.path().join("run");
    let run = strads(&[
        "mf",
        "--data",
        path(&train),
        "--test",
        path(&test),
        "--rank",
        "3",
        "--bias",
        "full",
        "--iterations",
        "15",
        "--workers",
        "2",
        "--out",
        path(&out),
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for key in
        ["train_rmse", "test_rmse", "objective", "rank", "lambda", "iterations", "seconds", "workers", "algorithm"]
    {
        assert!(summary.get(key).is_some_and(|v| !v.is_null()), "summary.json lacks {key}");
    }
    assert_eq!(summary["test_cold_pairs"], 2);
    assert_eq!(summary["test_cold_users"], 1);
    assert_eq!(summary["test_cold_items"], 1);
    assert_eq!(summary["algorithm"], "ccdpp");
    assert!(summary["test_rmse"].as_f64().unwrap() < 1.0, "{summary}");
    let trace = std::fs::read_to_string(out.join("trace.csv")).unwrap();
    assert_eq!(trace.lines().next().unwrap(), "iteration,seconds,objective,train_rmse,test_rmse,validation_rmse");
    // The default tolerance stops the run once an iteration barely lowers the objective.
    let iterations = summary["iterations"].as_u64().unwrap();
    assert!(iterations <= 15 && (iterations == 15 || summary["converged"] == true), "{summary}");
    assert_eq!(trace.lines().count() as u64, 2 + iterations);
    let users = std::fs::read_to_string(out.join("user_factors.csv")).unwrap();
    assert!(users.starts_with("user,f0,f1,f2,bias\n") && users.contains("\nuser-7,"), "{users}");
    assert!(std::fs::read_to_string(out.join("item_factors.csv")).unwrap().contains("\nbook 3,"));
    for file in ["user_factors.npy", "item_factors.npy", "user_bias.npy", "item_bias.npy", "model.json"] {
        assert!(out.join(file).exists(), "{file}");
    }

    // Predictions by original id: the test file again gives the RMSE training reported.
    let predict = strads(&["mf", "predict", "--model", path(&out), "--data", path(&test)]);
    assert!(predict.status.success(), "{}", stderr(&predict));
    let text = stdout(&predict);
    assert!(text.starts_with("user,item,prediction\n"));
    assert!(text.contains("\nnewcomer,book 3,") && text.contains("\nuser-1,new book,"));
    let rmse = summary["test_rmse"].as_f64().unwrap();
    assert!(stderr(&predict).contains(&format!("RMSE {rmse:.4}")), "{}", stderr(&predict));
    assert!(stderr(&predict).contains("2 with an unknown user or item"));

    // user-0 never rated "book 19" in training; even items are the ones user-0 likes.
    let top = strads(&["mf", "recommend", "--model", path(&out), "--user", "user-0", "--top", "3"]);
    assert!(top.status.success(), "{}", stderr(&top));
    let lines: Vec<String> = stdout(&top).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "rank,item,score");
    assert_eq!(lines.len(), 4);
    let excluded =
        strads(&["mf", "recommend", "--model", path(&out), "--user", "user-0", "--top", "30", "--exclude-rated"]);
    assert!(excluded.status.success(), "{}", stderr(&excluded));
    let mut items: Vec<String> =
        stdout(&excluded).lines().skip(1).map(|l| l.split(',').nth(1).unwrap().to_string()).collect();
    items.sort();
    // user-0 rated every book in training but those that went to the test set (0, 7, 14) and book 19.
    assert_eq!(items, ["book 0", "book 14", "book 19", "book 7"], "only unrated items remain");
    let unknown = strads(&["mf", "recommend", "--model", path(&out), "--user", "nobody"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("user 'nobody' is not in the model"));
}

#[test]
fn test_fraction_splits_with_the_seed_and_runs_are_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _) = write_ratings(dir.path());
    let ratings = std::fs::read_to_string(&train).unwrap().lines().count() as u64 - 1;
    let mut outputs = Vec::new();
    for (name, seed) in [("a", "1"), ("b", "1"), ("c", "2")] {
        let out = dir.path().join(name);
        let run = strads(&[
            "mf",
            "--data",
            path(&train),
            "--test-fraction",
            "0.2",
            "--seed",
            seed,
            "--algorithm",
            "als",
            "--workers",
            "2",
            "--iterations",
            "3",
            "--out",
            path(&out),
            "--quiet",
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        outputs.push(std::fs::read(out.join("user_factors.csv")).unwrap());
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["train_ratings"].as_u64().unwrap() + summary["test_ratings"].as_u64().unwrap(), ratings);
        assert_eq!(summary["test_ratings"].as_u64().unwrap(), (ratings as f64 * 0.2).round() as u64);
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_ne!(outputs[0], outputs[2]);
}

#[test]
fn bad_ratings_are_refused_with_file_and_line_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("nonnumeric.csv", "a,b,4\nc,d,four\n", "nonnumeric.csv:2: bad rating 'four'"),
        ("nan.csv", "a,b,4\nc,d,nan\n", "nan.csv:2: bad rating 'nan'"),
        ("infinite.csv", "a,b,4\nc,d,-inf\n", "infinite.csv:2: bad rating '-inf'"),
        ("duplicate.csv", "a,b,4\nc,d,1\na,b,5\n", "duplicate.csv:3: user 'a' rates item 'b' again (first at line 1)"),
        ("empty.csv", "", "empty.csv: no ratings"),
        ("short.csv", "a,b,4\nc,d\n", "short.csv:2: expected at least 3 fields"),
        (
            "header.mtx",
            "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 4\n2 2 5\n",
            "header.mtx: the header declares 3 entries but the file has 2",
        ),
        ("bounds.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 4\n", "bounds.mtx:3: row index 3"),
        ("pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n", "pattern.mtx:1:"),
    ];
    for (name, content, expected) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, content).unwrap();
        let out = dir.path().join(format!("out-{name}"));
        let run = strads(&["mf", "--data", path(&file), "--out", path(&out), "--quiet"]);
        assert_eq!(run.status.code(), Some(2), "{name}: {}", stderr(&run));
        assert!(stderr(&run).contains(expected), "{name}: {}", stderr(&run));
        assert!(!out.exists(), "{name}: no output folder after bad input");
    }
    // The duplicate policies resolve instead of refusing.
    let file = dir.path().join("duplicate.csv");
    for (policy, expected) in [("last", 5.0), ("mean", 4.5)] {
        let out = dir.path().join(format!("dup-{policy}"));
        let run = strads(&[
            "mf",
            "--data",
            path(&file),
            "--duplicates",
            policy,
            "--rank",
            "1",
            "--lambda",
            "0",
            "--bias",
            "full",
            "--iterations",
            "50",
            "--out",
            path(&out),
            "--quiet",
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        let pairs = dir.path().join("pair.csv");
        std::fs::write(&pairs, "a,b\n").unwrap();
        let predict = strads(&["mf", "predict", "--model", path(&out), "--data", path(&pairs)]);
        let value: f64 = stdout(&predict).lines().nth(1).unwrap().rsplit(',').next().unwrap().parse().unwrap();
        assert!((value - expected).abs() < 1e-3, "{policy}: predicted {value}, the kept rating is {expected}");
    }
    let bad_option = strads(&["mf", "--data", path(&file), "--rank", "0", "--out", path(&dir.path().join("x"))]);
    assert_eq!(bad_option.status.code(), Some(2));
    assert!(stderr(&bad_option).contains("rank must be"));
}

#[test]
fn gen_mf_writes_a_problem_that_trains_to_its_noise_level() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("gen");
    let generated = strads(&[
        "gen",
        "mf",
        "--out",
        path(&data),
        "--users",
        "300",
        "--items",
        "200",
        "--rank",
        "3",
        "--density",
        "0.3",
        "--noise",
        "0.2",
    ]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    for file in ["ratings.tsv", "train.tsv", "test.tsv", "true_user_factors.csv", "true_item_factors.csv", "truth.json"]
    {
        assert!(data.join(file).exists(), "{file}");
    }
    let out = dir.path().join("run");
    let run = strads(&[
        "mf",
        "--data",
        path(&data.join("train.tsv")),
        "--test",
        path(&data.join("test.tsv")),
        "--rank",
        "3",
        "--lambda",
        "0.001",
        "--weighted-lambda",
        "--iterations",
        "30",
        "--workers",
        "2",
        "--out",
        path(&out),
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let rmse = summary["test_rmse"].as_f64().unwrap();
    assert!(rmse < 0.2 * 1.15, "test RMSE {rmse} against noise 0.2");
}

#[test]
fn implicit_feedback_trains_scores_rankings_and_recommends_unseen_items() {
    let dir = tempfile::tempdir().unwrap();
    // Plays: even users play even books, odd users odd books, a few plays across; every 5th pair held out.
    let mut train = String::from("user,item,plays\n");
    let mut test = String::from("user,item,plays\n");
    for u in 0..40 {
        for i in 0..30 {
            let favoured = (u % 2 == 0) == (i % 2 == 0);
            if favoured && (u + i) % 3 != 0 || !favoured && (u * i) % 11 == 1 {
                let line = format!("u{u},b{i},{}\n", 1 + (u + 2 * i) % 4);
                if (u * 7 + i) % 5 == 0 && favoured { test.push_str(&line) } else { train.push_str(&line) }
            }
        }
    }
    let (train_path, test_path) = (dir.path().join("plays.csv"), dir.path().join("held.csv"));
    std::fs::write(&train_path, train).unwrap();
    std::fs::write(&test_path, test).unwrap();
    let out = dir.path().join("model");
    let args = ["mf", "--data", path(&train_path), "--test", path(&test_path), "--implicit", "--rank", "4"];
    let run = strads(&[&args[..], &["--workers", "2", "--out", path(&out)]].concat());
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(stdout(&run).contains("NDCG@10"), "{}", stdout(&run));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["algorithm"], "als");
    assert_eq!(summary["bias"], "none");
    assert_eq!(summary["weighted_lambda"], false);
    assert_eq!(summary["cg_steps"], 0, "at rank 4 the exact solve is the cheaper one");
    assert_eq!(summary["implicit"]["alpha"], 1.0);
    assert_eq!(summary["validation_ratings"], 0, "implicit feedback holds nothing out");
    assert!(summary["test_rmse"].is_null());
    let ndcg = summary["ranking"]["ndcg"].as_f64().unwrap();
    assert!(ndcg > 0.6, "the taste groups are found: NDCG@10 {ndcg}");
    // The same run on 1 worker gives the same ranking (the model equals the sequential one).
    let one = dir.path().join("one");
    let run = strads(&[&args[..], &["--workers", "1", "--quiet", "--out", path(&one)]].concat());
    assert!(run.status.success(), "{}", stderr(&run));
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(one.join("summary.json")).unwrap()).unwrap();
    assert!((again["ranking"]["ndcg"].as_f64().unwrap() - ndcg).abs() < 1e-12);

    let top = strads(&["mf", "recommend", "--model", path(&out), "--user", "u0", "--top", "5", "--exclude-rated"]);
    assert!(top.status.success(), "{}", stderr(&top));
    let played: Vec<String> = std::fs::read_to_string(&train_path)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("u0,"))
        .map(|l| l.split(',').nth(1).unwrap().to_string())
        .collect();
    for line in stdout(&top).lines().skip(1) {
        let item = line.split(',').nth(1).unwrap();
        assert!(!played.iter().any(|p| p == item), "{item} was played in training");
        assert!(item[1..].parse::<u32>().unwrap() % 2 == 0, "u0 is recommended its group's books: {item}");
    }

    // Values that are not counts, and settings that do not apply, are refused before training.
    let negative = dir.path().join("negative.csv");
    std::fs::write(&negative, "user,item,plays\na,x,2\nb,y,-1\n").unwrap();
    let bad = dir.path().join("bad");
    let run = strads(&["mf", "--data", path(&negative), "--implicit", "--out", path(&bad)]);
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr(&run).contains("negative.csv:3: negative value -1"), "{}", stderr(&run));
    let run = strads(&["mf", "--data", path(&train_path), "--implicit", "--bias", "full", "--out", path(&bad)]);
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr(&run).contains("--bias none"), "{}", stderr(&run));
    let run = strads(&["mf", "--data", path(&train_path), "--alpha", "2", "--out", path(&bad)]);
    assert_eq!(run.status.code(), Some(2), "--alpha needs --implicit");
    assert!(!bad.exists());
}

#[test]
fn gen_mf_netflix_shape_writes_a_split_that_trains() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("netflix");
    let run = strads(&["gen", "mf", "--shape", "netflix", "--ratings", "40000", "--rank", "3", "--out", path(&data)]);
    assert!(run.status.success(), "{}", stderr(&run));
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("truth.json")).unwrap()).unwrap();
    assert_eq!((truth["users"].as_u64(), truth["items"].as_u64()), (Some(480_189), Some(17_770)));
    let total = truth["ratings"].as_u64().unwrap();
    assert!(total >= 480_189, "every user rates at least one item: {total}");
    let lines = |name: &str| std::fs::read_to_string(data.join(name)).unwrap().lines().count() as u64 - 1;
    assert_eq!(lines("train.tsv") + lines("test.tsv"), total);
    let out = dir.path().join("run");
    let train_path = data.join("train.tsv");
    let args = ["mf", "--data", path(&train_path), "--rank", "2", "--iterations", "1"];
    let train = strads(&[&args[..], &["--workers", "2", "--quiet", "--out", path(&out)]].concat());
    assert!(train.status.success(), "{}", stderr(&train));
}

#[test]
fn the_lambda_exponent_is_used_reported_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = write_ratings(dir.path());
    let summary_of = |exponent: Option<&str>, out: &Path| {
        let mut args = vec!["mf", "--data", path(&train), "--test", path(&test), "--rank", "3", "--out", path(out)];
        if let Some(e) = exponent {
            args.extend(["--lambda-exponent", e]);
        }
        let run = strads(&args);
        assert!(run.status.success(), "{}", stderr(&run));
        let read = |name: &str| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap()
        };
        (read("summary.json"), read("model.json"))
    };
    let (default, default_model) = summary_of(None, &dir.path().join("one"));
    let (half, half_model) = summary_of(Some("0.5"), &dir.path().join("half"));
    assert_eq!(default["lambda_exponent"], 1.0);
    assert_eq!(default_model["lambda_exponent"], 1.0);
    assert_eq!(half["lambda_exponent"], 0.5);
    assert_eq!(half_model["lambda_exponent"], 0.5);
    let ratio = half["lambda"].as_f64().unwrap() / default["lambda"].as_f64().unwrap();
    assert!((ratio - 12.0).abs() < 1e-9, "a row of 144 ratings weighs the same either way: ratio {ratio}");
    assert_ne!(half["train_rmse"], default["train_rmse"]);

    let refused = dir.path().join("refused");
    let args = ["mf", "--data", path(&train), "--lambda-exponent", "2", "--out", path(&refused)];
    let run = strads(&args);
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    assert!(stderr(&run).contains("lambda exponent must be in [0, 1], got 2"), "{}", stderr(&run));
    assert!(!refused.exists(), "nothing is written for refused settings");
}
