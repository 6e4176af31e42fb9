//! `strads demo`: the README's first command. Generates a correlated sparse regression problem,
//! trains it with STRADS' dynamic scheduler and with the paper's baselines on the same workers,
//! prints how many coordinate updates and seconds each needed, and keeps every run's outputs.

use std::time::Instant;

use strads_data::{Features, write_atomic, write_libsvm};
use strads_lasso::{GapEvery, GeneratorSpec, Lambda, LassoParams, SchedulerKind, generate};

use crate::cli::{DemoArgs, DemoSize};
use crate::failure::Failure;
use crate::lasso_cmd::{Extras, Settings, check_out_dir, summary, train, write_outputs};

/// `strads demo`.
pub fn run(args: &DemoArgs) -> Result<(), Failure> {
    if args.workers == 0 {
        return Err(Failure::input("--workers must be at least 1"));
    }
    check_out_dir(&args.out)?;
    let spec = match args.size {
        DemoSize::Small => GeneratorSpec { rows: 2000, features: 4000, ..GeneratorSpec::default() },
        DemoSize::Medium => GeneratorSpec { rows: 20_000, features: 40_000, density: 0.05, ..GeneratorSpec::default() },
    };
    let generated = Instant::now();
    let problem = generate(&spec);
    let data = problem.data;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Failure::Run(anyhow::anyhow!("{}: cannot create the folder: {e}", args.out.display())))?;
    let data_path = args.out.join("lasso.svm");
    if let Features::Sparse(rows) = &data.x {
        write_atomic(&data_path, |w| write_libsvm(w, rows, &data.y)).map_err(|e| Failure::Run(e.into()))?;
    }
    if !args.quiet {
        println!(
            "Lasso on a generated problem: {} samples x {} features ({} nonzeros), blocks of {} features correlated at {}, {} true nonzeros; {} workers (generated in {:.1} s)",
            data.x.rows(),
            data.x.cols(),
            data.x.nnz(),
            spec.block,
            spec.correlation,
            spec.support,
            args.workers,
            generated.elapsed().as_secs_f64(),
        );
        println!("lambda = lambda_max / 100, stop at a relative duality gap of 1e-6");
    }
    let parallel = 16;
    let runs: [(&str, Option<usize>, &[SchedulerKind]); 2] = [
        (
            "default set sizes (dynamic and sequential: 1; shotgun and cyclic: one per worker)",
            None,
            &[SchedulerKind::Dynamic, SchedulerKind::Shotgun, SchedulerKind::Cyclic, SchedulerKind::Sequential],
        ),
        (
            "16 coordinates per round: correlated coordinates updated together fight",
            Some(parallel),
            &[SchedulerKind::Dynamic, SchedulerKind::Shotgun, SchedulerKind::Cyclic],
        ),
    ];
    for (title, set_size, schedulers) in runs {
        if !args.quiet {
            println!("\n{title}");
            println!(
                "{:<11} {:>11} {:>10} {:>10} {:>9} {:>16} {:>10} {:>6}",
                "scheduler", "status", "updates", "vs dynamic", "seconds", "objective", "gap", "nnz"
            );
        }
        let mut dynamic_updates = None;
        for &scheduler in schedulers {
            let mut params = LassoParams::new(Lambda::Ratio(0.01));
            params.scheduler = scheduler;
            params.set_size = set_size;
            params.max_seconds = Some(30.0);
            params.gap_every = GapEvery::Auto;
            let settings = Settings { load: Default::default(), params: params.check()?, workers: args.workers };
            let fit = train(&data, &settings, scheduler.name(), args.quiet)?;
            let name = match set_size {
                None => scheduler.name().to_string(),
                Some(l) => format!("{}-L{l}", scheduler.name()),
            };
            let extras = Extras::of(&fit, &settings.params, None);
            write_outputs(
                &args.out.join(&name),
                &fit,
                &summary(&fit, &settings.params, &data, &data_path, 0.0),
                &extras,
            )?;
            let ratio = match dynamic_updates {
                None => {
                    dynamic_updates = Some(fit.updates);
                    "1.00x".to_string()
                }
                Some(d) => format!("{:.2}x", fit.updates as f64 / d.max(1) as f64),
            };
            println!(
                "{:<11} {:>11} {:>10} {:>10} {:>9.3} {:>16.10e} {:>10.1e} {:>6}",
                scheduler.name(),
                fit.status.name(),
                fit.updates,
                ratio,
                fit.seconds,
                fit.objective,
                fit.duality_gap,
                fit.nnz()
            );
        }
    }
    if !args.quiet {
        println!(
            "\nRuns written to {}/ (summary.json, trace.csv, coefficients.csv per run; the data in lasso.svm)",
            args.out.display()
        );
    }
    Ok(())
}
