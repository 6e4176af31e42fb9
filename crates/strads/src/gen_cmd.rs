//! `strads gen`: synthetic problems with known answers, written atomically.

use std::io::Write;

use strads_data::{Features, write_atomic, write_libsvm};
use strads_lasso::{GeneratorSpec, generate, generate_classes};

use crate::cli::GenLassoArgs;
use crate::failure::Failure;

/// `strads gen lasso` (and `--classes` for `strads logreg`).
pub fn lasso(args: &GenLassoArgs) -> Result<(), Failure> {
    let spec = GeneratorSpec {
        rows: args.rows,
        features: args.features,
        block: args.block,
        correlation: args.correlation,
        density: args.density,
        support: args.support,
        noise: args.noise,
        seed: args.seed,
    };
    spec.check().map_err(Failure::input)?;
    let problem = if args.classes { generate_classes(&spec) } else { generate(&spec) };
    let Features::Sparse(rows) = &problem.data.x else {
        return Err(Failure::Run(anyhow::anyhow!("the generator made dense rows")));
    };
    let run = |e: strads_data::DataError| Failure::Run(e.into());
    write_atomic(&args.out, |w| write_libsvm(w, rows, &problem.data.y)).map_err(run)?;
    if let Some(truth) = &args.truth {
        write_atomic(truth, |w| {
            writeln!(w, "index,value")?;
            for (j, b) in problem.beta.iter().enumerate().filter(|(_, b)| **b != 0.0) {
                writeln!(w, "{j},{b}")?;
            }
            Ok(())
        })
        .map_err(run)?;
    }
    Ok(())
}
