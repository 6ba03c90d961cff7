//! What the protected-files sweep costs a call. The agent sweeps after every call that can
//! write; on a project-sized tree (10 repositories, ~2,000 folders, editor settings) this
//! measures the sweep when the call changed nothing, when it wrote one file, and when it made a
//! folder of 20 files; the start walk (every folder walked and watched, done once per wall);
//! and, as a baseline in the same run, one `stat` of every folder (what tracking folder times
//! instead of watching them would pay per call).
//!
//! `cargo bench -p sandbox-provider --bench protected_sweep`.

#![allow(clippy::print_stdout, reason = "a bench binary reports on stdout")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup: a panic is a failed run with a line number"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use protocol::{FolderAccess, FolderGrant, NetworkProfileName};
use sandbox_policy::ProtectedList;
use sandbox_provider::SandboxRequest;
use sandbox_provider::protected::ProtectedFiles;

const REPOSITORIES: usize = 10;
const MODULES: usize = 20;
const FOLDERS_PER_MODULE: usize = 10;

/// A project-sized tree: 10 repositories of 20 modules of 10 folders, each with a file.
fn tree(root: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for r in 0..REPOSITORIES {
        let repo = root.join(format!("repo{r}"));
        std::fs::create_dir_all(&repo).unwrap();
        let out = Command::new("git")
            .args(["init", "-q"])
            .arg(&repo)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        std::fs::create_dir_all(repo.join(".vscode")).unwrap();
        std::fs::write(repo.join(".vscode/settings.json"), "{}").unwrap();
        for m in 0..MODULES {
            for f in 0..FOLDERS_PER_MODULE {
                let folder = repo.join(format!("src/m{m}/f{f}"));
                std::fs::create_dir_all(&folder).unwrap();
                std::fs::write(folder.join("lib.rs"), "// code\n").unwrap();
                folders.push(folder);
            }
        }
    }
    folders
}

fn request(root: &Path) -> SandboxRequest {
    SandboxRequest {
        session_id: "bench".into(),
        folders: vec![FolderGrant {
            path: root.display().to_string(),
            access: FolderAccess::ReadWrite,
        }],
        cwd: root.display().to_string(),
        network_profile: NetworkProfileName::Strict,
        extra_hosts: Vec::new(),
        credentials: Vec::new(),
    }
}

fn sweeps(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let work = root.path().canonicalize().unwrap();
    let folders = tree(&work);
    let list = Arc::new(ProtectedList::builtin().unwrap());
    let start = || {
        ProtectedFiles::start(
            list.clone(),
            &request(&work),
            state.path().join("quarantine"),
            true,
        )
    };
    let files = start();
    let walked = std::fs::read_dir(&work).unwrap().count();
    println!("{}; top-level entries {walked}", files.summary());

    let mut group = c.benchmark_group("protected sweep");
    // On the tree as made (the write benches below add to it).
    group.sample_size(20);
    group.bench_function("start walk (every folder walked and watched)", |b| {
        b.iter(|| black_box(start()));
    });
    group.bench_function("baseline: stat every folder once", |b| {
        b.iter(|| {
            for folder in &folders {
                black_box(std::fs::symlink_metadata(folder).unwrap());
            }
        });
    });
    group.sample_size(100);
    group.bench_function("after a call that changed nothing", |b| {
        b.iter(|| assert!(black_box(files.sweep()).is_empty()));
    });
    // Each write bench removes what it made again (so the tree stays the same size); its
    // baseline makes and removes the same in a folder nobody watches: what the call itself
    // costs.
    let elsewhere = tempfile::tempdir().unwrap();
    let n = AtomicU64::new(0);
    let write_one = |folder: &Path, sweep: bool| {
        let file = folder.join(format!("new{}.rs", n.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&file, "x").unwrap();
        if sweep {
            assert!(black_box(files.sweep()).is_empty());
        }
        std::fs::remove_file(&file).unwrap();
    };
    group.bench_function("baseline: write one file (unwatched)", |b| {
        b.iter(|| write_one(elsewhere.path(), false));
    });
    let i = AtomicU64::new(0);
    let next_folder = || &folders[i.fetch_add(1, Ordering::Relaxed) as usize % folders.len()];
    group.bench_function("write one file, then sweep", |b| {
        b.iter(|| write_one(next_folder(), true));
    });
    let make_folder = |parent: &Path, sweep: bool| {
        let folder = parent.join(format!("gen{}", n.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&folder).unwrap();
        for f in 0..20 {
            std::fs::write(folder.join(format!("{f}.rs")), "x").unwrap();
        }
        if sweep {
            assert!(black_box(files.sweep()).is_empty());
        }
        std::fs::remove_dir_all(&folder).unwrap();
    };
    group.bench_function("baseline: make a folder of 20 files (unwatched)", |b| {
        b.iter(|| make_folder(elsewhere.path(), false));
    });
    group.bench_function("make a folder of 20 files, then sweep", |b| {
        b.iter(|| make_folder(next_folder(), true));
    });
    group.finish();
}

criterion_group!(benches, sweeps);
criterion_main!(benches);
