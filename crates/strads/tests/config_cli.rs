//! `--config FILE` and `--print-config`: settings files with the flags' keys, overridden by flags.

mod common;

use common::{stderr, strads};

use std::path::Path;

/// summary.json without the fields that measure time.
fn summary(dir: &Path) -> serde_json::Value {
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let map = value.as_object_mut().unwrap();
    for timing in ["seconds", "loading_seconds", "peak_rss_bytes_per_rank"] {
        map.remove(timing);
    }
    value
}

fn problem(dir: &Path) -> String {
    let data = dir.join("d.svm");
    let out = strads(&["gen", "lasso", "--out", data.to_str().unwrap(), "--rows", "200", "--features", "80"]);
    assert!(out.status.success(), "{}", stderr(&out));
    data.to_str().unwrap().to_string()
}

#[test]
fn a_settings_file_gives_the_run_of_the_same_flags_and_flags_override_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = problem(dir.path());
    let (by_flags, by_file, overridden) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
    let run = strads(&[
        "lasso",
        "--data",
        &data,
        "--lambda-ratio",
        "0.05",
        "--scheduler",
        "shotgun",
        "--workers",
        "2",
        "--intercept",
        "--tol",
        "1e-8",
        "--quiet",
        "--out",
        by_flags.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let file = dir.path().join("run.toml");
    std::fs::write(
        &file,
        format!(
            "data = \"{data}\"\nlambda_ratio = 0.05\nscheduler = \"shotgun\"\nworkers = 2\nintercept = true\ntol = 1e-8\nquiet = true\n"
        ),
    )
    .unwrap();
    let run = strads(&["lasso", "--config", file.to_str().unwrap(), "--out", by_file.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(summary(&by_flags), summary(&by_file));

    let run =
        strads(&["lasso", "--config", file.to_str().unwrap(), "--workers", "1", "--out", overridden.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    let s = summary(&overridden);
    assert_eq!(
        (s["workers"].as_u64(), s["scheduler"].as_str()),
        (Some(1), Some("shotgun")),
        "the flag wins, the rest is the file's"
    );
}

#[test]
fn print_config_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let data = problem(dir.path());
    let printed =
        strads(&["lasso", "--data", &data, "--lambda", "0.01", "--path", "5", "--out", "x", "--print-config"]);
    assert!(printed.status.success(), "{}", stderr(&printed));
    let text = String::from_utf8_lossy(&printed.stdout).into_owned();
    assert!(
        text.contains("lambda = 0.01\n") && text.contains("path = 5\n") && text.contains("scheduler = \"block\"\n"),
        "{text}"
    );
    assert!(!Path::new("x").exists(), "--print-config runs nothing");
    let file = dir.path().join("printed.toml");
    std::fs::write(&file, &text).unwrap();
    let again = strads(&["lasso", "--config", file.to_str().unwrap(), "--print-config"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(String::from_utf8_lossy(&again.stdout), text);
}

#[test]
fn unknown_keys_and_bad_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = problem(dir.path());
    let out = dir.path().join("run");
    let cases = [
        ("lambda_ratio = 0.1\nlamda = 0.2\n", "unknown key 'lamda' for `strads lasso`"),
        ("lambda_ratio = 0.1\nquiet = 3\n", "key 'quiet': expects true or false"),
        ("lambda_ratio = [0.1, 0.2]\n", "key 'lambda_ratio': a single number"),
        ("lambda_ratio = \n", "not a TOML settings file"),
    ];
    for (text, message) in cases {
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let run =
            strads(&["lasso", "--config", file.to_str().unwrap(), "--data", &data, "--out", out.to_str().unwrap()]);
        assert_eq!(run.status.code(), Some(2), "{text}");
        assert!(stderr(&run).contains(message) && stderr(&run).contains("bad.toml"), "{text}: {}", stderr(&run));
        assert!(!out.exists());
    }
    let missing = strads(&["lasso", "--config", "/nonexistent.toml", "--data", &data, "--out", out.to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("cannot read the settings file"));
}

#[test]
fn json_logs_report_every_phase_as_one_object_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = problem(dir.path());
    let out = dir.path().join("run");
    let run = strads(&[
        "lasso",
        "--data",
        &data,
        "--lambda-ratio",
        "0.05",
        "--scheduler",
        "sequential",
        "--gap-every",
        "20",
        "--log-format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let lines: Vec<serde_json::Value> =
        stderr(&run).lines().map(|l| serde_json::from_str(l).expect("every line is JSON")).collect();
    assert_eq!(lines[0]["event"], "phase");
    assert!(lines[0]["phase"].as_str().unwrap().starts_with("loading"));
    let progress: Vec<&serde_json::Value> = lines.iter().filter(|l| l["event"] == "progress").collect();
    let trace = std::fs::read_to_string(out.join("trace.csv")).unwrap();
    assert_eq!(progress.len(), trace.lines().count() - 1, "one progress line per gap check");
    for pair in progress.windows(2) {
        assert!(pair[1]["objective"].as_f64().unwrap() <= pair[0]["objective"].as_f64().unwrap() * (1.0 + 1e-12));
        assert!(pair[1]["position"].as_u64().unwrap() >= pair[0]["position"].as_u64().unwrap());
    }
    assert!(lines.iter().all(|l| l["command"] == "lasso"));
    assert_eq!(lines.last().unwrap()["event"], "done");
    let quiet = strads(&[
        "lasso",
        "--data",
        &data,
        "--lambda-ratio",
        "0.05",
        "--log-format",
        "json",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(quiet.status.success() && quiet.stderr.is_empty(), "--quiet silences the logs");
}
