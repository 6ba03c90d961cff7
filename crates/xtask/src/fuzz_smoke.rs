//! `cargo xtask fuzz-smoke [SECONDS]`: every fuzz target for a bounded time on nightly.
//!
//! The targets are the files of `fuzz/fuzz_targets/`; each must have a checked-in corpus in
//! `fuzz/corpus/<target>/`. They are built once (`cargo +nightly fuzz build`), then each runs
//! for SECONDS (default [`DEFAULT_SECONDS`]) from its corpus. New inputs go to a scratch folder,
//! so the checked-in corpus is only read. A crash, a leak, a timeout or an out-of-memory stops
//! the smoke with cargo-fuzz's report (the input is kept under `fuzz/artifacts/<target>/`).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::tasks;

/// Seconds per target when none are given.
pub const DEFAULT_SECONDS: u64 = 30;

/// Runs every target; `Err` on the first one that fails.
pub fn fuzz_smoke(args: &[String]) -> Result<(), String> {
    let seconds = match args.first() {
        Some(text) => text
            .parse::<u64>()
            .map_err(|_| format!("seconds per target must be a number, not `{text}`"))?,
        None => DEFAULT_SECONDS,
    };
    let started = Instant::now();
    let fuzz = tasks::root().join("fuzz");
    let targets = targets(&fuzz.join("fuzz_targets"))?;
    for target in &targets {
        let corpus = fuzz.join("corpus").join(target);
        let seeds = fs::read_dir(&corpus).map(Iterator::count).unwrap_or(0);
        if seeds == 0 {
            return Err(format!(
                "fuzz target `{target}` has no corpus: add seed inputs to {}",
                corpus.display()
            ));
        }
    }
    tasks::ensure_cargo_fuzz()?;
    let mut build = tasks::nightly_cargo();
    build.args(["fuzz", "build"]);
    tasks::run(build)?;
    let scratch = std::env::temp_dir().join(format!("paddock-fuzz-smoke-{}", std::process::id()));
    let outcome = targets.iter().try_for_each(|target| {
        let new_inputs = scratch.join(target);
        fs::create_dir_all(&new_inputs)
            .map_err(|e| format!("creating {}: {e}", new_inputs.display()))?;
        let mut run = tasks::nightly_cargo();
        run.args(["fuzz", "run", target.as_str()])
            .arg(&new_inputs)
            .arg(fuzz.join("corpus").join(target))
            .args(["--", &format!("-max_total_time={seconds}")]);
        tasks::run(run)
    });
    let _ = fs::remove_dir_all(&scratch);
    outcome?;
    println!(
        "fuzz smoke: {} targets ({}), {seconds} s each, no crash; {:.0} s including the build",
        targets.len(),
        targets.join(", "),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The targets: the `.rs` files of `dir`, by name.
fn targets(dir: &Path) -> Result<Vec<String>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("listing {}: {e}", dir.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(|entry| {
            let path: PathBuf = entry.ok()?.path();
            (path.extension()? == "rs").then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(format!("no fuzz targets in {}", dir.display()));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_file_is_found_and_each_has_a_corpus() {
        let fuzz = tasks::root().join("fuzz");
        let names = targets(&fuzz.join("fuzz_targets")).unwrap();
        assert!(names.contains(&"regex".to_owned()), "{names:?}");
        assert!(names.contains(&"runner_lines".to_owned()), "{names:?}");
        for name in &names {
            let seeds = fs::read_dir(fuzz.join("corpus").join(name))
                .unwrap()
                .count();
            assert!(seeds >= 10, "the {name} corpus has {seeds} inputs");
        }
    }
}
