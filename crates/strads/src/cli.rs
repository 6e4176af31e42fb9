//! The command line as typed: raw flags only. Turning them into checked settings happens elsewhere.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use crate::checkpoint::CheckpointArgs;

/// Scheduled model-parallel machine learning: schedule, push, pull.
#[derive(Debug, Parser)]
#[command(name = "strads", version, about, long_about = None, max_term_width = 110, args_override_self = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Read settings from a TOML file whose keys are the subcommand's flags (`lambda-ratio = 0.01` or
    /// `lambda_ratio = 0.01`); flags given on the command line override it.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// In an MPI job (`mpirun -n R strads ...`): worker threads per rank, so `--workers` is R x T
    /// [default: --workers / R, or 1].
    #[arg(long, global = true, value_name = "T")]
    pub threads: Option<usize>,
    /// Print the effective settings (file, flags and defaults) as TOML, and do nothing else.
    #[arg(long, global = true)]
    pub print_config: bool,
    /// Progress as text on a terminal, or as JSON lines on standard error (for batch systems).
    #[arg(long, global = true, value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// How progress is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// A bar or spinner, on a terminal only.
    Text,
    /// One JSON object per line on standard error.
    Json,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Train a Lasso or elastic-net model by scheduled coordinate descent.
    Lasso(Box<LassoArgs>),
    /// Train a sparse logistic regression (L1 or elastic net) by scheduled coordinate descent.
    Logreg(Box<LogregArgs>),
    /// Predict with a Lasso or logistic model saved by `strads lasso` or `strads logreg`.
    Predict(PredictArgs),
    /// Train an LDA topic model by model-parallel collapsed Gibbs sampling (or prepare a corpus, or infer).
    Lda(Box<LdaArgs>),
    /// Factorize a rating matrix by scheduled coordinate descent (or predict, or recommend).
    Mf(Box<MfArgs>),
    /// Write a synthetic problem with a known answer.
    #[command(subcommand)]
    Gen(GenCommand),
    /// Generate a small problem, train it with STRADS scheduling and the baselines, and compare.
    Demo(DemoArgs),
    /// Plot convergence curves of runs (or trace.csv files) as PNG or SVG, several runs overlaid.
    Plot(PlotArgs),
}

/// Synthetic problems.
#[derive(Debug, Subcommand)]
pub enum GenCommand {
    /// A sparse regression (or, with --classes, classification) problem with block-correlated features, in LIBSVM format.
    Lasso(GenLassoArgs),
    /// A corpus drawn from a known LDA model, as a prepared corpus with its true topics.
    Lda(GenLdaArgs),
    /// Ratings from a known low-rank matrix plus noise, sampled sparsely.
    Mf(GenMfArgs),
}

/// Input data options shared by the training commands.
#[derive(Debug, Args)]
pub struct DataArgs {
    /// Training data: LIBSVM, MatrixMarket (with --labels) or CSV.
    #[arg(long, value_name = "PATH")]
    pub data: PathBuf,
    /// Input format [default: from the file name, else from its content].
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Labels for a MatrixMarket feature matrix: a MatrixMarket vector or one number per line.
    #[arg(long, value_name = "PATH")]
    pub labels: Option<PathBuf>,
    /// Numbering of LIBSVM feature indices: auto reads a file with an index 0 as 0-based.
    #[arg(long, value_enum, default_value = "auto")]
    pub index_base: IndexBaseArg,
    /// Whether a CSV file starts with a header line.
    #[arg(long, value_enum, default_value = "auto")]
    pub header: HeaderArg,
    /// CSV label column, by 0-based position or header name [default: a column named y, label,
    /// target or class, else the first].
    #[arg(long, value_name = "COLUMN")]
    pub label_column: Option<String>,
}

/// `strads lasso`.
#[derive(Debug, Args)]
pub struct LassoArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// The penalty weight lambda of loss + lambda (l1_ratio ||beta||_1 + (1 - l1_ratio) ||beta||^2 / 2),
    /// the loss being 1/(2n) ||y - X beta||^2 (lasso) or (1/n) sum log(1 + exp(-y_i x_i . beta)) (logreg).
    #[arg(
        long,
        value_name = "L",
        required_unless_present = "lambda_ratio",
        conflicts_with = "lambda_ratio",
        allow_negative_numbers = true
    )]
    pub lambda: Option<f64>,
    /// lambda as a fraction of lambda_max, the smallest lambda giving an all-zero model
    /// (||X^T y||_inf / (n l1_ratio) for the lasso), in (0, 1]; the end of a path.
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    pub lambda_ratio: Option<f64>,
    /// The share of the L1 term in the penalty (scikit-learn's l1_ratio): 1 is the lasso, below 1
    /// the elastic net, in (0, 1].
    #[arg(long, value_name = "R", default_value_t = 1.0, allow_negative_numbers = true)]
    pub l1_ratio: f64,
    /// A test set in the training data's format: summary.json gets its metrics (and path.csv one per lambda).
    #[arg(long, value_name = "PATH")]
    pub test: Option<PathBuf>,
    /// Pick lambda by K-fold cross-validation over a path (--path, 20 values by default): writes
    /// cv.csv, and the model at the lambda with the least mean held-out loss.
    #[arg(long, value_name = "K")]
    pub cv: Option<usize>,
    /// Fit an unpenalized intercept.
    #[arg(long)]
    pub intercept: bool,
    /// Constrain every coefficient to be >= 0.
    #[arg(long)]
    pub positive: bool,
    /// Which coordinates each round updates.
    #[arg(long, value_enum, default_value = "block")]
    pub scheduler: SchedulerArg,
    /// Worker threads, each owning a shard of the rows.
    #[arg(long, value_name = "P", default_value_t = 1)]
    pub workers: usize,
    /// Coordinates updated in parallel per round, L [default: 1; shotgun and cyclic: P; unused by block].
    #[arg(long, value_name = "L")]
    pub set_size: Option<usize>,
    /// Candidates sampled before the dependency check, L' >= L [default: 2 L].
    #[arg(long, value_name = "N")]
    pub candidates: Option<usize>,
    /// Dependency threshold: keep a candidate only if |corr| with every kept one is below it, in (0, 1].
    #[arg(long, value_name = "RHO", default_value_t = 0.1, allow_negative_numbers = true)]
    pub rho: f64,
    /// Order in which the dependency check considers candidates: as drawn (random, biased to high
    /// priority) or strictly by priority.
    #[arg(long, value_enum, default_value = "drawn")]
    pub candidate_order: CandidateOrderArg,
    /// Priority of a coordinate: abs = |delta| + b (b = base x mean nonzero |beta|), square = delta^2 + eta.
    #[arg(long, value_enum, default_value = "abs")]
    pub priority: PriorityArg,
    /// The base fraction b of the abs priority.
    #[arg(long, value_name = "B", default_value_t = 0.01, allow_negative_numbers = true)]
    pub priority_base: f64,
    /// The base eta of the square priority.
    #[arg(long, value_name = "ETA", default_value = "1e-6", allow_negative_numbers = true)]
    pub eta: f64,
    /// Rounds of uniform sampling before priorities are used [default: ceil(3 p / L)].
    #[arg(long, value_name = "N")]
    pub warmup_rounds: Option<u64>,
    /// Gap-safe screening: coordinates proven zero at the optimum leave the schedule [default: on
    /// for dynamic, off for the baselines].
    #[arg(long, value_enum)]
    pub screening: Option<Switch>,
    /// Working sets: until each gap check, only the coordinates closest to their optimality bound
    /// (at least N, and twice the nonzeros) are scheduled; off schedules every coordinate [default:
    /// 100 for block and dynamic, off for the baselines].
    #[arg(long, value_name = "N|off")]
    pub working_set: Option<String>,
    /// Anderson extrapolation of the iterates over K passes of the working set (or of every
    /// coordinate), kept only when it lowers the objective; block extrapolates each round's passes
    /// [default: 5 for block, off otherwise].
    #[arg(long, value_name = "K|off")]
    pub anderson: Option<String>,
    /// Block: a working set whose pass visits fewer nonzeros is solved by one worker; 0 always
    /// splits it between the workers [default: never: one worker solves each working set, the
    /// others share the gap checks].
    #[arg(long, value_name = "N")]
    pub split_min: Option<u64>,
    /// Stop when the relative duality gap is at most this.
    #[arg(long, value_name = "T", default_value = "1e-6", allow_negative_numbers = true)]
    pub tol: f64,
    /// Also stop when no coefficient moved more than this times the largest between two gap checks.
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    pub coef_tol: Option<f64>,
    /// Solve a regularization path of N lambda values, geometric from lambda_max down to the given
    /// lambda, each warm-started from the previous solution; writes path.csv and
    /// path_coefficients.csv [default: one lambda].
    #[arg(long, value_name = "N")]
    pub path: Option<usize>,
    /// Stop after this many update rounds [default: no limit].
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u64>,
    /// Stop after this many seconds of training [default: no limit].
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    pub max_seconds: Option<f64>,
    /// Update rounds between duality-gap checks, or auto (after coordinate work of twice what a check costs).
    #[arg(long, value_name = "N|auto", default_value = "auto")]
    pub gap_every: String,
    /// Rounds scheduled and pushed ahead of the pull (bounded staleness); 0 is synchronous.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub pipeline_depth: usize,
    /// Refuse a run whose estimated memory exceeds this: bytes, or with K, M, G, T (powers of 1000),
    /// or off; auto is 80% of the machine's memory.
    #[arg(long, value_name = "SIZE|auto|off", default_value = "auto")]
    pub max_memory: String,
    /// Seed of the scheduler's sampling.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Folder for summary.json, trace.csv, coefficients.csv and model.json (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Print nothing (no progress, no final line).
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub checkpoints: CheckpointArgs,
}

/// `strads logreg`: the lasso's flags, with labels -1/1 or 0/1, and the choice of coordinate step.
#[derive(Debug, Args)]
pub struct LogregArgs {
    #[command(flatten)]
    pub model: LassoArgs,
    /// Coordinate step: newton (exact curvature, kept short enough to descend) or bound (the
    /// curvature bound ||x_j||^2 / 4, STRADS' update).
    #[arg(long, value_enum, default_value = "newton")]
    pub update: UpdateArg,
}

/// The logistic coordinate step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UpdateArg {
    /// A Newton step with the exact curvature.
    Newton,
    /// The curvature bound (STRADS' update).
    Bound,
}

/// `strads predict`.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// A folder written by `strads lasso` or `strads logreg` (its model.json).
    #[arg(long, value_name = "DIR")]
    pub model: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
    /// Where to write the predictions as CSV [default: standard output].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `strads plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Run folders (with trace.csv and summary.json) or trace.csv files; each is one curve.
    #[arg(required = true, value_name = "RUN_OR_TRACE")]
    pub runs: Vec<PathBuf>,
    /// The image to write: .png or .svg.
    #[arg(short, long, value_name = "FILE")]
    pub out: PathBuf,
    /// The trace column to plot [default: duality_gap, log_likelihood_per_token, test_rmse or
    /// objective, the first every trace has].
    #[arg(long, value_name = "COLUMN")]
    pub y: Option<String>,
    /// Legend labels, one per run, comma-separated [default: from each run's summary.json].
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    pub labels: Option<Vec<String>>,
    /// Logarithmic y axis: auto uses it for the duality gap and for positive values spanning over
    /// two orders of magnitude.
    #[arg(long, value_enum, default_value = "auto")]
    pub log_y: LogScale,
    /// A title above the panels [default: the column's name].
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
}

/// When to use a logarithmic axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogScale {
    /// Where it helps.
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

/// `strads gen lasso`.
#[derive(Debug, Args)]
pub struct GenLassoArgs {
    /// The LIBSVM file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Where to write the true coefficients as index,value lines [default: none].
    #[arg(long, value_name = "FILE")]
    pub truth: Option<PathBuf>,
    /// Samples.
    #[arg(long, default_value_t = 1000)]
    pub rows: usize,
    /// Features.
    #[arg(long, default_value_t = 2000)]
    pub features: usize,
    /// Features per correlated block.
    #[arg(long, default_value_t = 10)]
    pub block: usize,
    /// Correlation between two features of one block, in [0, 1).
    #[arg(long, default_value_t = 0.8, allow_negative_numbers = true)]
    pub correlation: f64,
    /// Probability that a block is present in a row, in (0, 1].
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    pub density: f64,
    /// Nonzero true coefficients.
    #[arg(long, default_value_t = 50)]
    pub support: usize,
    /// Standard deviation of the label noise.
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    pub noise: f64,
    /// Classes for `strads logreg` instead: label 1 with probability sigma(x . beta), else -1 (no noise added).
    #[arg(long)]
    pub classes: bool,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// `strads demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for the runs.
    #[arg(long, value_name = "DIR", default_value = "strads-demo")]
    pub out: PathBuf,
    /// Problem size: tiny runs in seconds even in a debug build, small in about half a minute, medium in a few minutes.
    #[arg(long, value_enum, default_value = "small")]
    pub size: DemoSize,
    /// Worker threads.
    #[arg(long, value_name = "P", default_value_t = 2)]
    pub workers: usize,
    /// Print nothing but the comparison.
    #[arg(long)]
    pub quiet: bool,
}

/// Input formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// LIBSVM / svmlight text.
    Libsvm,
    /// MatrixMarket matrix (labels in --labels).
    Mm,
    /// Dense CSV or TSV with a label column.
    Csv,
}

/// LIBSVM index numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum IndexBaseArg {
    /// 0-based if index 0 appears, else 1-based.
    Auto,
    /// 0-based.
    #[value(name = "0")]
    Zero,
    /// 1-based.
    #[value(name = "1")]
    One,
}

/// CSV header presence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HeaderArg {
    /// A header if the first line has a field that is not a number.
    Auto,
    /// The first line is a header.
    Yes,
    /// No header.
    No,
}

/// Lasso schedulers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SchedulerArg {
    /// Each worker solves a group of correlated coordinates of the working set per round.
    Block,
    /// STRADS: priority sampling and the correlation check.
    Dynamic,
    /// L coordinates uniformly at random, no check.
    Shotgun,
    /// Round-robin blocks of L coordinates.
    Cyclic,
    /// One coordinate at a time, in order.
    Sequential,
}

/// Candidate order of the dependency check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CandidateOrderArg {
    /// As drawn.
    Drawn,
    /// Highest priority first.
    Priority,
}

/// Priority rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PriorityArg {
    /// |delta| + b.
    Abs,
    /// delta^2 + eta.
    Square,
}

/// On or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

/// Demo sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DemoSize {
    /// A few seconds in all, even in a debug build (for tests).
    Tiny,
    /// About a second of training per run.
    Small,
    /// About ten seconds per run.
    Medium,
}

/// Where a corpus comes from and how its text becomes tokens.
#[derive(Debug, Args)]
pub struct CorpusArgs {
    /// The corpus: a prepared folder, a UCI docword file, an LDA-C file, a text file (one document
    /// per line), a TSV file, or a folder of text files.
    #[arg(long, value_name = "PATH")]
    pub data: PathBuf,
    /// Input format [default: a prepared folder or a folder of files, docword*.txt as uci, *.ldac as
    /// ldac, *.tsv and *.tab as tsv, anything else as lines].
    #[arg(long, value_enum)]
    pub format: Option<CorpusFormatArg>,
    /// Vocabulary file, one word per line (uci: required, default vocab.*.txt beside the docword
    /// file; ldac: optional).
    #[arg(long, value_name = "FILE")]
    pub vocab: Option<PathBuf>,
    /// TSV column holding the text (matched exactly, then ignoring case).
    #[arg(long, value_name = "NAME", default_value = "text")]
    pub column: String,
    /// TSV lines after the header that are not documents (Orange's .tab files have 2).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub skip_lines: usize,
    /// Keep the case of the text.
    #[arg(long)]
    pub keep_case: bool,
    /// Token pattern (a regular expression) [default: runs of two or more letters].
    #[arg(long, value_name = "REGEX")]
    pub token_pattern: Option<String>,
    /// Keep English stop words.
    #[arg(long)]
    pub keep_stop_words: bool,
    /// More stop words, one per line.
    #[arg(long, value_name = "FILE")]
    pub stop_words: Option<PathBuf>,
    /// Keep words that occur in at least this many documents.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub min_df: usize,
    /// Drop words that occur in more than this fraction of the documents.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub max_df: f64,
}

/// Corpus formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CorpusFormatArg {
    /// A folder written by `strads lda prepare`.
    Prepared,
    /// UCI bag-of-words (docword + vocab).
    Uci,
    /// LDA-C (`N id:count ...` per line).
    Ldac,
    /// Plain text, one document per line.
    Lines,
    /// A TSV file with a header; the text in --column.
    Tsv,
    /// A folder of text files, one document each.
    Folder,
}

/// `strads lda`: train, or one of its subcommands.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct LdaArgs {
    /// Prepare or infer instead of training.
    #[command(subcommand)]
    pub action: Option<LdaAction>,
    /// The training corpus.
    #[command(flatten)]
    pub corpus: Option<CorpusArgs>,
    /// Training options.
    #[command(flatten)]
    pub train: Option<LdaTrainArgs>,
    /// Checkpoints of training.
    #[command(flatten)]
    pub checkpoints: CheckpointArgs,
}

/// `strads lda prepare` and `strads lda infer`.
#[derive(Debug, Subcommand)]
pub enum LdaAction {
    /// Tokenize and filter a corpus once and save it for many runs.
    Prepare(LdaPrepareArgs),
    /// Topic mixes of new documents under a trained model.
    Infer(LdaInferArgs),
}

/// Training flags (besides the corpus's).
#[derive(Debug, Args)]
pub struct LdaTrainArgs {
    /// Held-out documents (same formats; words are mapped onto the training vocabulary): a perplexity
    /// by document completion is reported.
    #[arg(long, value_name = "PATH")]
    pub test: Option<PathBuf>,
    /// Topics K.
    #[arg(long, short = 'k', value_name = "K", default_value_t = 100)]
    pub topics: usize,
    /// Document-topic prior per topic [default: 50 / K].
    #[arg(long, value_name = "A", allow_negative_numbers = true)]
    pub alpha: Option<f64>,
    /// Re-estimate the symmetric alpha every N iterations by one step of Minka's fixed point
    /// (as tomotopy's optim_interval, for a symmetric prior; --alpha is its start), or keep it
    /// fixed (off).
    #[arg(long, value_name = "N|off", default_value = "10")]
    pub optimize_alpha: String,
    /// Topic-word prior.
    #[arg(long, value_name = "B", default_value_t = 0.01, allow_negative_numbers = true)]
    pub beta: f64,
    /// Sweeps over every token.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub iterations: u64,
    /// Conditional sampler.
    #[arg(long, value_enum, default_value = "auto")]
    pub sampler: SamplerArg,
    /// Metropolis-Hastings proposals per token (alias), alternating word and document proposals,
    /// or auto (4 up to K = 100, 8 from K = 1000: each tenfold K doubles them).
    #[arg(long, value_name = "N|auto", default_value = "auto")]
    pub mh_steps: String,
    /// Model parallel (word rows rotate) or data parallel (full stale copies, the baseline).
    #[arg(long, value_enum, default_value = "model-parallel")]
    pub mode: ModeArg,
    /// Vocabulary blocks U (at least the number of workers) [default: the number of workers].
    #[arg(long, value_name = "U")]
    pub blocks: Option<usize>,
    /// When topic totals (and data-parallel word counts) are merged.
    #[arg(long, value_enum, default_value = "subround")]
    pub sync: SyncArg,
    /// Iterations between log-likelihood evaluations (and at the last).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub eval_every: u64,
    /// Iterations between held-out perplexities [default: --eval-every].
    #[arg(long, value_name = "N")]
    pub test_every: Option<u64>,
    /// Gibbs sweeps over the observed half of each test document per perplexity.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub fold_in_sweeps: usize,
    /// Seed of the vocabulary shuffle and of every sampler.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads.
    #[arg(long, value_name = "P", default_value_t = 1)]
    pub workers: usize,
    /// Refuse a run whose estimated memory exceeds this: bytes, or with K, M, G, T (powers of 1000),
    /// or off; auto is 80% of the machine's memory.
    #[arg(long, value_name = "SIZE|auto|off", default_value = "auto")]
    pub max_memory: String,
    /// Top words per topic in topics.txt.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top_words: usize,
    /// Also write doc_topic.npy, the dense documents x K float32 array of topic mixes. By default
    /// only doc_topic.csv is written: each document's nonzero topic counts, from which
    /// theta = (n_dk + alpha) / (N_d + K alpha); the dense array takes 4 K bytes a document
    /// (478 MB for 120,000 documents at K = 1000).
    #[arg(long)]
    pub dense_doc_topic: bool,
    /// Output folder.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Print nothing (no progress, no final line).
    #[arg(long)]
    pub quiet: bool,
}

/// `strads lda prepare`.
#[derive(Debug, Args)]
pub struct LdaPrepareArgs {
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Map words onto the vocabulary of this prepared corpus or trained model (for test documents).
    #[arg(long, value_name = "DIR")]
    pub vocab_from: Option<PathBuf>,
    /// Output folder.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `strads lda infer`.
#[derive(Debug, Args)]
pub struct LdaInferArgs {
    /// A trained model's folder (the --out of `strads lda`).
    #[arg(long, value_name = "DIR")]
    pub model: PathBuf,
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Gibbs sweeps per document (the first half is burn-in).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub iterations: usize,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output folder.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `strads gen lda`.
#[derive(Debug, Args)]
pub struct GenLdaArgs {
    /// The prepared-corpus folder to write (train on it with `strads lda --data DIR`).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Documents.
    #[arg(long, default_value_t = 2000)]
    pub documents: usize,
    /// Vocabulary size.
    #[arg(long, default_value_t = 5000)]
    pub vocabulary: usize,
    /// Topics.
    #[arg(long, default_value_t = 20)]
    pub topics: usize,
    /// Mean document length.
    #[arg(long, default_value_t = 100.0)]
    pub mean_length: f64,
    /// Dirichlet parameter of the documents' topic mixes.
    #[arg(long, default_value_t = 0.1)]
    pub alpha: f64,
    /// Dirichlet parameter of the topics' word distributions.
    #[arg(long, default_value_t = 0.01)]
    pub beta: f64,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// LDA samplers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SamplerArg {
    /// The faster in time to a log-likelihood for the corpus and K: alias when the token-weighted
    /// mean document length is at least 16 K tokens, else sparse (summary.json says which ran).
    Auto,
    /// SparseLDA buckets: an exact draw per token.
    Sparse,
    /// O(1) per token: alias tables and Metropolis-Hastings (more tokens per second, slower mixing).
    Alias,
}

/// LDA modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Vocabulary blocks rotate over the workers.
    ModelParallel,
    /// Every worker keeps the whole table.
    DataParallel,
}

/// Merge periods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SyncArg {
    /// After every sub-round.
    Subround,
    /// After every iteration.
    Iteration,
}

/// `strads mf`: train, or predict or recommend with a trained model.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct MfArgs {
    /// Predict or recommend instead of training.
    #[command(subcommand)]
    pub action: Option<MfAction>,
    /// Training options.
    #[command(flatten)]
    pub train: Option<MfTrainArgs>,
    /// Checkpoints of training.
    #[command(flatten)]
    pub checkpoints: CheckpointArgs,
}

/// `strads mf predict` and `strads mf recommend`.
#[derive(Debug, Subcommand)]
pub enum MfAction {
    /// Predicted ratings of (user, item) pairs.
    Predict(MfPredictArgs),
    /// The top-N items of one user.
    Recommend(MfRecommendArgs),
}

/// Training flags.
#[derive(Debug, Args)]
pub struct MfTrainArgs {
    /// Training ratings: MatrixMarket coordinate, or `user,item,rating[,timestamp]` lines (tab, comma,
    /// semicolon or space separated; an optional header, typed headers such as `user_id:token` included).
    #[arg(long, value_name = "PATH")]
    pub data: PathBuf,
    /// Test ratings, same formats.
    #[arg(long, value_name = "PATH", conflicts_with = "test_fraction")]
    pub test: Option<PathBuf>,
    /// Hold out this fraction of --data as the test set (a seeded shuffle of the ratings).
    #[arg(long, value_name = "F")]
    pub test_fraction: Option<f64>,
    /// The layout of the rating files.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: RatingsFormatArg,
    /// A (user, item) pair rated twice in one file: an error, the later rating, or the mean.
    #[arg(long, value_enum, default_value = "error")]
    pub duplicates: DuplicatesArg,
    /// Update rule of a half-iteration [default: ccdpp; als with --implicit].
    #[arg(long, value_enum)]
    pub algorithm: Option<AlgorithmArg>,
    /// Rank K of W and H.
    #[arg(long, short = 'k', value_name = "K", default_value_t = 10)]
    pub rank: usize,
    /// L2 weight lambda [default: 0.1 x the standard deviation of the training ratings x
    /// 144^(1 - E), E the --lambda-exponent (0 with --weighted-lambda false): about 0.1 on 1-5 stars;
    /// 0.01 with --implicit].
    #[arg(long, value_name = "L", allow_negative_numbers = true)]
    pub lambda: Option<f64>,
    /// Scale lambda by each row's number of ratings, as Spark's ALS and LIBMF do (`--weighted-lambda
    /// false` for one lambda for every row) [default: true; false with --implicit].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set)]
    pub weighted_lambda: Option<bool>,
    /// The power of a row's number of ratings n that scales its lambda (lambda n^E): 1 is LIBMF's and
    /// Spark's scaling, 0.5 regularizes rows of few ratings more per rating [default: 1].
    #[arg(long, value_name = "E")]
    pub lambda_exponent: Option<f64>,
    /// Offsets added to w_i . h_j: none, the global mean, or the global mean plus user and item biases
    /// [default: full; none with --implicit].
    #[arg(long, value_enum)]
    pub bias: Option<BiasArg>,
    /// Implicit feedback (Hu, Koren and Volinsky, 2008): a value is a count of plays, clicks or
    /// purchases, every (user, item) pair is fitted as preference 1 (observed) or 0 (not), weighted by
    /// the confidence 1 + alpha x value; --test is scored by precision, MAP and NDCG at --top-k.
    #[arg(long)]
    pub implicit: bool,
    /// Implicit feedback: the confidence slope alpha.
    #[arg(long, value_name = "A", default_value_t = 1.0, requires = "implicit")]
    pub alpha: f64,
    /// ALS: conjugate-gradient steps per row from its last value, 0 to solve each row exactly
    /// [default: 3 where they cost less than the exact solve of a row of the mean length, from about
    /// rank 14 (16 with --implicit); else 0].
    #[arg(long, value_name = "N")]
    pub cg_steps: Option<usize>,
    /// Implicit feedback: the cut-off k of the ranking metrics on --test.
    #[arg(long, value_name = "K", default_value_t = 10, requires = "implicit")]
    pub top_k: usize,
    /// Outer iterations (a W half-step and an H half-step each) [default: 20; 15 with --implicit].
    #[arg(long, value_name = "N")]
    pub iterations: Option<usize>,
    /// CCD++: u/v alternations per rank-one factor; CCD: sweeps over a row's coordinates; ALS: unused
    /// [default: 3 for ccdpp, 1 for ccd].
    #[arg(long, value_name = "T")]
    pub inner_iterations: Option<usize>,
    /// Seed of the initial factors and of --test-fraction's split.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Initial factor entries are uniform in [0, S) [default: sqrt(std / K) / 2, or 2 sqrt(mean / K)
    /// for ALS without offsets, from the training ratings].
    #[arg(long, value_name = "S")]
    pub init_scale: Option<f64>,
    /// Without --test or --test-fraction, hold out this fraction of the training ratings to stop
    /// early on (0 to train on all of them for every iteration; not used with --implicit).
    #[arg(long, value_name = "F", default_value_t = 0.05)]
    pub validation: f64,
    /// Early stopping: stop after this many evaluations without a better validation RMSE, and keep
    /// the best iteration's factors.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub patience: usize,
    /// Stop once an iteration lowers the training objective by less than this fraction of it
    /// (0 to run every iteration); --iterations is then the most.
    #[arg(long, value_name = "T", default_value_t = 1e-3)]
    pub tol: f64,
    /// Iterations between evaluations (objective, RMSE), and at the last.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub eval_every: usize,
    /// Worker threads.
    #[arg(long, value_name = "P", default_value_t = 1)]
    pub workers: usize,
    /// Refuse a run whose estimated memory exceeds this: bytes, or with K, M, G, T (powers of 1000),
    /// or off; auto is 80% of the machine's memory.
    #[arg(long, value_name = "SIZE|auto|off", default_value = "auto")]
    pub max_memory: String,
    /// Output folder.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Print nothing (no progress, no final line).
    #[arg(long)]
    pub quiet: bool,
}

/// `strads mf predict`.
#[derive(Debug, Args)]
pub struct MfPredictArgs {
    /// A trained model's folder (the --out of `strads mf`).
    #[arg(long, value_name = "DIR")]
    pub model: PathBuf,
    /// Pairs: `user,item[,rating]` lines (separators and headers as for training data).
    #[arg(long, value_name = "PATH")]
    pub data: PathBuf,
    /// Write the predictions (CSV `user,item,prediction`) here instead of the standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `strads mf recommend`.
#[derive(Debug, Args)]
pub struct MfRecommendArgs {
    /// A trained model's folder.
    #[arg(long, value_name = "DIR")]
    pub model: PathBuf,
    /// The user's id, as in the training data.
    #[arg(long, value_name = "ID")]
    pub user: String,
    /// How many items.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Leave out the items the user rated in training.
    #[arg(long)]
    pub exclude_rated: bool,
}

/// `strads gen mf`.
#[derive(Debug, Args)]
pub struct GenMfArgs {
    /// The folder to write: ratings.tsv (all), train.tsv and test.tsv (an 80/20 split), the true
    /// factors, and truth.json.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Users.
    #[arg(long, default_value_t = 1000)]
    pub users: usize,
    /// Items.
    #[arg(long, default_value_t = 500)]
    pub items: usize,
    /// Rank of the true matrix.
    #[arg(long, default_value_t = 5)]
    pub rank: usize,
    /// Probability that a pair is observed.
    #[arg(long, default_value_t = 0.05)]
    pub density: f64,
    /// Standard deviation of the Gaussian noise.
    #[arg(long, default_value_t = 0.1)]
    pub noise: f64,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The layout of the problem: every pair observed with --density (uniform), or Netflix Prize's
    /// shape (480,189 users x 17,770 items, heavy-tailed activity and popularity, 1-5 stars; --users,
    /// --items and --density do not apply, --ratings sets the size).
    #[arg(long, value_enum, default_value = "uniform")]
    pub shape: ShapeArg,
    /// With --shape netflix: about this many ratings (the full size has 100,480,507; 10M is a
    /// tenth of it on the same users and items).
    #[arg(long, value_name = "N", default_value_t = 100_480_507)]
    pub ratings: usize,
}

/// Layouts of generated rating problems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ShapeArg {
    /// Every (user, item) pair observed with the same probability.
    Uniform,
    /// Netflix Prize's users, items and skew.
    Netflix,
}

/// MF update rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AlgorithmArg {
    /// CCD++: one rank-one factor at a time over all rows.
    Ccdpp,
    /// Row-wise coordinate descent: all K coordinates of one row, then the next.
    Ccd,
    /// Alternating least squares (each row solved exactly).
    Als,
}

/// MF prediction offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BiasArg {
    /// w_i . h_j.
    None,
    /// mu + w_i . h_j (mu: the mean training rating).
    Global,
    /// mu + b_i + c_j + w_i . h_j.
    Full,
}

/// Rating-file layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RatingsFormatArg {
    /// MatrixMarket by banner or extension (.mtx, .mm), else delimited.
    Auto,
    /// MatrixMarket coordinate (rows are users, columns items).
    Mm,
    /// Delimited lines.
    Delimited,
}

/// What a repeated (user, item) pair does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DuplicatesArg {
    /// Refuse the file.
    Error,
    /// Keep the later rating.
    Last,
    /// Keep the mean.
    Mean,
}
