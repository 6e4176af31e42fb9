//! `strads lda`, `strads lda prepare`, `strads lda infer` and `strads gen lda` as users call them.

mod common;

use common::{stderr, strads};

use std::path::Path;

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Two clearly separated themes, as plain text, one document per line (with one empty line).
fn write_text(dir: &Path) -> std::path::PathBuf {
    let mut lines = Vec::new();
    for d in 0..40 {
        if d == 7 {
            lines.push(String::new());
            continue;
        }
        let theme = if d % 2 == 0 {
            "apple banana cherry grape melon apple banana cherry"
        } else {
            "rocket engine orbit launch thrust rocket engine orbit"
        };
        lines.push(format!("The {theme} and the {theme}"));
    }
    let file = dir.join("docs.txt");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    file
}

#[test]
fn train_writes_the_model_and_infer_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = write_text(dir.path());
    let out = dir.path().join("model");
    let run = strads(&[
        "lda",
        "--data",
        path(&text),
        "--min-df",
        "2",
        "-k",
        "2",
        "--alpha",
        "0.1",
        "--iterations",
        "30",
        "--workers",
        "2",
        "--seed",
        "3",
        "--eval-every",
        "10",
        "--test",
        path(&text),
        "--dense-doc-topic",
        "--out",
        path(&out),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for key in [
        "log_likelihood_per_token",
        "tokens",
        "documents",
        "vocabulary",
        "topics",
        "iterations",
        "seconds",
        "tokens_per_second",
        "workers",
        "mode",
        "sampler",
        "model_bytes_per_worker",
        "test_perplexity",
    ] {
        assert!(summary.get(key).is_some_and(|v| !v.is_null()), "summary.json lacks {key}");
    }
    assert_eq!(summary["documents"], 39);
    // alpha is re-estimated every 10 iterations by default, from --alpha.
    assert_eq!(summary["optimize_alpha"], 10);
    assert_eq!(summary["initial_alpha"], 0.1);
    assert!(summary["alpha"].as_f64().is_some_and(|a| a > 0.0 && a != 0.1), "{}", summary["alpha"]);
    assert_eq!(summary["skipped_empty_documents"], 1);
    // The default sampler is chosen from the corpus: short documents take SparseLDA.
    assert_eq!(summary["sampler_chosen"], "auto");
    assert_eq!(summary["sampler"], "sparse");
    // The alias sampler's proposals per token are chosen from K (2 topics here).
    assert_eq!(summary["mh_steps"], 4);
    // Stop words ("the", "and") are gone: 10 content words remain.
    assert_eq!(summary["vocabulary"], 10);
    let trace = std::fs::read_to_string(out.join("trace.csv")).unwrap();
    assert!(trace.starts_with("iteration,seconds,log_likelihood_per_token,tokens_per_second,test_perplexity\n"));
    assert_eq!(trace.lines().count(), 4);
    let topics = std::fs::read_to_string(out.join("topics.txt")).unwrap();
    assert_eq!(topics.lines().count(), 2);
    // Each topic is one theme: its top 5 words are all fruit or all rocketry.
    let fruit = ["apple", "banana", "cherry", "grape", "melon"];
    for line in topics.lines() {
        let top: Vec<&str> = line.split(": ").nth(1).unwrap().split(") ").take(5).collect();
        let fruits = top.iter().filter(|w| fruit.iter().any(|f| w.starts_with(&format!("{f} (")))).count();
        assert!(fruits == 0 || fruits == 5, "{line}");
    }
    // The numpy arrays: one row per input document (40, the empty one included), K columns.
    let npy = std::fs::read(out.join("doc_topic.npy")).unwrap();
    let header = String::from_utf8_lossy(&npy[..128]);
    assert!(header.contains("'shape': (40, 2, )"), "{header}");
    let words = std::fs::read(out.join("word_topic.npy")).unwrap();
    assert!(String::from_utf8_lossy(&words[..128]).contains("'shape': (10, 2, )"));
    let sparse = std::fs::read_to_string(out.join("doc_topic.csv")).unwrap();
    assert!(sparse.starts_with("document,topic,count\n"));
    // Document ids are input positions: line 8 (position 7) was empty and never appears; 39 does.
    assert!(!sparse.lines().any(|l| l.starts_with("7,")) && sparse.lines().any(|l| l.starts_with("39,")));

    // Without --dense-doc-topic only the sparse counts are written, the same counts.
    let sparse_only = dir.path().join("sparse-only");
    let mut again: Vec<&str> = vec!["lda", "--data", path(&text), "--min-df", "2", "-k", "2", "--alpha", "0.1"];
    again.extend(["--iterations", "30", "--workers", "2", "--seed", "3", "--eval-every", "10", "--test", path(&text)]);
    again.extend(["--out", path(&sparse_only)]);
    let run = strads(&again);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(!sparse_only.join("doc_topic.npy").exists(), "a dense doc_topic.npy was written unasked");
    let zero = strads(&["lda", "--data", path(&text), "--optimize-alpha", "0", "--out", path(&dir.path().join("z"))]);
    assert!(!zero.status.success() && stderr(&zero).contains("--optimize-alpha"), "{}", stderr(&zero));
    assert_eq!(std::fs::read_to_string(sparse_only.join("doc_topic.csv")).unwrap(), sparse);

    // Inference puts a fruit document and a rocket document in different topics.
    let new = dir.path().join("new.txt");
    std::fs::write(&new, "apple banana grape unknownword\nrocket orbit thrust launch\n").unwrap();
    let inferred = dir.path().join("inferred");
    let infer = strads(&["lda", "infer", "--model", path(&out), "--data", path(&new), "--out", path(&inferred)]);
    assert!(infer.status.success(), "{}", stderr(&infer));
    let mixes = std::fs::read_to_string(inferred.join("doc_topic.csv")).unwrap();
    let top = |doc: &str| {
        mixes
            .lines()
            .skip(1)
            .filter(|l| l.starts_with(&format!("{doc},")))
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f[1].to_string(), f[2].parse::<f64>().unwrap())
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap()
    };
    let (fruit, rocket) = (top("0"), top("1"));
    assert!(fruit.1 > 0.7 && rocket.1 > 0.7 && fruit.0 != rocket.0, "{mixes}");
}

#[test]
fn a_seed_and_worker_count_give_the_same_output() {
    let dir = tempfile::tempdir().unwrap();
    let text = write_text(dir.path());
    let run = |name: &str| {
        let out = dir.path().join(name);
        let r = strads(&[
            "lda",
            "--data",
            path(&text),
            "--min-df",
            "2",
            "-k",
            "3",
            "--iterations",
            "5",
            "--workers",
            "2",
            "--sampler",
            "sparse",
            "--mode",
            "data-parallel",
            "--out",
            path(&out),
            "--quiet",
        ]);
        assert!(r.status.success(), "{}", stderr(&r));
        std::fs::read(out.join("word_topic.npy")).unwrap()
    };
    assert_eq!(run("a"), run("b"));
}

#[test]
fn prepare_then_train_and_gen_lda() {
    let dir = tempfile::tempdir().unwrap();
    let generated = dir.path().join("gen");
    let g = strads(&[
        "gen",
        "lda",
        "--out",
        path(&generated),
        "--documents",
        "200",
        "--vocabulary",
        "300",
        "--topics",
        "4",
        "--mean-length",
        "40",
    ]);
    assert!(g.status.success(), "{}", stderr(&g));
    assert!(generated.join("true_topics.csv").exists());
    let prepared = dir.path().join("prepared");
    // A prepared corpus is read as it is (no filter), and preparing it again changes nothing.
    let p = strads(&["lda", "prepare", "--data", path(&generated), "--out", path(&prepared)]);
    assert!(p.status.success(), "{}", stderr(&p));
    assert_eq!(
        std::fs::read_to_string(generated.join("corpus.ldac")).unwrap(),
        std::fs::read_to_string(prepared.join("corpus.ldac")).unwrap()
    );
    let out = dir.path().join("run");
    let t = strads(&["lda", "--data", path(&prepared), "-k", "4", "--iterations", "3", "--out", path(&out), "--quiet"]);
    assert!(t.status.success(), "{}", stderr(&t));
}

#[test]
fn bad_input_names_file_and_line_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, &[u8], Vec<&str>, &str)> = vec![
        ("bad.ldac", b"2 0:1 1:1\n2 0:1 1:0\n", vec!["--format", "ldac"], "bad.ldac:2"),
        ("neg.ldac", b"1 0:-3\n", vec!["--format", "ldac"], "neg.ldac:1"),
        ("count.ldac", b"3 0:1 1:1\n", vec!["--format", "ldac"], "count.ldac:1"),
        ("binary.txt", b"fine words here\nbad \xff\xfe bytes\n", vec![], "binary.txt:2"),
        ("docword.bad.txt", b"2\n3\nx\n1 1 1\n", vec!["--vocab", "VOCAB"], "docword.bad.txt:3"),
        ("docword.ids.txt", b"2\n3\n2\n1 1 1\n2 9 1\n", vec!["--vocab", "VOCAB"], "docword.ids.txt:5"),
        ("docword.zero.txt", b"2\n3\n2\n1 1 1\n2 2 0\n", vec!["--vocab", "VOCAB"], "docword.zero.txt:5"),
    ];
    let vocab = dir.path().join("vocab.txt");
    std::fs::write(&vocab, "a\nb\nc\n").unwrap();
    for (name, content, extra, expected) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, content).unwrap();
        let out = dir.path().join(format!("out-{name}"));
        let mut args =
            vec!["lda", "--data", path(&file), "--min-df", "1", "-k", "2", "--iterations", "2", "--out", path(&out)];
        let extra: Vec<&str> = extra.iter().map(|a| if *a == "VOCAB" { path(&vocab) } else { a }).collect();
        args.extend(extra);
        let run = strads(&args);
        assert_eq!(run.status.code(), Some(2), "{name}: {}", stderr(&run));
        assert!(stderr(&run).contains(expected), "{name}: {}", stderr(&run));
        assert!(!out.exists(), "{name}: output written");
    }
    // A missing file is named once, with the system's reason once.
    let missing = dir.path().join("missing.txt");
    let run = strads(&["lda", "--data", path(&missing), "--out", path(&dir.path().join("m"))]);
    assert_eq!(run.status.code(), Some(2));
    assert_eq!(stderr(&run).matches("missing.txt").count(), 1, "{}", stderr(&run));
    assert_eq!(stderr(&run).matches("(os error").count(), 1, "{}", stderr(&run));
    let bad_k = strads(&["lda", "--data", path(&vocab), "-k", "0", "--out", path(&dir.path().join("k"))]);
    assert_eq!(bad_k.status.code(), Some(2));
    assert!(stderr(&bad_k).contains("topics"));
}
