//! `strads lda`: corpus flags to a corpus, train on the chosen runtime, write the model; `prepare` and `infer`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use strads_corpus::{Corpus, Source, TokenizerOptions};
use strads_data::{write_atomic, write_string_atomic};
use strads_lda::{DocumentSource, LdaFit, LdaParams, Mode, SamplerKind, Sync, TracePoint};

use crate::checkpoint::{self, CheckpointArgs};
use crate::cli::{
    CorpusArgs, CorpusFormatArg, GenLdaArgs, LdaInferArgs, LdaPrepareArgs, LdaTrainArgs, ModeArg, SamplerArg, SyncArg,
};
use crate::failure::{Failure, check_memory};
use crate::lasso_cmd::check_out_dir;
use crate::progress::Progress;
use crate::runtime;

/// The tokenizer the flags describe, checked.
fn tokenizer(args: &CorpusArgs) -> Result<TokenizerOptions, Failure> {
    let mut options = TokenizerOptions {
        lowercase: !args.keep_case,
        english_stop_words: !args.keep_stop_words,
        stop_words_file: args.stop_words.clone(),
        min_df: args.min_df,
        max_df: args.max_df,
        ..TokenizerOptions::default()
    };
    if let Some(pattern) = &args.token_pattern {
        options.pattern.clone_from(pattern);
    }
    options.check().map_err(Failure::input)?;
    Ok(options)
}

/// Where the corpus at `path` comes from: the format flag, else what the path looks like.
fn source(path: &Path, args: &CorpusArgs) -> Result<Source, Failure> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_ascii_lowercase();
    let format = args.format.unwrap_or(if path.is_dir() {
        if strads_corpus::is_prepared(path) { CorpusFormatArg::Prepared } else { CorpusFormatArg::Folder }
    } else if name.starts_with("docword") {
        CorpusFormatArg::Uci
    } else if name.ends_with(".ldac") || name.ends_with(".lda-c") {
        CorpusFormatArg::Ldac
    } else if name.ends_with(".tsv") || name.ends_with(".tab") {
        CorpusFormatArg::Tsv
    } else {
        CorpusFormatArg::Lines
    });
    Ok(match format {
        CorpusFormatArg::Prepared => Source::Prepared(path.to_path_buf()),
        CorpusFormatArg::Folder => Source::Folder(path.to_path_buf()),
        CorpusFormatArg::Lines => Source::Lines(path.to_path_buf()),
        CorpusFormatArg::Tsv => {
            Source::Tsv { path: path.to_path_buf(), column: args.column.clone(), skip: args.skip_lines }
        }
        CorpusFormatArg::Ldac => Source::Ldac { path: path.to_path_buf(), vocab: args.vocab.clone() },
        CorpusFormatArg::Uci => {
            let vocab = match &args.vocab {
                Some(v) => v.clone(),
                None => {
                    let sibling = path.with_file_name(name.replacen("docword", "vocab", 1));
                    if !sibling.exists() {
                        return Err(Failure::input(format!(
                            "{}: a UCI docword file needs its vocabulary: give --vocab (looked for {})",
                            path.display(),
                            sibling.display()
                        )));
                    }
                    sibling
                }
            };
            Source::Uci { docword: path.to_path_buf(), vocab }
        }
    })
}

/// Reads a corpus through `tokenizer`, with its words mapped onto `vocabulary` when given.
fn read(
    path: &Path,
    args: &CorpusArgs,
    tokenizer: &TokenizerOptions,
    vocabulary: Option<&[String]>,
) -> Result<Corpus, Failure> {
    Ok(strads_corpus::read(&source(path, args)?, tokenizer, vocabulary)?)
}

/// Reads the training corpus: whole, or (in an MPI job, for a prepared corpus) this rank's documents
/// and the corpus without tokens (`Corpus::tokens` empty), whose counts and ids the outputs use.
fn load_corpus(
    args: &CorpusArgs,
    tok: &TokenizerOptions,
    workers: usize,
) -> Result<(Corpus, Option<Box<dyn DocumentSource>>), Failure> {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = runtime::job()
        && strads_corpus::is_prepared(&args.data)
    {
        let (shares, corpus) = strads_corpus::load_prepared_share(&*mpi, &args.data, workers)?;
        runtime::note_input_read(shares.bytes_read);
        return Ok((corpus, Some(Box::new(shares))));
    }
    let _ = workers;
    let corpus = read(&args.data, args, tok, None)?;
    runtime::note_input_file(&args.data);
    Ok((corpus, None))
}

/// `summary.json` of a training run.
#[derive(Debug, Serialize)]
struct Summary {
    log_likelihood_per_token: f64,
    test_perplexity: Option<f64>,
    tokens: u64,
    documents: usize,
    skipped_empty_documents: usize,
    vocabulary: usize,
    topics: usize,
    alpha: f64,
    /// Iterations between two re-estimations of `alpha`, if it was re-estimated.
    optimize_alpha: Option<u64>,
    /// `alpha` before the first re-estimation.
    initial_alpha: f64,
    beta: f64,
    iterations: u64,
    seconds: f64,
    loading_seconds: f64,
    tokens_per_second: f64,
    workers: usize,
    #[serde(flatten)]
    scale: runtime::Scale,
    mode: &'static str,
    sampler: &'static str,
    /// `auto` when the sampler was chosen from the corpus (`--sampler auto`), `given` otherwise.
    sampler_chosen: &'static str,
    /// Metropolis-Hastings proposals per token of the alias sampler (chosen from K unless given).
    mh_steps: usize,
    blocks: usize,
    sync: &'static str,
    seed: u64,
    model_bytes_per_worker: u64,
    test_documents: Option<usize>,
    test_unknown_tokens: Option<usize>,
    data: String,
}

fn params(args: &LdaTrainArgs) -> Result<strads_lda::CheckedParams, Failure> {
    if args.workers == 0 {
        return Err(Failure::input("--workers must be at least 1"));
    }
    let params = LdaParams {
        topics: args.topics,
        alpha: args.alpha,
        beta: args.beta,
        iterations: args.iterations,
        sampler: match args.sampler {
            SamplerArg::Auto => None,
            SamplerArg::Alias => Some(SamplerKind::Alias),
            SamplerArg::Sparse => Some(SamplerKind::Sparse),
        },
        mh_steps: crate::lasso_cmd::count_or_auto("--mh-steps", &args.mh_steps)?,
        mode: match args.mode {
            ModeArg::ModelParallel => Mode::ModelParallel,
            ModeArg::DataParallel => Mode::DataParallel,
        },
        blocks: args.blocks,
        sync: match args.sync {
            SyncArg::Subround => Sync::Subround,
            SyncArg::Iteration => Sync::Iteration,
        },
        eval_every: args.eval_every,
        test_every: args.test_every,
        fold_in_sweeps: args.fold_in_sweeps,
        seed: args.seed,
        verify: false,
        keep_assignments: false,
        optimize_alpha: crate::lasso_cmd::count_or_off("--optimize-alpha", &args.optimize_alpha)?.map(|n| n as u64),
    };
    params.check(args.workers).map_err(Failure::input)
}

impl From<strads_lda::LdaError> for Failure {
    fn from(error: strads_lda::LdaError) -> Self {
        match error {
            strads_lda::LdaError::Params(_) | strads_lda::LdaError::Data(_) => Failure::Input(error.into()),
            strads_lda::LdaError::Engine(engine) => Failure::engine(engine),
            _ => Failure::Run(error.into()),
        }
    }
}

/// `strads lda`.
pub fn train(corpus_args: &CorpusArgs, args: &LdaTrainArgs, checkpoint_args: &CheckpointArgs) -> Result<(), Failure> {
    let checked = params(args)?;
    check_out_dir(&args.out)?;
    let started = Instant::now();
    let tok = tokenizer(corpus_args)?;
    let loading = Progress::phase("lda", args.quiet, &format!("reading {}", corpus_args.data.display()));
    let (corpus, shares) = load_corpus(corpus_args, &tok, args.workers)?;
    let documents: &dyn DocumentSource = shares.as_deref().unwrap_or(&corpus);
    let tokens = documents.token_count();
    let test = match &args.test {
        Some(path) => Some(read(path, corpus_args, &tok, Some(&corpus.vocabulary))?),
        None => None,
    };
    loading.finish();
    let loading_seconds = started.elapsed().as_secs_f64();
    if let Some(limit) = crate::lasso_cmd::parse_memory(&args.max_memory)? {
        let needed = strads_lda::memory_estimate(
            tokens,
            corpus.documents(),
            corpus.vocabulary_size(),
            checked.topics,
            args.workers,
            checked.mode,
            checked.for_corpus(&documents.lengths()).sampler,
        );
        check_memory(
            needed,
            limit,
            &format!("{} documents, {} tokens and {} topics", corpus.documents(), tokens, checked.topics),
        )?;
    }
    let launcher = runtime::launcher(args.workers)?;
    let progress = Progress::counted("lda", args.quiet, checked.iterations);
    let mut observe = |p: &TracePoint| {
        let test = p.test_perplexity.map(|x| format!(", test perplexity {x:.1}")).unwrap_or_default();
        progress.update(
            p.iteration,
            format!(
                "log-likelihood/token {:.4}, {:.2}M tokens/s{test}",
                p.log_likelihood_per_token,
                p.tokens_per_second / 1e6
            ),
            &[
                ("log_likelihood_per_token", p.log_likelihood_per_token),
                ("tokens_per_second", p.tokens_per_second),
                ("test_perplexity", p.test_perplexity.unwrap_or(f64::NAN)),
            ],
        );
    };
    let mut checkpoints = checkpoint::open(checkpoint_args, "lda", || {
        let mut extra = vec![
            ("data", corpus_args.data.display().to_string()),
            ("data_contents", checkpoint::file_identity(&corpus_args.data)),
            ("documents", corpus.documents().to_string()),
            ("tokens", tokens.to_string()),
            ("vocabulary", corpus.vocabulary_size().to_string()),
        ];
        if let (Some(path), Some(test)) = (&args.test, &test) {
            extra.push(("test", path.display().to_string()));
            extra.push(("test_contents", checkpoint::file_identity(path)));
            extra.push(("test_tokens", test.token_count().to_string()));
        }
        checkpoint::fingerprint(&checked, &[], &extra)
    })?;
    let outcome =
        strads_lda::fit_checkpointed(documents, test.as_ref(), &checked, &launcher, &mut observe, &mut checkpoints);
    progress.finish();
    let scale = runtime::scale();
    let Some(fit) = outcome? else { return Ok(()) };
    let last = fit.last().copied().ok_or_else(|| Failure::Run(anyhow::anyhow!("the run made no evaluation")))?;
    let summary = Summary {
        log_likelihood_per_token: last.log_likelihood_per_token,
        test_perplexity: last.test_perplexity,
        tokens: fit.tokens,
        documents: corpus.documents(),
        skipped_empty_documents: corpus.skipped_empty,
        vocabulary: corpus.vocabulary_size(),
        topics: fit.topics,
        alpha: fit.alpha,
        optimize_alpha: checked.optimize_alpha,
        initial_alpha: checked.alpha,
        beta: fit.beta,
        iterations: fit.iterations,
        seconds: fit.seconds,
        loading_seconds,
        tokens_per_second: last.tokens_per_second,
        workers: args.workers,
        scale,
        mode: checked.mode.name(),
        sampler: fit.sampler.name(),
        sampler_chosen: if checked.auto_sampler { "auto" } else { "given" },
        mh_steps: checked.mh_steps,
        blocks: checked.blocks,
        sync: match checked.sync {
            Sync::Subround => "subround",
            Sync::Iteration => "iteration",
        },
        seed: checked.seed,
        model_bytes_per_worker: last.model_bytes_per_worker,
        test_documents: test.as_ref().map(Corpus::documents),
        test_unknown_tokens: test.as_ref().map(|t| t.dropped_unknown),
        data: corpus_args.data.display().to_string(),
    };
    let options = strads_lda::model::SaveOptions { top_words: args.top_words, dense_doc_topic: args.dense_doc_topic };
    strads_lda::model::save(&args.out, &fit, &corpus, &tok, options).map_err(|e| Failure::Run(e.into()))?;
    write_outputs(&args.out, &fit, &summary)?;
    if !args.quiet {
        let test = last.test_perplexity.map(|x| format!(", test perplexity {x:.1}")).unwrap_or_default();
        println!(
            "lda: {} topics, {} iterations in {:.2} s ({:.2}M tokens/s), log-likelihood/token {:.4}{test} -> {}",
            fit.topics,
            fit.iterations,
            fit.seconds,
            last.tokens_per_second / 1e6,
            last.log_likelihood_per_token,
            args.out.display()
        );
    }
    Ok(())
}

/// Writes `trace.csv` and `summary.json` beside the model folder.
fn write_outputs(out: &Path, fit: &LdaFit, summary: &Summary) -> Result<(), Failure> {
    let run = |e: strads_data::DataError| Failure::Run(e.into());
    write_atomic(&out.join("trace.csv"), |w| {
        let test = fit.trace.iter().any(|p| p.test_perplexity.is_some());
        writeln!(
            w,
            "iteration,seconds,log_likelihood_per_token,tokens_per_second{}",
            if test { ",test_perplexity" } else { "" }
        )?;
        for p in &fit.trace {
            write!(w, "{},{},{},{}", p.iteration, p.seconds, p.log_likelihood_per_token, p.tokens_per_second)?;
            if test {
                write!(w, ",{}", p.test_perplexity.map_or(String::new(), |x| x.to_string()))?;
            }
            writeln!(w)?;
        }
        Ok(())
    })
    .map_err(run)?;
    write_string_atomic(&out.join("summary.json"), &to_json(summary)?).map_err(run)?;
    Ok(())
}

/// A record as pretty JSON with a final newline.
pub(crate) fn to_json(value: &impl Serialize) -> Result<String, Failure> {
    serde_json::to_string_pretty(value).map(|s| s + "\n").map_err(|e| Failure::Run(e.into()))
}

/// `strads lda prepare`.
pub fn prepare(args: &LdaPrepareArgs) -> Result<(), Failure> {
    check_out_dir(&args.out)?;
    let vocabulary = match &args.vocab_from {
        Some(dir) => Some(strads_lda::model::read_vocabulary(&dir.join("vocab.txt")).map_err(Failure::input)?),
        None => None,
    };
    let tok = tokenizer(&args.corpus)?;
    let preparing = Progress::phase("lda prepare", false, &format!("reading {}", args.corpus.data.display()));
    let corpus = read(&args.corpus.data, &args.corpus, &tok, vocabulary.as_deref())?;
    preparing.finish();
    let description = vec![
        ("source".to_string(), args.corpus.data.display().to_string()),
        ("lowercase".to_string(), tok.lowercase.to_string()),
        ("token_pattern".to_string(), tok.pattern.clone()),
        ("english_stop_words".to_string(), tok.english_stop_words.to_string()),
        ("min_df".to_string(), tok.min_df.to_string()),
        ("max_df".to_string(), tok.max_df.to_string()),
    ];
    strads_corpus::save_prepared(&corpus, &args.out, &description).map_err(|e| Failure::Run(e.into()))?;
    println!(
        "prepared {} documents ({} empty skipped), {} tokens, {} words -> {}",
        corpus.documents(),
        corpus.skipped_empty,
        corpus.token_count(),
        corpus.vocabulary_size(),
        args.out.display()
    );
    Ok(())
}

/// `strads lda infer`.
pub fn infer(args: &LdaInferArgs) -> Result<(), Failure> {
    check_out_dir(&args.out)?;
    let saved = strads_lda::model::load(&args.model).map_err(|e| Failure::Input(e.into()))?;
    let mut tok_fixed = tokenizer(&args.corpus)?;
    tok_fixed.lowercase = saved.lowercase;
    tok_fixed.pattern = saved.token_pattern.clone();
    tok_fixed.english_stop_words = saved.english_stop_words;
    let source = source(&args.corpus.data, &args.corpus)?;
    let reading = Progress::phase("lda infer", false, &format!("reading {}", args.corpus.data.display()));
    let corpus = strads_corpus::read(&source, &tok_fixed, Some(&saved.vocabulary))?;
    reading.finish();
    let model = saved.model;
    let folding = Progress::phase("lda infer", false, &format!("folding in {} documents", corpus.documents()));
    let theta = strads_lda::infer(&model, &corpus, args.iterations, args.seed);
    folding.finish();
    let k = model.topics;
    let inputs = corpus.documents() + corpus.skipped_empty;
    let rows: Vec<f32> = strads_lda::model::rows_by_input(&corpus, k, |d| theta[d].clone()).collect();
    std::fs::create_dir_all(&args.out).map_err(|e| Failure::Run(anyhow::anyhow!("{}: {e}", args.out.display())))?;
    strads_data::write_npy(&args.out.join("doc_topic.npy"), inputs, k, &rows).map_err(|e| Failure::Run(e.into()))?;
    write_atomic(&args.out.join("doc_topic.csv"), |w| {
        writeln!(w, "document,topic,probability")?;
        for (d, mix) in rows.chunks(k).enumerate() {
            for (t, p) in mix.iter().enumerate().filter(|(_, p)| **p >= 0.01) {
                writeln!(w, "{d},{t},{p}")?;
            }
        }
        Ok(())
    })
    .map_err(|e| Failure::Run(e.into()))?;
    println!(
        "inferred topic mixes of {} documents ({} empty, {} unknown tokens dropped) -> {}",
        inputs,
        corpus.skipped_empty,
        corpus.dropped_unknown,
        args.out.display()
    );
    Ok(())
}

/// `strads gen lda`.
pub fn generate(args: &GenLdaArgs) -> Result<(), Failure> {
    check_out_dir(&args.out)?;
    let spec = strads_lda::generate::GeneratorSpec {
        documents: args.documents,
        vocabulary: args.vocabulary,
        topics: args.topics,
        mean_length: args.mean_length,
        alpha: args.alpha,
        beta: args.beta,
        seed: args.seed,
    };
    let generated = strads_lda::generate::generate(&spec).map_err(Failure::input)?;
    let description = vec![("generator".to_string(), format!("{spec:?}"))];
    strads_corpus::save_prepared(&generated.corpus, &args.out, &description).map_err(|e| Failure::Run(e.into()))?;
    let truth: PathBuf = args.out.join("true_topics.csv");
    write_atomic(&truth, |w| {
        writeln!(w, "topic,word,probability")?;
        for (t, phi) in generated.topics.iter().enumerate() {
            for (word, &p) in phi.iter().enumerate().filter(|(_, p)| **p >= 1e-4) {
                writeln!(w, "{t},w{word},{p}")?;
            }
        }
        Ok(())
    })
    .map_err(|e| Failure::Run(e.into()))?;
    Ok(())
}
