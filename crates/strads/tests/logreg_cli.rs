//! `strads logreg`, the elastic net, test metrics, cross-validation and `strads predict` from the command line.

mod common;

use common::{stderr, strads};

use std::path::Path;

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A classification problem (labels -1/1) in `dir/name`.
fn classes(dir: &Path, name: &str, seed: &str) -> String {
    let data = dir.join(name);
    let out = strads(&[
        "gen",
        "lasso",
        "--classes",
        "--out",
        data.to_str().unwrap(),
        "--rows",
        "400",
        "--features",
        "80",
        "--support",
        "8",
        "--correlation",
        "0.2",
        "--seed",
        seed,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    data.to_str().unwrap().to_string()
}

/// The same file with labels rewritten by `f`.
fn relabel(from: &str, to: &Path, f: impl Fn(&str) -> String) -> String {
    let text: String = std::fs::read_to_string(from)
        .unwrap()
        .lines()
        .map(|line| {
            let (label, rest) = line.split_once(' ').unwrap_or((line, ""));
            format!("{} {rest}\n", f(label))
        })
        .collect();
    std::fs::write(to, text).unwrap();
    to.to_str().unwrap().to_string()
}

#[test]
fn zero_one_labels_give_the_same_model_and_predictions_keep_their_form() {
    let dir = tempfile::tempdir().unwrap();
    let data = classes(dir.path(), "train.svm", "1");
    let zero_one = relabel(&data, &dir.path().join("01.svm"), |l| if l == "-1" { "0".into() } else { l.into() });
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for (file, out) in [(&data, &a), (&zero_one, &b)] {
        let run = strads(&[
            "logreg",
            "--data",
            file,
            "--lambda-ratio",
            "0.05",
            "--intercept",
            "--workers",
            "2",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
    }
    let read = |dir: &Path| std::fs::read_to_string(dir.join("coefficients.csv")).unwrap();
    assert_eq!(read(&a), read(&b));
    assert_eq!(json(&a.join("model.json"))["labels"], "minus-one");
    assert_eq!(json(&b.join("model.json"))["labels"], "zero");
    let summary = json(&b.join("summary.json"));
    assert_eq!(summary["loss"], "logistic");
    let accuracy = summary["train_accuracy"].as_f64().unwrap();
    assert!(accuracy > 0.6 && accuracy <= 1.0, "train accuracy {accuracy}");

    let predictions = dir.path().join("p.csv");
    let run = strads(&[
        "predict",
        "--model",
        b.to_str().unwrap(),
        "--data",
        &zero_one,
        "--out",
        predictions.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let text = std::fs::read_to_string(&predictions).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("margin,probability,class"));
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    assert_eq!(rows.len(), 400);
    let labels: Vec<f64> = std::fs::read_to_string(&zero_one)
        .unwrap()
        .lines()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    let right = rows.iter().zip(&labels).filter(|(r, y)| r[2] == **y).count();
    assert!(rows.iter().all(|r| r[2] == 0.0 || r[2] == 1.0), "classes in the training labels' form");
    assert!((right as f64 / 400.0 - accuracy).abs() < 1e-12, "predict agrees with the training accuracy");
    assert!(stderr(&run).contains("accuracy"), "{}", stderr(&run));
}

#[test]
fn bad_labels_are_refused_with_the_file_and_sample() {
    let dir = tempfile::tempdir().unwrap();
    let data = classes(dir.path(), "train.svm", "2");
    let out = dir.path().join("run");
    let cases = [
        (
            relabel(&data, &dir.path().join("two.svm"), |l| if l == "1" { "2".into() } else { l.into() }),
            "label 2 is not a class",
        ),
        (relabel(&data, &dir.path().join("one.svm"), |_| "1".into()), "one class"),
    ];
    for (file, message) in &cases {
        let run = strads(&["logreg", "--data", file, "--lambda-ratio", "0.1", "--out", out.to_str().unwrap()]);
        assert_eq!(run.status.code(), Some(2), "{file}");
        assert!(stderr(&run).contains(message) && stderr(&run).contains(file.as_str()), "{}", stderr(&run));
        assert!(!out.exists(), "no output after a refusal");
    }
    // -1 on one line and 0 on another.
    let mixed = relabel(&data, &dir.path().join("mixed.svm"), |l| if l == "1" { "0".into() } else { l.into() });
    let mut text = std::fs::read_to_string(&mixed).unwrap();
    text = format!("1{}", &text[1..]);
    std::fs::write(&mixed, text).unwrap();
    let run = strads(&["logreg", "--data", &mixed, "--lambda-ratio", "0.1", "--out", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr(&run).contains("mix -1"), "{}", stderr(&run));
}

#[test]
fn a_path_with_a_test_set_and_cross_validation() {
    let dir = tempfile::tempdir().unwrap();
    let data = classes(dir.path(), "train.svm", "3");
    let out = dir.path().join("run");
    let run = strads(&[
        "logreg",
        "--data",
        &data,
        "--test",
        &data,
        "--lambda-ratio",
        "0.01",
        "--path",
        "8",
        "--cv",
        "3",
        "--l1-ratio",
        "0.8",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let path = std::fs::read_to_string(out.join("path.csv")).unwrap();
    let mut lines = path.lines();
    assert_eq!(lines.next(), Some("lambda,objective,duality_gap,nnz,seconds,updates,status,test_log_loss"));
    let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(String::from).collect()).collect();
    assert_eq!(rows.len(), 8);
    let cv = std::fs::read_to_string(out.join("cv.csv")).unwrap();
    assert!(cv.starts_with("lambda,mean_log_loss,std_log_loss,fold1,fold2,fold3\n"), "{cv}");
    assert_eq!(cv.lines().count(), 9);
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["cv_folds"], 3);
    assert_eq!(summary["l1_ratio"], 0.8);
    // The chosen lambda is the path's lambda with the least mean held-out loss.
    let means: Vec<(f64, f64)> = cv
        .lines()
        .skip(1)
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            (v[0], v[1])
        })
        .collect();
    let best = means.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert_eq!(summary["lambda"].as_f64().unwrap(), best.0);
    assert_eq!(summary["cv_loss"].as_f64().unwrap(), best.1);
    // Scoring on the training file itself: the test log loss of the chosen model is its training loss.
    let test_loss = summary["test_log_loss"].as_f64().unwrap();
    let chosen = rows.iter().find(|r| r[0].parse::<f64>().unwrap() == best.0).unwrap();
    assert_eq!(chosen[7].parse::<f64>().unwrap(), test_loss);
}

#[test]
fn the_elastic_net_lasso_reports_test_rmse_and_predicts() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("r.svm");
    let out = strads(&["gen", "lasso", "--out", data.to_str().unwrap(), "--rows", "300", "--features", "60"]);
    assert!(out.status.success());
    let data = data.to_str().unwrap();
    let run_dir = dir.path().join("run");
    let run = strads(&[
        "lasso",
        "--data",
        data,
        "--test",
        data,
        "--lambda-ratio",
        "0.05",
        "--l1-ratio",
        "0.5",
        "--intercept",
        "--quiet",
        "--out",
        run_dir.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let summary = json(&run_dir.join("summary.json"));
    assert_eq!((summary["loss"].as_str(), summary["l1_ratio"].as_f64()), (Some("squared"), Some(0.5)));
    assert_eq!(summary["train_rmse"], summary["test_rmse"], "the same file scores the same");
    let predict = strads(&["predict", "--model", run_dir.to_str().unwrap(), "--data", data]);
    assert!(predict.status.success(), "{}", stderr(&predict));
    assert_eq!(String::from_utf8_lossy(&predict.stdout).lines().count(), 301);
    let rmse: f64 = stderr(&predict).trim().trim_start_matches("rmse ").parse().unwrap();
    assert!((rmse - summary["test_rmse"].as_f64().unwrap()).abs() < 1e-5);
    let missing = strads(&["predict", "--model", dir.path().to_str().unwrap(), "--data", data]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("model.json"));
}
