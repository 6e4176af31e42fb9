//! The `strads` command as users and scripts call it: outputs, exit codes, errors, help.

mod common;

use common::{stderr, strads};

use std::path::Path;

fn generate(dir: &Path) -> String {
    let data = dir.join("train.svm");
    let out = strads(&[
        "gen",
        "lasso",
        "--out",
        data.to_str().unwrap(),
        "--rows",
        "300",
        "--features",
        "120",
        "--support",
        "8",
        "--correlation",
        "0.2",
        "--truth",
        dir.join("truth.csv").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    data.to_str().unwrap().to_string()
}

#[test]
fn a_run_writes_summary_trace_and_coefficients() {
    let dir = tempfile::tempdir().unwrap();
    let data = generate(dir.path());
    let out = dir.path().join("run");
    let run = strads(&[
        "lasso",
        "--data",
        &data,
        "--lambda-ratio",
        "0.05",
        "--workers",
        "2",
        "--tol",
        "1e-8",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(String::from_utf8_lossy(&run.stdout).starts_with("converged:"));

    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for key in ["objective", "duality_gap", "lambda", "nnz", "rounds", "updates", "seconds", "scheduler", "workers"] {
        assert!(summary.get(key).is_some(), "summary.json lacks {key}");
    }
    assert_eq!(summary["scheduler"], "block");
    assert_eq!(summary["split_min"], "never", "the default, never split, is reported");
    assert_eq!(summary["workers"], 2);
    assert!(summary["duality_gap"].as_f64().unwrap() <= 1e-8);

    let trace = std::fs::read_to_string(out.join("trace.csv")).unwrap();
    let mut lines = trace.lines();
    assert_eq!(lines.next(), Some("round,seconds,objective,duality_gap,nnz,updates,lambda"));
    let last: Vec<f64> = lines.last().unwrap().split(',').map(|v| v.parse().unwrap()).collect();
    assert_eq!(last[2], summary["objective"].as_f64().unwrap());

    let coefficients = std::fs::read_to_string(out.join("coefficients.csv")).unwrap();
    let rows: Vec<&str> = coefficients.lines().collect();
    assert_eq!(rows[0], "index,value");
    assert_eq!(rows.len() - 1, summary["nnz"].as_u64().unwrap() as usize);
    for row in &rows[1..] {
        let (index, value) = row.split_once(',').unwrap();
        assert!(index.parse::<usize>().unwrap() < 120);
        assert!(value.parse::<f64>().unwrap() != 0.0);
    }
}

#[test]
fn every_scheduler_runs_from_the_command_line_and_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let data = generate(dir.path());
    let mut objectives = vec![];
    for scheduler in ["dynamic", "shotgun", "cyclic", "sequential"] {
        let out = dir.path().join(scheduler);
        let extra: &[&str] = if scheduler == "sequential" { &[] } else { &["--set-size", "4"] };
        let mut args = vec![
            "lasso",
            "--data",
            &data,
            "--lambda-ratio",
            "0.1",
            "--scheduler",
            scheduler,
            "--tol",
            "1e-10",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let run = strads(&args);
        assert!(run.status.success(), "{scheduler}: {}", stderr(&run));
        assert!(run.stdout.is_empty(), "--quiet prints nothing");
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        objectives.push(summary["objective"].as_f64().unwrap());
    }
    for o in &objectives {
        assert!((o - objectives[3]).abs() <= 1e-8 * objectives[3], "{objectives:?}");
    }
}

/// Each bad input: a one-line error naming the file and line, exit code 2, no output folder.
#[test]
fn bad_inputs_fail_cleanly_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &[&str], &str)] = &[
        ("bad_token.svm", "1 1:2\n-1 2:x\n", &[], "bad_token.svm:2: bad value in '2:x'"),
        ("out_of_range.svm", "1 1:2\n-1 99999999999:1\n", &[], "out_of_range.svm:2: feature index 99999999999"),
        ("nan.svm", "1 1:2\n-1 2:NaN\n", &[], "nan.svm:2: bad value in '2:NaN'"),
        ("inf.csv", "y,a\n1,2\n3,inf\n", &[], "inf.csv:3: bad value 'inf'"),
        ("empty.svm", "", &[], "empty.svm: no data rows"),
        ("no_label.svm", "1 1:2\n3:4\n", &[], "no_label.svm:2: missing label"),
        ("short.csv", "y,a,b\n1,2,3\n4,5\n", &[], "short.csv:3: expected 3 fields, found 2"),
        (
            "absurd.mtx",
            "%%MatrixMarket matrix coordinate real general\n1000000000000 3 1\n1 1 1\n",
            &["--labels", "LABELS"],
            "absurd.mtx:2: the header claims 1000000000000 rows",
        ),
        (
            "lengths.mtx",
            "%%MatrixMarket matrix coordinate real general\n3 2 1\n1 1 1\n",
            &["--labels", "LABELS"],
            "has 2 labels but",
        ),
    ];
    let labels = dir.path().join("labels.txt");
    std::fs::write(&labels, "1\n2\n").unwrap();
    for (name, content, extra, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let out = dir.path().join(format!("out-{name}"));
        let mut args =
            vec!["lasso", "--data", path.to_str().unwrap(), "--lambda-ratio", "0.1", "--out", out.to_str().unwrap()];
        for e in *extra {
            args.push(if *e == "LABELS" { labels.to_str().unwrap() } else { e });
        }
        let run = strads(&args);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(expected), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: one line: {err}");
        assert!(!out.exists(), "{name}: an output folder was left behind");
    }
}

#[test]
fn bad_options_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("does-not-exist.svm");
    let out = dir.path().join("out");
    let base = ["lasso", "--data", missing.to_str().unwrap(), "--out", out.to_str().unwrap()];
    let cases: &[(&[&str], &str)] = &[
        (&["--lambda", "-1"], "lambda must be > 0"),
        (&["--lambda-ratio", "0.1", "--workers", "0"], "--workers must be at least 1"),
        (&["--lambda-ratio", "0.1", "--rho", "1.5"], "rho must be in (0, 1]"),
        (&["--lambda-ratio", "0.1", "--rho", "0"], "rho must be in (0, 1]"),
        (&["--lambda-ratio", "2"], "ratio must be in (0, 1]"),
        (&["--lambda-ratio", "0.1", "--gap-every", "often"], "--gap-every"),
    ];
    for (extra, expected) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let run = strads(&args);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{extra:?}: {err}");
        // Refused before the (missing) data file was even opened.
        assert!(err.contains(expected), "{extra:?}: {err}");
    }
    let run = strads(&base[..]);
    assert_eq!(run.status.code(), Some(2), "lambda is required");
}

#[test]
fn help_describes_every_option_with_its_default() {
    let help = String::from_utf8(strads(&["lasso", "--help"]).stdout).unwrap();
    for option in [
        "--data",
        "--format",
        "--lambda ",
        "--lambda-ratio",
        "--intercept",
        "--scheduler",
        "--workers",
        "--set-size",
        "--candidates",
        "--rho",
        "--priority",
        "--warmup-rounds",
        "--screening",
        "--tol",
        "--coef-tol",
        "--max-rounds",
        "--max-seconds",
        "--gap-every",
        "--pipeline-depth",
        "--seed",
        "--out",
        "--quiet",
    ] {
        assert!(help.contains(option), "lasso --help lacks {option}");
    }
    for default in ["[default: block]", "[default: 1]", "[default: 0.1]", "[default: 1e-6]", "[default: auto]"] {
        assert!(help.contains(default), "lasso --help lacks {default}");
    }
    let top = String::from_utf8(strads(&["--help"]).stdout).unwrap();
    for command in ["lasso", "gen", "demo"] {
        assert!(top.contains(command));
    }
}

#[test]
fn a_path_writes_one_row_and_the_coefficients_per_lambda() {
    let dir = tempfile::tempdir().unwrap();
    let data = generate(dir.path());
    let out = dir.path().join("path");
    let run = strads(&[
        "lasso",
        "--data",
        &data,
        "--lambda-ratio",
        "0.01",
        "--path",
        "5",
        "--tol",
        "1e-9",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let path = std::fs::read_to_string(out.join("path.csv")).unwrap();
    let rows: Vec<Vec<String>> = path.lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect();
    assert_eq!(path.lines().next(), Some("lambda,objective,duality_gap,nnz,seconds,updates,status"));
    assert_eq!(rows.len(), 5);
    let lambdas: Vec<f64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(lambdas.windows(2).all(|w| w[1] < w[0]), "{lambdas:?}");
    assert!(rows.iter().all(|r| r[6] == "converged"));
    let coefficients = std::fs::read_to_string(out.join("path_coefficients.csv")).unwrap();
    let last = lambdas[4].to_string();
    let at_last = coefficients.lines().filter(|l| l.starts_with(&format!("{last},"))).count();
    assert_eq!(at_last.to_string(), rows[4][3], "nonzeros at the last lambda");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["lambda"].as_f64().unwrap(), lambdas[4]);
}

/// The same data as LIBSVM, as MatrixMarket with a label file, and as CSV gives the same model.
#[test]
fn every_input_format_gives_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<(f64, Vec<f64>)> = (0..60)
        .map(|i| {
            let x: Vec<f64> = (0..5).map(|j| (((i * 7 + j * 13) % 11) as f64 - 5.0) / 3.0).collect();
            let y = 2.0 * x[0] - x[3] + 0.1 * ((i % 7) as f64 - 3.0);
            (y, x)
        })
        .collect();
    let mut svm = String::new();
    let mut csv = String::from("a,b,target,c,d,e\n");
    let mut mtx = String::new();
    let mut labels = String::new();
    let mut entries = 0;
    for (i, (y, x)) in rows.iter().enumerate() {
        svm.push_str(&y.to_string());
        for (j, v) in x.iter().enumerate() {
            if *v != 0.0 {
                svm.push_str(&format!(" {}:{v}", j + 1));
                mtx.push_str(&format!("{} {} {v}\n", i + 1, j + 1));
                entries += 1;
            }
        }
        svm.push('\n');
        csv.push_str(&format!("{},{},{y},{},{},{}\n", x[0], x[1], x[2], x[3], x[4]));
        labels.push_str(&format!("{y}\n"));
    }
    let mtx = format!("%%MatrixMarket matrix coordinate real general\n{} 5 {entries}\n{mtx}", rows.len());
    for (name, text) in [("d.svm", &svm), ("d.csv", &csv), ("x.mtx", &mtx), ("y.txt", &labels)] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let mut objectives = vec![];
    for (data, extra) in [("d.svm", None), ("d.csv", None), ("x.mtx", Some(path("y.txt")))] {
        let out = dir.path().join(format!("out-{data}"));
        let mut args = vec![
            "lasso".to_string(),
            "--data".into(),
            path(data),
            "--lambda".into(),
            "0.05".into(),
            "--intercept".into(),
            "--tol".into(),
            "1e-10".into(),
            "--quiet".into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ];
        if let Some(labels) = extra {
            args.extend(["--labels".into(), labels]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = strads(&args);
        assert!(run.status.success(), "{data}: {}", stderr(&run));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["features"], 5, "{data}");
        assert_eq!(summary["rows"], 60, "{data}");
        objectives.push(summary["objective"].as_f64().unwrap());
    }
    for o in &objectives {
        assert!((o - objectives[0]).abs() <= 1e-9 * objectives[0], "{objectives:?}");
    }
}
