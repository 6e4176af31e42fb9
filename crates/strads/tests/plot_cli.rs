//! `strads plot`: valid PNG and SVG files with one curve per run, labels from the summaries, clear errors.

mod common;

use common::{stderr, strads};

use std::path::Path;

/// Text elements of an SVG document whose content is `label`.
fn texts(svg: &str, label: &str) -> usize {
    svg.split("<text")
        .skip(1)
        .filter_map(|element| element.split_once('>').and_then(|(_, rest)| rest.split_once("</text>")))
        .filter(|(content, _)| content.trim() == label)
        .count()
}

/// Width and height from a PNG's header, after checking its signature and its last chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    assert_eq!(&bytes[bytes.len() - 8..bytes.len() - 4], b"IEND", "the file ends with IEND");
    let word = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn lasso_runs_overlay_with_labels_from_their_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.svm");
    assert!(
        strads(&["gen", "lasso", "--out", data.to_str().unwrap(), "--rows", "200", "--features", "100"])
            .status
            .success()
    );
    let mut runs = Vec::new();
    for (scheduler, workers) in [("dynamic", "1"), ("shotgun", "2"), ("cyclic", "2")] {
        let out = dir.path().join(scheduler);
        let run = strads(&[
            "lasso",
            "--data",
            data.to_str().unwrap(),
            "--lambda-ratio",
            "0.05",
            "--scheduler",
            scheduler,
            "--workers",
            workers,
            "--gap-every",
            "5",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        runs.push(out.to_str().unwrap().to_string());
    }
    let svg = dir.path().join("gap.svg");
    let mut args = vec!["plot"];
    args.extend(runs.iter().map(String::as_str));
    args.extend(["-o", svg.to_str().unwrap()]);
    let plot = strads(&args);
    assert!(plot.status.success(), "{}", stderr(&plot));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    // One legend entry per run in each of the two panels (seconds, rounds).
    for label in ["strads lasso dynamic P=1", "strads lasso shotgun P=2", "strads lasso cyclic P=2"] {
        assert_eq!(texts(&text, label), 2, "{label}");
    }
    assert_eq!(texts(&text, "duality_gap"), 2, "the y axis of each panel");
    assert!(texts(&text, "1e-4") >= 1, "a log axis for the gap");

    let png = dir.path().join("gap.png");
    let plot =
        strads(&["plot", &runs[0], &runs[1], "-o", png.to_str().unwrap(), "--y", "objective", "--labels", "a,b"]);
    assert!(plot.status.success(), "{}", stderr(&plot));
    assert_eq!(png_size(&std::fs::read(&png).unwrap()), (1200, 480));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary file is left");
}

#[test]
fn lda_and_mf_traces_pick_their_own_column() {
    let dir = tempfile::tempdir().unwrap();
    let lda = dir.path().join("lda");
    write(
        &lda.join("trace.csv"),
        "iteration,seconds,log_likelihood_per_token,tokens_per_second\n0,0,-9.1,0\n1,0.5,-8.2,1000\n2,1.0,-8.0,1000\n",
    );
    write(&lda.join("summary.json"), r#"{"mode": "model-parallel", "sampler": "alias", "workers": 2}"#);
    let svg = dir.path().join("lda.svg");
    let plot = strads(&["plot", lda.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
    assert!(plot.status.success(), "{}", stderr(&plot));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(texts(&text, "strads lda model-parallel alias P=2"), 2);
    assert_eq!(texts(&text, "log_likelihood_per_token"), 2);

    // A peer's trace (no summary): labelled by its folder; test RMSE chosen over the objective.
    let mf = dir.path().join("mf").join("trace.csv");
    write(&mf, "iteration,seconds,objective,train_rmse,test_rmse\n0,0,100,1.2,1.3\n1,0.1,50,0.9,1.0\n");
    let peer = dir.path().join("libmf").join("trace.csv");
    write(&peer, "iteration,seconds,objective,train_rmse,test_rmse\n1,0.2,60,0.95,1.05\n2,0.3,55,0.9,0.99\n");
    write(&dir.path().join("mf").join("summary.json"), r#"{"algorithm": "ccdpp", "workers": 1}"#);
    let svg = dir.path().join("mf.svg");
    let plot = strads(&["plot", mf.to_str().unwrap(), peer.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
    assert!(plot.status.success(), "{}", stderr(&plot));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(texts(&text, "strads mf ccdpp P=1"), 2);
    assert_eq!(texts(&text, "libmf"), 2);
    assert_eq!(texts(&text, "test_rmse"), 2);
}

#[test]
fn bad_plot_requests_fail_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("run").join("trace.csv");
    write(&trace, "round,seconds,objective\n1,0.1,5\n2,0.2,4\n");
    let out = dir.path().join("p.svg");
    let (t, o) = (trace.to_str().unwrap(), out.to_str().unwrap());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["plot", t, "-o", o, "--y", "perplexity"], "no column 'perplexity'"),
        (vec!["plot", t, "-o", "p.jpg"], "must end in .png or .svg"),
        (vec!["plot", "/nonexistent/run", "-o", o], "cannot read the trace"),
        (vec!["plot", t, "-o", o, "--labels", "a,b"], "2 labels for 1 runs"),
    ];
    for (args, message) in cases {
        let run = strads(&args);
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        assert!(stderr(&run).contains(message), "{args:?}: {}", stderr(&run));
    }
    let broken = dir.path().join("broken.csv");
    write(&broken, "round,seconds,objective\n1,0.1,5\n2,zero,4\n");
    let run = strads(&["plot", broken.to_str().unwrap(), "-o", o]);
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr(&run).contains("broken.csv:3: seconds is not a number"), "{}", stderr(&run));
    assert!(!out.exists(), "nothing written after a refusal");
}

#[test]
fn the_demo_trains_every_application_and_writes_what_it_says() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let run = strads(&["demo", "--size", "tiny", "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    let printed = String::from_utf8_lossy(&run.stdout).into_owned();
    for heading in ["Lasso on a generated problem", "LDA on a corpus", "Matrix factorization of a rank-8 matrix"] {
        assert!(printed.contains(heading), "{heading}: {printed}");
    }
    assert!(printed.contains(&format!("Runs written to {}/", out.display())));
    // The LDA part says how each parallel mode compares with the sequential sampler.
    assert!(printed.contains("Against the sequential sampler (higher is better)"), "{printed}");
    for run in [
        "dynamic",
        "shotgun",
        "cyclic",
        "sequential",
        "lda-sequential-seed1",
        "lda-model-parallel-seed1",
        "lda-data-parallel-seed1",
        "mf-ccdpp",
        "mf-als",
    ] {
        for file in ["summary.json", "trace.csv"] {
            assert!(out.join(run).join(file).is_file(), "{run}/{file}");
        }
    }
    for image in ["lasso.png", "lda.png", "mf.png"] {
        assert_eq!(png_size(&std::fs::read(out.join(image)).unwrap()), (1200, 480), "{image}");
    }
    // The MF runs reach near the generator's noise level (0.5) on held-out ratings.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("mf-ccdpp").join("summary.json")).unwrap()).unwrap();
    let rmse = summary["test_rmse"].as_f64().unwrap();
    assert!(rmse < 0.8, "test RMSE {rmse}");
}
