//! Checkpoints of the L1 linear models: a run stopped at any round and resumed ends with the same
//! model, bit for bit, as an uninterrupted run (every scheduler, both losses, paths, working sets,
//! extrapolation, screening, pipelining).

use strads_core::{EngineError, InMemory};
use strads_data::Dataset;
use strads_lasso::{
    GeneratorSpec, Lambda, LassoError, LassoFit, LassoParams, Loss, SchedulerKind, fit, fit_checkpointed, generate,
    generate_classes,
};
use strads_runtime::Embedded;

fn spec(seed: u64) -> GeneratorSpec {
    GeneratorSpec { rows: 200, features: 90, block: 4, correlation: 0.3, density: 0.3, support: 8, noise: 0.5, seed }
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// Stops the run after a few chosen rounds in turn, resumes each time, and compares with the uninterrupted run.
fn check(data: &Dataset, params: &LassoParams, workers: usize, label: &str) {
    let checked = params.clone().check().unwrap();
    let launcher = Embedded::new(workers).unwrap();
    let whole: LassoFit = fit(data, &checked, &launcher, &mut |_| {}).unwrap().unwrap();
    let mut counted = InMemory { every: 1, ..InMemory::default() };
    fit_checkpointed(data, &checked, &launcher, &mut |_| {}, &mut counted).unwrap();
    let rounds = counted.saves;
    assert!(rounds >= 4, "{label}: only {rounds} rounds");
    for stop in [1, rounds / 4, rounds / 2, rounds - 1] {
        let what = format!("{label} P={workers}, stopped after {stop} of {rounds} rounds");
        let mut first = InMemory::stopping_after(stop);
        let stopped = fit_checkpointed(data, &checked, &launcher, &mut |_| {}, &mut first);
        assert!(matches!(stopped, Err(LassoError::Engine(EngineError::Interrupted { .. }))), "{what}");
        let mut second = InMemory::resuming(first.last.expect("a snapshot at the stop"));
        let resumed = fit_checkpointed(data, &checked, &launcher, &mut |_| {}, &mut second).unwrap().unwrap();
        assert_eq!(bits(&resumed.beta), bits(&whole.beta), "{what}");
        assert_eq!(resumed.intercept.to_bits(), whole.intercept.to_bits(), "{what}");
        assert_eq!((resumed.rounds, resumed.updates, resumed.status), (whole.rounds, whole.updates, whole.status));
        let gaps = |f: &LassoFit| f.trace.iter().map(|t| t.duality_gap.to_bits()).collect::<Vec<_>>();
        assert_eq!(gaps(&resumed), gaps(&whole), "{what}");
        let path = |f: &LassoFit| f.path.iter().map(|p| bits(&[p.lambda, p.objective])).collect::<Vec<_>>();
        assert_eq!(path(&resumed), path(&whole), "{what}");
    }
}

fn base(loss: Loss, scheduler: SchedulerKind) -> LassoParams {
    let mut p = LassoParams::new(Lambda::Ratio(0.1));
    p.loss = loss;
    p.scheduler = scheduler;
    p.tol = 1e-9;
    p.set_size = if scheduler == SchedulerKind::Sequential { None } else { Some(4) };
    p.split_min = Some(0);
    p
}

#[test]
fn every_scheduler_and_loss_resumes_bit_for_bit() {
    let regression = generate(&spec(1)).data;
    let classes = generate_classes(&spec(2)).data;
    for scheduler in [
        SchedulerKind::Block,
        SchedulerKind::Dynamic,
        SchedulerKind::Shotgun,
        SchedulerKind::Cyclic,
        SchedulerKind::Sequential,
    ] {
        for (loss, data) in [(Loss::Squared, &regression), (Loss::Logistic, &classes)] {
            let params = base(loss, scheduler);
            for workers in [1, 2] {
                check(data, &params, workers, &format!("{} {}", loss.name(), scheduler.name()));
            }
        }
    }
}

#[test]
fn paths_working_sets_extrapolation_and_pipelines_resume_bit_for_bit() {
    let regression = generate(&spec(3)).data;
    let classes = generate_classes(&spec(4)).data;
    let mut path = base(Loss::Squared, SchedulerKind::Dynamic);
    path.path = Some(5);
    path.intercept = true;
    check(&regression, &path, 2, "lasso path with intercept");
    let mut enet = base(Loss::Logistic, SchedulerKind::Dynamic);
    enet.l1_ratio = 0.5;
    enet.path = Some(4);
    check(&classes, &enet, 2, "logistic elastic-net path");
    let mut working = base(Loss::Squared, SchedulerKind::Dynamic);
    working.working_set = Some(10);
    working.anderson = Some(5);
    working.screening = Some(true);
    check(&regression, &working, 2, "working sets, extrapolation, screening");
    let mut pipelined = base(Loss::Squared, SchedulerKind::Shotgun);
    pipelined.pipeline_depth = 2;
    check(&regression, &pipelined, 2, "pipeline depth 2");
}
