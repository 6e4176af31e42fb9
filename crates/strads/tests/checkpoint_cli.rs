//! Runs that survive: kill -9 at random moments and resume, SIGINT and SIGTERM, damaged checkpoints
//! and resumes that would change the result, for every application.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use common::{stderr, strads};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// One application's training command and the files that hold its model.
struct App {
    name: &'static str,
    args: Vec<String>,
    model: &'static [&'static str],
    /// Rounds (lasso, logreg) or iterations (lda, mf) between checkpoints in the kill test.
    every: &'static str,
}

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// Writes the data of every application into `dir` and returns their commands (two workers each).
fn apps(dir: &Path) -> Vec<App> {
    let svm = path(&dir.join("regression.svm"));
    let classes = path(&dir.join("classes.svm"));
    let corpus = dir.join("corpus");
    let ratings = dir.join("ratings");
    let gens: [&[&str]; 4] = [
        &["gen", "lasso", "--out", &svm, "--rows", "2000", "--features", "3000"],
        &["gen", "lasso", "--classes", "--out", &classes, "--rows", "2000", "--features", "2000", "--seed", "3"],
        &["gen", "lda", "--out", &path(&corpus), "--documents", "1500", "--vocabulary", "1500", "--topics", "20"],
        &["gen", "mf", "--out", &path(&ratings), "--users", "2000", "--items", "1000", "--density", "0.05"],
    ];
    for args in gens {
        let output = strads(args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    }
    let every = ["--workers", "2", "--quiet"];
    let app = |name, specific: &[&str], model, checkpoint_every| {
        let mut args = owned(specific);
        args.extend(owned(&every));
        App { name, args, model, every: checkpoint_every }
    };
    vec![
        app(
            "lasso",
            &["lasso", "--data", &svm, "--lambda-ratio", "0.01", "--tol", "1e-10"],
            &["coefficients.csv", "model.json"],
            "3",
        ),
        app(
            "logreg",
            &["logreg", "--data", &classes, "--lambda-ratio", "0.02", "--tol", "1e-9", "--path", "4"],
            &["coefficients.csv", "model.json", "path_coefficients.csv"],
            "1000",
        ),
        app(
            "lda",
            &[
                "lda",
                "--data",
                &path(&corpus.join("corpus.ldac")),
                "--vocab",
                &path(&corpus.join("vocab.txt")),
                "--topics",
                "20",
                "--iterations",
                "40",
                "--dense-doc-topic",
            ],
            &["word_topic.npy", "doc_topic.npy", "topics.txt", "model.json"],
            "1",
        ),
        app(
            "mf",
            &[
                "mf",
                "--data",
                &path(&ratings.join("train.tsv")),
                "--test",
                &path(&ratings.join("test.tsv")),
                "--rank",
                "10",
                "--iterations",
                "40",
            ],
            &["user_factors.npy", "item_factors.npy", "model.json"],
            "1",
        ),
    ]
}

fn command(app: &App, extra: &[String]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_strads"));
    command.args(&app.args).args(extra).stdout(Stdio::null()).stderr(Stdio::piped());
    command
}

/// The arguments of a checkpointed run: resume when a checkpoint exists, else start one.
fn checkpointed(out: &Path, checkpoints: &Path, every: &str) -> Vec<String> {
    let mut args = owned(&["--out", &path(out), "--checkpoint-every", every]);
    let flag = if checkpoints.join("checkpoint.strads").exists() { "--resume" } else { "--checkpoint-dir" };
    args.extend(owned(&[flag, &path(checkpoints)]));
    args
}

fn assert_same_model(app: &App, reference: &Path, out: &Path, context: &str) {
    for file in app.model {
        let (a, b) = (std::fs::read(reference.join(file)).unwrap(), std::fs::read(out.join(file)).unwrap());
        assert!(a == b, "{} {context}: {file} differs from the uninterrupted run", app.name);
    }
}

fn reference(app: &App, dir: &Path) -> PathBuf {
    let out = dir.join(format!("{}-reference", app.name));
    let output = command(app, &owned(&["--out", &path(&out)])).output().unwrap();
    assert!(output.status.success(), "{}: {}", app.name, stderr(&output));
    out
}

/// Kills runs of `app` with SIGKILL at random moments, resuming each time from the last checkpoint,
/// until `kills` runs were killed; then lets one finish. Returns the kills made.
fn kill_and_resume(app: &App, dir: &Path, kills: usize, seed: u64) -> usize {
    let reference = reference(app, dir);
    let (out, checkpoints) = (dir.join(format!("{}-out", app.name)), dir.join(format!("{}-ck", app.name)));
    // How long a whole checkpointed run takes: kills land anywhere inside it.
    let started = Instant::now();
    let output = command(app, &checkpointed(&out, &checkpoints, app.every)).output().unwrap();
    assert!(output.status.success(), "{}: {}", app.name, stderr(&output));
    let mut whole = started.elapsed().as_secs_f64();
    assert_same_model(app, &reference, &out, "with checkpoints");
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_dir_all(&checkpoints).unwrap();

    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut killed = 0;
    let mut finished_early = 0;
    while killed < kills {
        let mut child = command(app, &checkpointed(&out, &checkpoints, app.every)).spawn().unwrap();
        let delay = Duration::from_secs_f64(rng.random_range(0.02..whole.max(0.05) * 0.6));
        let spawned = Instant::now();
        // Wait for the kill moment, or for the run to end first (a resumed run is shorter).
        let mut ended = child.try_wait().unwrap();
        while ended.is_none() && spawned.elapsed() < delay {
            sleep(Duration::from_millis(5));
            ended = child.try_wait().unwrap();
        }
        if let Some(status) = ended {
            // It finished before the kill: check it, and start over.
            let output = child.wait_with_output().unwrap();
            assert!(status.success(), "{} (resumed): {}", app.name, stderr(&output));
            assert_same_model(app, &reference, &out, "finished between kills");
            std::fs::remove_dir_all(&out).unwrap();
            std::fs::remove_dir_all(&checkpoints).unwrap();
            finished_early += 1;
            assert!(finished_early < 50, "{}: runs keep finishing before the kill", app.name);
            // The machine may have been busier when the whole run was timed: kill sooner.
            whole *= 0.5;
            continue;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        killed += 1;
        if out.exists() {
            // Killed after training, while writing its outputs (each file is whole, the folder is
            // not): the resumed run writes them again.
            std::fs::remove_dir_all(&out).unwrap();
        }
    }
    let output = command(app, &checkpointed(&out, &checkpoints, app.every)).output().unwrap();
    assert!(output.status.success(), "{} (last resume): {}", app.name, stderr(&output));
    assert_same_model(app, &reference, &out, &format!("after {killed} kills"));
    eprintln!("{}: {killed} runs killed and resumed, {finished_early} finished before their kill", app.name);
    killed
}

#[test]
fn runs_killed_at_random_moments_and_resumed_end_with_the_uninterrupted_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut total = 0;
    for (i, app) in apps(dir.path()).iter().enumerate() {
        total += kill_and_resume(app, dir.path(), 6, 11 + i as u64);
    }
    assert!(total >= 20, "{total} kills");
}

#[test]
fn sigint_and_sigterm_save_a_checkpoint_and_exit_with_code_3() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    for (app, signal) in apps.iter().zip(["INT", "TERM", "TERM", "INT"]) {
        let reference = reference(app, dir.path());
        let (out, checkpoints) =
            (dir.path().join(format!("{}-out", app.name)), dir.path().join(format!("{}-ck", app.name)));
        // Checkpoints are due only every million rounds or iterations: the signal writes the one there is.
        let child = command(app, &checkpointed(&out, &checkpoints, "1000000")).spawn().unwrap();
        let started = Instant::now();
        // The folder exists once training starts (after loading): signal then.
        while !checkpoints.exists() && started.elapsed() < Duration::from_secs(60) {
            sleep(Duration::from_millis(2));
        }
        sleep(Duration::from_millis(20));
        let sent = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let output = child.wait_with_output().unwrap();
        let message = stderr(&output);
        if output.status.code() == Some(0) {
            // The run ended before the signal arrived; nothing to check for this one.
            eprintln!("{}: finished before SIG{signal}", app.name);
            continue;
        }
        assert_eq!(output.status.code(), Some(3), "{} SIG{signal}: {message}", app.name);
        assert!(message.contains(&format!("SIG{signal}")) && message.contains("--resume"), "{message}");
        assert!(checkpoints.join("checkpoint.strads").exists(), "{}: no checkpoint", app.name);
        assert!(!out.exists(), "{}: an interrupted run wrote its outputs", app.name);
        let output = command(app, &checkpointed(&out, &checkpoints, "1000000")).output().unwrap();
        assert!(output.status.success(), "{}: {}", app.name, stderr(&output));
        assert_same_model(app, &reference, &out, &format!("after SIG{signal}"));
    }
}

#[test]
fn damaged_checkpoints_and_changed_settings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let lasso = &apps[0];
    let checkpoints = dir.path().join("ck");
    let out = dir.path().join("out");
    let output = command(lasso, &checkpointed(&out, &checkpoints, "3")).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let file = checkpoints.join("checkpoint.strads");
    let good = std::fs::read(&file).unwrap();
    let resume = |app: &App, extra: &[&str]| {
        let mut args = owned(&["--out", &path(&dir.path().join("resumed")), "--resume", &path(&checkpoints)]);
        args.extend(owned(extra));
        command(app, &args).output().unwrap()
    };
    let refused = |output: std::process::Output, expected: &str| {
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{message}");
        assert!(message.contains("checkpoint.strads") && message.contains(expected), "{message}");
        assert!(!dir.path().join("resumed").exists());
    };

    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    std::fs::write(&file, &flipped).unwrap();
    refused(resume(lasso, &[]), "checksum");

    std::fs::write(&file, &good[..good.len() - 100]).unwrap();
    refused(resume(lasso, &[]), "truncated");
    std::fs::write(&file, &good[..10]).unwrap();
    refused(resume(lasso, &[]), "not a strads checkpoint");
    std::fs::write(&file, b"").unwrap();
    refused(resume(lasso, &[]), "not a strads checkpoint");

    std::fs::write(&file, &good).unwrap();
    let mut changed = App { args: lasso.args.clone(), ..*lasso };
    let at = changed.args.iter().position(|a| a == "--lambda-ratio").unwrap();
    changed.args[at + 1] = "0.02".into();
    refused(resume(&changed, &[]), "lambda");
    refused(resume(lasso, &["--seed", "9"]), "seed");
    refused(resume(&apps[1], &[]), "strads lasso");
    let mut more_workers = App { args: lasso.args.clone(), ..*lasso };
    let at = more_workers.args.iter().position(|a| a == "--workers").unwrap();
    more_workers.args[at + 1] = "3".into();
    refused(resume(&more_workers, &[]), "workers");
    let output = resume(lasso, &["--checkpoint-every", "0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("at least 1"), "{}", stderr(&output));

    // The intact checkpoint still resumes to the same model.
    let output = resume(lasso, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_same_model(lasso, &out, &dir.path().join("resumed"), "resumed from the last checkpoint");
}
