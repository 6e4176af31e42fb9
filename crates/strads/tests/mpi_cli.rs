//! MPI runs (feature `mpi`; OpenMPI's `mpirun`, or the launcher `STRADS_TEST_MPIEXEC` names, such
//! as MPICH's `mpiexec.mpich`): every application on 2 and 3 ranks gives the same
//! model as the embedded runtime with the same total number of workers; checkpoints taken under
//! MPI resume exactly; a rank that dies ends the job in bounded time; commands that run in one
//! process are refused under mpirun.
#![cfg(feature = "mpi")]

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use common::{stderr, strads};

const STRADS: &str = env!("CARGO_BIN_EXE_strads");

/// `mpirun -n ranks strads args`, oversubscribed (more ranks than cores) and allowed as root; or,
/// with `STRADS_TEST_MPIEXEC` set (MPICH's hydra, which oversubscribes and runs as root as it is),
/// `$STRADS_TEST_MPIEXEC -n ranks strads args`.
fn mpirun(ranks: usize, args: &[&str]) -> Command {
    if let Some(launcher) = std::env::var_os("STRADS_TEST_MPIEXEC") {
        let mut command = Command::new(launcher);
        command.args(["-n", &ranks.to_string(), STRADS]).args(args);
        return command;
    }
    let mut command = Command::new("mpirun");
    command
        .args(["--oversubscribe", "-n", &ranks.to_string(), STRADS])
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    command
}

fn run_mpi(ranks: usize, args: &[&str]) -> Output {
    mpirun(ranks, args).output().expect("mpirun runs (install openmpi-bin)")
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

fn generate(args: &[&str]) {
    let output = strads(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&read(&dir.join("summary.json"))).expect("summary.json is JSON")
}

/// Trains `args` embedded with `workers` workers and on `ranks` ranks (`threads` each), and checks
/// that the model files are byte for byte the same and the summary reports the ranks.
fn same_model(dir: &Path, name: &str, args: &[&str], model: &[&str], ranks: usize, threads: usize) {
    let workers = (ranks * threads).to_string();
    let embedded = dir.join(format!("{name}-embedded-{workers}"));
    let mut plain: Vec<&str> = args.to_vec();
    let out = path(&embedded);
    plain.extend(["--workers", &workers, "--quiet", "--out", &out]);
    let output = strads(&plain);
    assert!(output.status.success(), "{name} embedded: {}", stderr(&output));

    let ranked = dir.join(format!("{name}-mpi-{ranks}x{threads}"));
    let mut on_ranks: Vec<&str> = args.to_vec();
    let out = path(&ranked);
    let threads_flag = threads.to_string();
    on_ranks.extend(["--threads", &threads_flag, "--quiet", "--out", &out]);
    let output = run_mpi(ranks, &on_ranks);
    assert!(output.status.success(), "{name} on {ranks} ranks: {}", stderr(&output));
    for file in model {
        assert!(
            read(&embedded.join(file)) == read(&ranked.join(file)),
            "{name}: {file} differs between {workers} embedded workers and {ranks} ranks x {threads} threads"
        );
    }
    let summary = summary(&ranked);
    assert_eq!(summary["ranks"], ranks, "{name}");
    assert_eq!(summary["workers"], ranks * threads, "{name}");
    assert!(summary["peak_rss_bytes_per_rank"].as_u64().unwrap_or(0) > 0, "{name}: {summary}");
    if ranks > 1 {
        assert!(summary["bytes_sent_per_round"].as_f64().unwrap_or(0.0) > 0.0, "{name}: {summary}");
    }
    // Only rank 0 writes: no temporary file of a second writer is left behind.
    for entry in std::fs::read_dir(&ranked).expect("output folder") {
        let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "{name} left in {}", ranked.display());
    }
}

#[test]
fn lasso_and_logreg_on_ranks_equal_embedded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let svm = path(&dir.path().join("regression.svm"));
    let classes = path(&dir.path().join("classes.svm"));
    generate(&["gen", "lasso", "--out", &svm, "--rows", "600", "--features", "800"]);
    generate(&["gen", "lasso", "--classes", "--out", &classes, "--rows", "600", "--features", "500", "--seed", "3"]);
    let model = ["coefficients.csv", "model.json"];
    // Block with every working set split between the workers, so that the groups' merge runs on ranks.
    for scheduler in ["block", "dynamic", "shotgun", "cyclic"] {
        let args = [
            "lasso",
            "--data",
            &svm,
            "--lambda-ratio",
            "0.02",
            "--scheduler",
            scheduler,
            "--tol",
            "1e-9",
            "--split-min",
            "0",
        ];
        for (ranks, threads) in [(2, 1), (3, 1), (2, 2)] {
            same_model(dir.path(), &format!("lasso-{scheduler}"), &args, &model, ranks, threads);
        }
    }
    let path_args =
        ["lasso", "--data", &svm, "--lambda-ratio", "0.02", "--path", "4", "--intercept", "--pipeline-depth", "2"];
    same_model(dir.path(), "lasso-path", &path_args, &["coefficients.csv", "path_coefficients.csv"], 3, 1);
    let logreg = ["logreg", "--data", &classes, "--lambda-ratio", "0.05", "--l1-ratio", "0.7", "--split-min", "0"];
    for (ranks, threads) in [(2, 1), (3, 1)] {
        same_model(dir.path(), "logreg", &logreg, &model, ranks, threads);
    }
}

#[test]
fn lda_on_ranks_equals_embedded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let corpus = path(&dir.path().join("corpus"));
    generate(&["gen", "lda", "--out", &corpus, "--documents", "400", "--vocabulary", "600", "--topics", "8"]);
    let model = ["word_topic.npy", "doc_topic.npy", "doc_topic.csv", "topics.txt", "vocab.txt"];
    for mode in ["model-parallel", "data-parallel"] {
        let args =
            ["lda", "--data", &corpus, "--topics", "8", "--iterations", "15", "--mode", mode, "--dense-doc-topic"];
        for (ranks, threads) in [(2, 1), (3, 1), (2, 2)] {
            same_model(dir.path(), &format!("lda-{mode}"), &args, &model, ranks, threads);
        }
    }
    // A held-out corpus (read whole by every rank) gives the same perplexities.
    let args = ["lda", "--data", &corpus, "--test", &corpus, "--topics", "8", "--iterations", "6", "--test-every", "3"];
    same_model(dir.path(), "lda-test", &args, &["word_topic.npy"], 3, 1);
    let perplexity = |run: &str| summary(&dir.path().join(run))["test_perplexity"].as_f64();
    assert!(perplexity("lda-test-embedded-3").is_some());
    assert_eq!(perplexity("lda-test-embedded-3"), perplexity("lda-test-mpi-3x1"));
}

#[test]
fn mf_on_ranks_equals_embedded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ratings = dir.path().join("ratings");
    generate(&["gen", "mf", "--out", &path(&ratings), "--users", "400", "--items", "300", "--density", "0.05"]);
    let (train, test) = (path(&ratings.join("train.tsv")), path(&ratings.join("test.tsv")));
    let model = ["user_factors.npy", "item_factors.npy"];
    for algorithm in ["ccdpp", "ccd", "als"] {
        let args =
            ["mf", "--data", &train, "--test", &test, "--rank", "6", "--iterations", "4", "--algorithm", algorithm];
        for (ranks, threads) in [(2, 1), (3, 1), (2, 2)] {
            same_model(dir.path(), &format!("mf-{algorithm}"), &args, &model, ranks, threads);
        }
    }
    // Without a test set, 5% of the ratings are held out by a hash of the pair, on whichever rank
    // reads them, for early stopping and the keeping of the best iteration's factors.
    let args = ["mf", "--data", &train, "--rank", "6", "--iterations", "12", "--lambda", "0.001", "--patience", "1"];
    same_model(dir.path(), "mf-validation", &args, &model, 3, 1);
    let held = summary(&dir.path().join("mf-validation-mpi-3x1"));
    let embedded = summary(&dir.path().join("mf-validation-embedded-3"));
    assert!(held["validation_ratings"].as_u64().unwrap() > 0, "{held}");
    for key in ["validation_ratings", "best_iteration", "validation_rmse"] {
        assert_eq!(held[key], embedded[key], "{key}");
    }
    // Implicit feedback: counts, with the ranking metrics of a held-out file computed on rank 0.
    let (mut plays, mut held_out) = (String::from("user\titem\tplays\n"), String::from("user\titem\tplays\n"));
    for u in 0..120 {
        for i in 0..90 {
            if (u * 7 + i * 3) % 5 == 0 || (u % 3 == i % 3 && (u + i) % 4 == 0) {
                let line = format!("u{u}\ti{i}\t{}\n", 1 + (u + i) % 5);
                if (u + i) % 6 == 0 { held_out.push_str(&line) } else { plays.push_str(&line) }
            }
        }
    }
    let (plays_path, held_path) = (dir.path().join("plays.tsv"), dir.path().join("held.tsv"));
    std::fs::write(&plays_path, plays).expect("plays");
    std::fs::write(&held_path, held_out).expect("held-out plays");
    let (plays, held) = (path(&plays_path), path(&held_path));
    for algorithm in ["als", "ccd"] {
        let args = ["mf", "--data", &plays, "--test", &held, "--implicit", "--rank", "5", "--algorithm", algorithm];
        let name = format!("mf-implicit-{algorithm}");
        same_model(dir.path(), &name, &args, &model, 3, 1);
        let ranked = summary(&dir.path().join(format!("{name}-mpi-3x1")));
        let embedded = summary(&dir.path().join(format!("{name}-embedded-3")));
        assert!(embedded["ranking"]["users"].as_u64().unwrap() > 100, "{embedded}");
        assert_eq!(ranked["ranking"], embedded["ranking"], "{name}: every test user is scored on rank 0");
    }
}

/// SIGTERM to mpirun saves a checkpoint on rank 0 for every rank; resuming on the same number of
/// ranks gives the uninterrupted model, on another number of workers is refused.
#[test]
fn checkpoints_under_mpi_resume_exactly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let corpus = path(&dir.path().join("corpus"));
    generate(&["gen", "lda", "--out", &corpus, "--documents", "300", "--vocabulary", "500", "--topics", "5"]);
    let args = ["lda", "--data", &corpus, "--topics", "5", "--iterations", "4000", "--quiet", "--dense-doc-topic"];
    let whole = path(&dir.path().join("whole"));
    let mut plain = args.to_vec();
    plain.extend(["--workers", "2", "--out", &whole]);
    let output = strads(&plain);
    assert!(output.status.success(), "{}", stderr(&output));

    let (checkpoints, out) = (path(&dir.path().join("checkpoints")), path(&dir.path().join("resumed")));
    let mut first = args.to_vec();
    first.extend(["--out", &out, "--checkpoint-dir", &checkpoints, "--checkpoint-every", "10"]);
    let mut child = mpirun(2, &first).stderr(Stdio::piped()).spawn().expect("mpirun starts");
    // Stop it once it has saved a first checkpoint (so every rank is in the run), unless it ends first.
    let saved = Path::new(&checkpoints).join("checkpoint.strads");
    while !saved.exists() && child.try_wait().expect("wait").is_none() {
        sleep(Duration::from_millis(10));
    }
    // 4000 iterations take seconds; the first checkpoint comes after 10.
    assert!(child.try_wait().expect("wait").is_none(), "the run ended before its first checkpoint was seen");
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success());
    let output = child.wait_with_output().expect("mpirun ends");
    let text = stderr(&output);
    assert!(text.contains("checkpoint was saved"), "{text}");
    assert!(!Path::new(&out).join("word_topic.npy").exists(), "an interrupted run wrote its model");
    assert!(Path::new(&checkpoints).join("checkpoint.strads").exists());

    let mut other = args.to_vec();
    other.extend(["--out", &out, "--resume", &checkpoints]);
    let refused = run_mpi(3, &other);
    assert!(!refused.status.success(), "a resume on 3 workers of a 2-worker checkpoint ran");
    assert!(stderr(&refused).contains("would not continue the saved one"), "{}", stderr(&refused));

    let resumed = run_mpi(2, &other);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    for file in ["word_topic.npy", "doc_topic.npy"] {
        assert!(read(&Path::new(&whole).join(file)) == read(&Path::new(&out).join(file)), "{file} differs");
    }
}

/// kill -9 of one rank ends the whole job within seconds, with mpirun naming the rank.
#[test]
fn a_dead_rank_ends_the_job() {
    let dir = tempfile::tempdir().expect("temp dir");
    let corpus = path(&dir.path().join("corpus"));
    generate(&["gen", "lda", "--out", &corpus, "--documents", "300", "--vocabulary", "500", "--topics", "5"]);
    let out = path(&dir.path().join("out"));
    let args = ["lda", "--data", &corpus, "--topics", "5", "--iterations", "1000000", "--quiet", "--out", &out];
    let mut child = mpirun(3, &args).stderr(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("mpirun starts");
    // Wait until the three ranks are running, then kill the last.
    let ranks = loop {
        let found = ranks_under(child.id());
        if found.len() == 3 || child.try_wait().expect("wait").is_some() {
            break found;
        }
        sleep(Duration::from_millis(50));
    };
    assert_eq!(ranks.len(), 3, "the job did not start three ranks");
    sleep(Duration::from_millis(1500));
    let killed = Instant::now();
    let victim = ranks.iter().max().expect("a rank").to_string();
    assert!(Command::new("kill").args(["-KILL", &victim]).status().expect("kill runs").success());
    let limit = Duration::from_secs(20);
    while killed.elapsed() < limit && child.try_wait().expect("wait").is_none() {
        sleep(Duration::from_millis(50));
    }
    let ended = child.try_wait().expect("wait").is_some();
    if !ended {
        let _ = child.kill();
    }
    let output = child.wait_with_output().expect("mpirun ends");
    assert!(ended, "the job still ran {limit:?} after a rank died");
    assert!(!output.status.success());
    let text = format!("{}{}", stderr(&output), String::from_utf8_lossy(&output.stdout));
    // OpenMPI: "... exited on signal 9 (Killed)"; MPICH: "KILLED BY SIGNAL: 9 (Killed)".
    let said = text.to_lowercase().replace("signal:", "signal");
    assert!(said.contains("signal 9"), "the launcher did not say that a rank was killed: {text}");
    assert!(!Path::new(&out).join("word_topic.npy").exists());
}

/// The strads processes below `root` (OpenMPI starts them as its children, MPICH's hydra under a proxy).
fn ranks_under(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let parent_of = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next()?.split_whitespace().nth(1)?.parse::<u32>().ok())
    };
    let strads = std::fs::canonicalize(STRADS).ok();
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            // A rank is a child or a grandchild of the launcher.
            let parent = parent_of(pid);
            let below = parent == Some(root) || parent.and_then(parent_of) == Some(root);
            below && std::fs::read_link(format!("/proc/{pid}/exe")).ok() == strads
        })
        .collect()
}

#[test]
fn single_process_commands_and_bad_spreads_are_refused() {
    let output = run_mpi(2, &["demo", "--size", "tiny", "--quiet"]);
    assert!(!output.status.success(), "{:?}: {}", output.status, stderr(&output));
    assert!(stderr(&output).contains("runs in one process"), "{}", stderr(&output));

    let dir = tempfile::tempdir().expect("temp dir");
    let svm = path(&dir.path().join("d.svm"));
    generate(&["gen", "lasso", "--out", &svm, "--rows", "50", "--features", "100", "--support", "5"]);
    let out = path(&dir.path().join("out"));
    let output = run_mpi(2, &["lasso", "--data", &svm, "--lambda-ratio", "0.1", "--workers", "3", "--out", &out]);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("not a multiple of the 2 MPI ranks"), "{}", stderr(&output));
    assert!(!Path::new(&out).exists(), "a refused run wrote its folder");
}

/// Under MPI each rank reads only its byte share of a LIBSVM file (and keeps its workers' rows):
/// the most any rank read is about a third of the file on 3 ranks, against all of it embedded.
#[test]
fn ranks_read_only_their_share() {
    let dir = tempfile::tempdir().expect("temp dir");
    let svm = dir.path().join("big.svm");
    generate(&["gen", "lasso", "--out", &path(&svm), "--rows", "3000", "--features", "2000"]);
    let size = std::fs::metadata(&svm).expect("data file").len();
    for scheduler in ["shotgun", "dynamic"] {
        let out = dir.path().join(format!("share-{scheduler}"));
        let args = ["lasso", "--data", &path(&svm), "--lambda-ratio", "0.05", "--scheduler", scheduler, "--quiet"];
        let mut on_ranks = args.to_vec();
        on_ranks.extend(["--out", out.to_str().expect("utf-8 path")]);
        let output = run_mpi(3, &on_ranks);
        assert!(output.status.success(), "{}", stderr(&output));
        let read = summary(&out)["input_bytes_read_per_rank"].as_u64().expect("bytes read");
        // A third of the file, plus the search for the line starts at both ends of the share.
        assert!(read <= size / 3 + 2 * 4096 + 200, "{scheduler}: a rank read {read} of {size} bytes");
        assert!(read >= size / 4, "{scheduler}: a rank read only {read} of {size} bytes");
    }
    let out = dir.path().join("whole");
    let output = strads(&["lasso", "--data", &path(&svm), "--lambda-ratio", "0.05", "--quiet", "--out", &path(&out)]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(summary(&out)["input_bytes_read_per_rank"].as_u64(), Some(size));

    // A prepared LDA corpus is read by documents, a share per rank.
    let corpus = dir.path().join("corpus");
    generate(&["gen", "lda", "--out", &path(&corpus), "--documents", "3000", "--vocabulary", "2000", "--topics", "10"]);
    let size = std::fs::metadata(corpus.join("corpus.ldac")).expect("documents file").len();
    let out = dir.path().join("lda-shares");
    let args =
        ["lda", "--data", &path(&corpus), "--topics", "10", "--iterations", "2", "--quiet", "--out", &path(&out)];
    let output = run_mpi(3, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let read = summary(&out)["input_bytes_read_per_rank"].as_u64().expect("bytes read");
    assert!(read <= size / 3 + 2 * 4096 + 2000, "a rank read {read} of the {size} bytes of corpus.ldac");
    assert!(read >= size / 4, "a rank read only {read} of {size} bytes");
}

/// A bad line in the last rank's share is reported with its line number in the whole file.
#[test]
fn an_error_in_one_share_names_the_line_of_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let svm = dir.path().join("bad.svm");
    let mut text: String = (0..300).map(|i| format!("{} 1:{} 2:0.5\n", i % 3, i)).collect();
    text.push_str("1.0 3:abc\n");
    text.push_str("2.0 1:1\n");
    std::fs::write(&svm, text).expect("write data");
    let out = dir.path().join("out");
    let args = ["lasso", "--data", &path(&svm), "--lambda-ratio", "0.1", "--scheduler", "cyclic", "--out", &path(&out)];
    let output = run_mpi(3, &args);
    assert!(!output.status.success());
    let text = stderr(&output);
    assert!(text.contains("bad.svm:301:") && text.contains("3:abc"), "{text}");
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(!out.exists(), "a failed run wrote its folder");
}

/// A delimited rating file with a header, string ids, pairs rated twice on lines far apart (so in
/// different ranks' shares) and a test file with a cold user: read in shares, every output file is
/// the one process's; each rank reads about a third of the file.
#[test]
fn mf_ratings_in_shares_keep_ids_duplicates_and_outputs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (train, test) = (dir.path().join("train.csv"), dir.path().join("test.csv"));
    let mut text = String::from("user_id,item_id,rating\n");
    let mut lines = Vec::new();
    for k in 0..4000u64 {
        let (u, i) = ((k * 7919) % 211, (k * 104729) % 97);
        lines.push(format!("u{u},item-{i},{}", 1 + (k * 31) % 5));
    }
    // The same pairs again, near the end (another share).
    for k in 0..40u64 {
        let (u, i) = ((k * 7919) % 211, (k * 104729) % 97);
        lines.push(format!("u{u},item-{i},{}", 1 + k % 5));
    }
    text.push_str(&lines.join("\n"));
    text.push('\n');
    std::fs::write(&train, &text).expect("write ratings");
    std::fs::write(&test, "user_id,item_id,rating\nu3,item-5,4\nnewcomer,item-1,2\nu8,item-90,3\n")
        .expect("write test");
    let (train, test) = (path(&train), path(&test));
    let args = ["mf", "--data", &train, "--test", &test, "--rank", "4", "--iterations", "3", "--duplicates", "mean"];
    let files = [
        "user_factors.npy",
        "item_factors.npy",
        "user_factors.csv",
        "item_factors.csv",
        "users.txt",
        "items.txt",
        "rated.txt",
        "model.json",
    ];
    same_model(dir.path(), "mf-shares", &args, &files, 3, 1);
    let embedded = summary(&dir.path().join("mf-shares-embedded-3"));
    let ranked = summary(&dir.path().join("mf-shares-mpi-3x1"));
    for key in ["train_ratings", "test_ratings", "users", "items", "test_cold_pairs", "test_rmse"] {
        assert_eq!(embedded[key], ranked[key], "{key}");
    }
    let size = text.len() as u64;
    let read = ranked["input_bytes_read_per_rank"].as_u64().expect("bytes read");
    assert!(read <= size / 3 + 2 * 4096 + 100 && read >= size / 4, "a rank read {read} of {size} bytes");

    // Without a duplicate policy the repeated pair is refused, naming its lines, on ranks as alone.
    let out = path(&dir.path().join("refused"));
    let output = run_mpi(3, &["mf", "--data", &train, "--rank", "4", "--out", &out]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("again (first at line"), "{}", stderr(&output));
}

/// From 4 ranks on commands go by broadcast (header, inline or second broadcast, commits batched
/// with the next plan): every application still gives the one-process model.
#[test]
fn four_ranks_broadcast_and_give_the_same_models() {
    let dir = tempfile::tempdir().expect("temp dir");
    let svm = path(&dir.path().join("regression.svm"));
    generate(&["gen", "lasso", "--out", &svm, "--rows", "400", "--features", "300"]);
    let corpus = path(&dir.path().join("corpus"));
    generate(&["gen", "lda", "--out", &corpus, "--documents", "200", "--vocabulary", "300", "--topics", "5"]);
    let ratings = dir.path().join("ratings");
    generate(&["gen", "mf", "--out", &path(&ratings), "--users", "200", "--items", "150", "--density", "0.05"]);
    let lasso = ["lasso", "--data", &svm, "--lambda-ratio", "0.05", "--scheduler", "shotgun", "--path", "3"];
    same_model(dir.path(), "lasso-4", &lasso, &["coefficients.csv", "path_coefficients.csv"], 4, 1);
    let lda = ["lda", "--data", &corpus, "--topics", "5", "--iterations", "8", "--dense-doc-topic"];
    same_model(dir.path(), "lda-4", &lda, &["word_topic.npy", "doc_topic.npy"], 4, 1);
    let train = path(&ratings.join("train.tsv"));
    let mf = ["mf", "--data", &train, "--rank", "5", "--iterations", "3"];
    same_model(dir.path(), "mf-4", &mf, &["user_factors.npy", "item_factors.npy"], 4, 1);
}
