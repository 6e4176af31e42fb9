//! `strads plot`: convergence curves of runs against seconds and against rounds, drawn in pure Rust.
//!
//! Each input is a run folder (its `trace.csv`, and `summary.json` for the legend) or a trace file.
//! Every trace of strads has `seconds` and a round column (`round` or `iteration`); the benchmark
//! scripts write their peers' traces in the same columns, so one plot overlays strads and its peers.
//! The image has two panels, the column against seconds and against rounds (one panel when a trace
//! has no round column). PNG and SVG are rendered by plotters with a bundled font (DejaVu Sans), so
//! no system font or fontconfig is needed.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::cli::{LogScale, PlotArgs};
use crate::failure::Failure;

/// The bundled font (DejaVu Sans, Bitstream Vera licence: assets/DejaVuSans-LICENSE.txt).
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Default columns, in order of preference: the first every trace has is plotted.
const DEFAULT_COLUMNS: [&str; 5] =
    ["duality_gap", "log_likelihood_per_token", "test_rmse", "test_perplexity", "objective"];

/// Columns that count rounds.
const ROUND_COLUMNS: [&str; 2] = ["round", "iteration"];

/// One run's trace: its columns by name, and its legend label.
struct Trace {
    file: PathBuf,
    label: String,
    names: Vec<String>,
    rows: Vec<Vec<Option<f64>>>,
}

impl Trace {
    fn column(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// `(x, y)` pairs where both are finite.
    fn points(&self, x: usize, y: usize) -> Vec<(f64, f64)> {
        self.rows
            .iter()
            .filter_map(|row| match (row[x], row[y]) {
                (Some(a), Some(b)) if a.is_finite() && b.is_finite() => Some((a, b)),
                _ => None,
            })
            .collect()
    }
}

/// Reads `trace.csv` (or the file itself), and a label from the `summary.json` beside it.
fn read(input: &Path) -> Result<Trace, Failure> {
    let (file, folder) = if input.is_dir() {
        (input.join("trace.csv"), input.to_path_buf())
    } else {
        (input.to_path_buf(), input.parent().map(Path::to_path_buf).unwrap_or_default())
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(&file)
        .map_err(|e| Failure::input(format!("{}: cannot read the trace: {e}", file.display())))?;
    let names: Vec<String> = reader
        .headers()
        .map_err(|e| Failure::input(format!("{}:1: {e}", file.display())))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    if !names.iter().any(|n| n == "seconds") {
        return Err(Failure::input(format!("{}:1: no seconds column (columns: {})", file.display(), names.join(","))));
    }
    let mut rows = Vec::new();
    for (k, record) in reader.records().enumerate() {
        let line = k + 2;
        let record = record.map_err(|e| Failure::input(format!("{}:{line}: {e}", file.display())))?;
        if record.len() != names.len() {
            return Err(Failure::input(format!(
                "{}:{line}: {} fields, the header has {}",
                file.display(),
                record.len(),
                names.len()
            )));
        }
        let mut row = Vec::with_capacity(names.len());
        for (field, name) in record.iter().zip(&names) {
            let field = field.trim();
            let value = match field.parse::<f64>() {
                _ if field.is_empty() => None,
                Ok(v) => Some(v),
                // The axes must be numbers; other text columns (a status) are simply not plottable.
                Err(_) if ["seconds", "round", "iteration"].contains(&name.as_str()) => {
                    return Err(Failure::input(format!(
                        "{}:{line}: {name} is not a number: '{field}'",
                        file.display()
                    )));
                }
                Err(_) => None,
            };
            row.push(value);
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(Failure::input(format!("{}: the trace has no rows", file.display())));
    }
    let label = label_from_summary(&folder.join("summary.json")).unwrap_or_else(|| {
        let name = if input.is_dir() { input } else { &folder };
        name.file_name().map_or_else(|| input.display().to_string(), |n| n.to_string_lossy().into_owned())
    });
    Ok(Trace { file, label, names, rows })
}

/// A legend label from a run's summary: what ran, on how many workers.
fn label_from_summary(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let summary: serde_json::Value = serde_json::from_str(&text).ok()?;
    let text_of = |key: &str| summary.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let tool = text_of("tool").unwrap_or_else(|| "strads".into());
    let what = if let Some(scheduler) = text_of("scheduler") {
        match text_of("loss").as_deref() {
            Some("logistic") => format!("logreg {scheduler}"),
            _ => format!("lasso {scheduler}"),
        }
    } else if let Some(mode) = text_of("mode") {
        format!("lda {mode} {}", text_of("sampler").unwrap_or_default())
    } else if let Some(algorithm) = text_of("algorithm") {
        format!("mf {algorithm}")
    } else {
        text_of("method").unwrap_or_default()
    };
    let workers = summary.get("workers").and_then(|v| v.as_u64());
    let mut label = format!("{tool} {what}").trim().to_string();
    if let Some(p) = workers {
        label.push_str(&format!(" P={p}"));
    }
    Some(label)
}

/// `strads plot`.
pub fn run(args: &PlotArgs) -> Result<(), Failure> {
    let extension = args.out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let svg = match extension.as_deref() {
        Some("png") => false,
        Some("svg") => true,
        _ => return Err(Failure::input(format!("{}: the output must end in .png or .svg", args.out.display()))),
    };
    let mut traces = args.runs.iter().map(|p| read(p)).collect::<Result<Vec<_>, _>>()?;
    if let Some(labels) = &args.labels {
        if labels.len() != traces.len() {
            return Err(Failure::input(format!("--labels has {} labels for {} runs", labels.len(), traces.len())));
        }
        for (trace, label) in traces.iter_mut().zip(labels) {
            trace.label = label.clone();
        }
    }
    // Runs that would share a label get their file's folder name too.
    let labels: Vec<String> = traces.iter().map(|t| t.label.clone()).collect();
    for trace in &mut traces {
        if labels.iter().filter(|l| **l == trace.label).count() > 1 {
            let folder = trace.file.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
            if let Some(folder) = folder {
                trace.label = format!("{} ({folder})", trace.label);
            }
        }
    }
    let column = match &args.y {
        Some(name) => {
            if let Some(t) = traces.iter().find(|t| t.column(name).is_none()) {
                return Err(Failure::input(format!(
                    "{}: no column '{name}' (columns: {})",
                    t.file.display(),
                    t.names.join(",")
                )));
            }
            name.clone()
        }
        None => DEFAULT_COLUMNS
            .iter()
            .find(|name| traces.iter().all(|t| t.column(name).is_some_and(|c| t.rows.iter().any(|r| r[c].is_some()))))
            .map(|name| name.to_string())
            .ok_or_else(|| {
                Failure::input(format!(
                    "the traces share none of the columns {}: choose one with --y",
                    DEFAULT_COLUMNS.join(", ")
                ))
            })?,
    };
    let series: Vec<Series> = traces
        .iter()
        .map(|t| {
            let y = t.column(&column).unwrap_or(0);
            let seconds = t.column("seconds").map(|x| t.points(x, y)).unwrap_or_default();
            let rounds = ROUND_COLUMNS.iter().find_map(|name| t.column(name)).map(|x| t.points(x, y));
            Series { label: t.label.clone(), seconds, rounds }
        })
        .collect();
    // The second panel's axis is named after the traces' round column: rounds or iterations.
    let round_name = traces
        .iter()
        .find_map(|t| ROUND_COLUMNS.iter().find(|name| t.column(name).is_some()))
        .map_or("rounds", |name| if *name == "iteration" { "iterations" } else { "rounds" });
    if series.iter().all(|s| s.seconds.is_empty()) {
        return Err(Failure::input(format!("no run has a finite value of {column}")));
    }
    let values: Vec<f64> = series.iter().flat_map(|s| s.seconds.iter().map(|p| p.1)).collect();
    let positive = values.iter().all(|&v| v > 0.0);
    let spread = {
        let (lo, hi) = bounds(values.iter().copied());
        positive && hi / lo > 100.0
    };
    let log = match args.log_y {
        LogScale::On if !positive => {
            return Err(Failure::input(format!("--log-y on: {column} has values at or below 0")));
        }
        LogScale::On => true,
        LogScale::Off => false,
        LogScale::Auto => positive && (column == "duality_gap" || spread),
    };
    let with_rounds = series.iter().all(|s| s.rounds.is_some());
    let names = (column.as_str(), round_name);
    let title = args.title.clone().unwrap_or_else(|| column.replace('_', " "));
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| Failure::Run(anyhow::anyhow!("the bundled font could not be loaded")))?;
    let size = if with_rounds { (1200, 480) } else { (800, 480) };
    let temporary = temporary_path(&args.out);
    let drawn = if svg {
        let root = SVGBackend::new(&temporary, size).into_drawing_area();
        draw(root, &series, names, &title, log, with_rounds)
    } else {
        let root = BitMapBackend::new(&temporary, size).into_drawing_area();
        draw(root, &series, names, &title, log, with_rounds)
    };
    if let Err(message) = drawn {
        let _ = std::fs::remove_file(&temporary);
        return Err(Failure::Run(anyhow::anyhow!("{}: {message}", args.out.display())));
    }
    std::fs::rename(&temporary, &args.out).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        Failure::Run(anyhow::anyhow!("{}: cannot write: {e}", args.out.display()))
    })?;
    Ok(())
}

/// One curve: against seconds, and against rounds when the trace counts them.
struct Series {
    label: String,
    seconds: Vec<(f64, f64)>,
    rounds: Option<Vec<(f64, f64)>>,
}

/// `FILE.tmp-PID.EXT` beside the output: the image is rendered there and renamed.
fn temporary_path(out: &Path) -> PathBuf {
    let name = out.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let extension = out.extension().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    out.with_file_name(format!(".{name}.tmp-{}.{extension}", std::process::id()))
}

/// A short axis label: `250k`, `1e-5`, `0.25`.
fn tick(v: f64) -> String {
    let trim = |v: f64| {
        let text = format!("{v:.3}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        if text == "-0" { "0".to_string() } else { text.to_string() }
    };
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else if a < 1e-2 {
        format!("{v:.0e}")
    } else {
        trim(v)
    }
}

/// The least and greatest of some values (0 and 1 when there are none).
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) }
}

/// A range with a margin around `(lo, hi)`, never empty.
fn padded(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    if log {
        let (lo, hi) = (lo.max(f64::MIN_POSITIVE), hi.max(f64::MIN_POSITIVE));
        if hi / lo < 1.0 + 1e-9 { (lo / 2.0, hi * 2.0) } else { (lo / 1.5, hi * 1.5) }
    } else {
        let span = hi - lo;
        let pad = if span > 0.0 { 0.05 * span } else { 0.5 * hi.abs().max(1.0) };
        (lo - pad, hi + pad)
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    series: &[Series],
    (column, round_name): (&str, &str),
    title: &str,
    log: bool,
    with_rounds: bool,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let error = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(error)?;
    let inner = root.titled(title, ("sans-serif", 22)).map_err(error)?;
    let panels = if with_rounds { inner.split_evenly((1, 2)) } else { vec![inner] };
    let ys = bounds(series.iter().flat_map(|s| s.seconds.iter().chain(s.rounds.iter().flatten()).map(|p| p.1)));
    // Rising curves (a log-likelihood) end at the top: their legend goes to the bottom.
    let rising = series
        .iter()
        .filter(|s| s.seconds.len() > 1)
        .filter(|s| s.seconds[s.seconds.len() - 1].1 > s.seconds[0].1)
        .count()
        * 2
        > series.len();
    let corner = || if rising { SeriesLabelPosition::LowerRight } else { SeriesLabelPosition::UpperRight };
    let (y_lo, y_hi) = padded(ys.0, ys.1, log);
    for (k, panel) in panels.into_iter().enumerate() {
        let by_rounds = k == 1;
        let curves: Vec<(&str, &[(f64, f64)])> = series
            .iter()
            .map(|s| {
                let points = if by_rounds { s.rounds.as_deref().unwrap_or(&[]) } else { &s.seconds[..] };
                (s.label.as_str(), points)
            })
            .collect();
        let xs = bounds(curves.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)));
        let (x_lo, x_hi) = (xs.0.min(0.0), if xs.1 > xs.0.min(0.0) { xs.1 } else { xs.0.min(0.0) + 1.0 });
        let x_name = if by_rounds { round_name } else { "seconds" };
        macro_rules! plot_panel {
            ($y_range:expr) => {{
                let mut chart = ChartBuilder::on(&panel)
                    .margin(12)
                    .x_label_area_size(40)
                    .y_label_area_size(70)
                    .build_cartesian_2d(x_lo..x_hi, $y_range)
                    .map_err(error)?;
                chart
                    .configure_mesh()
                    .x_desc(x_name)
                    .y_desc(column)
                    .x_label_formatter(&|v| tick(*v))
                    .y_label_formatter(&|v| tick(*v))
                    .label_style(("sans-serif", 13))
                    .draw()
                    .map_err(error)?;
                for (i, (label, points)) in curves.iter().enumerate() {
                    let color = Palette99::pick(i).to_rgba();
                    chart
                        .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
                        .map_err(error)?
                        .label(*label)
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
                }
                chart
                    .configure_series_labels()
                    .label_font(("sans-serif", 13))
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .position(corner())
                    .draw()
                    .map_err(error)?;
            }};
        }
        if log {
            plot_panel!((y_lo..y_hi).log_scale());
        } else {
            plot_panel!(y_lo..y_hi);
        }
    }
    root.present().map_err(error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(padded(1.0, 1.0, false), (0.5, 1.5));
        let (lo, hi) = padded(1e-3, 1e-3, true);
        assert!(lo < 1e-3 && hi > 1e-3);
        assert_eq!(bounds(std::iter::empty()), (0.0, 1.0));
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(250_000.0), "250k");
        assert_eq!(tick(9.999999999e-6), "1e-5");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(3.0), "3");
        assert_eq!(tick(2_500_000.0), "2.5M");
        assert_eq!(tick(0.0), "0");
    }
}
