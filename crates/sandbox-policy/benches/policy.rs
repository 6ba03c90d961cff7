//! The local wall's proxy asks the allow-list about every connection; sessions render once.
//! Run: `cargo bench -p sandbox-policy --bench policy`.

#![allow(
    clippy::unwrap_used,
    reason = "benchmark setup: a panic is a failed run with a line number"
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::net::IpAddr;

use criterion::{Criterion, criterion_group, criterion_main};
use protocol::{FolderAccess, NetworkProfileName};
use sandbox_policy::{
    FolderSpec, HostRule, MountDriver, NetworkAllowList, Owner, SandboxData, SecretValue,
    SessionSpec, render,
};

fn allow_list(data: &SandboxData, profile: NetworkProfileName) -> NetworkAllowList {
    let extra: Vec<HostRule> = [
        "huggingface.co",
        "intranet.example.com:8443",
        "10.9.0.0/16:5432",
    ]
    .iter()
    .map(|h| HostRule::parse(h).unwrap())
    .collect();
    let credentials = [
        data.credential("ssh").unwrap(),
        data.credential("aws").unwrap(),
    ];
    let secrets = [data.known_secret("GITHUB_TOKEN").unwrap()];
    NetworkAllowList::resolve(
        data.profile(profile).unwrap(),
        &extra,
        &credentials,
        &secrets,
        &data.companions,
    )
    .unwrap()
}

fn checks(c: &mut Criterion) {
    let data = SandboxData::builtin().unwrap();
    let strict = allow_list(&data, NetworkProfileName::Strict);
    let open = allow_list(&data, NetworkProfileName::Open);
    let public: IpAddr = "151.101.0.223".parse().unwrap();
    let private: IpAddr = "10.0.0.8".parse().unwrap();

    let mut group = c.benchmark_group("allow_list");
    group.bench_function("check_host hit (last profile host)", |b| {
        b.iter(|| strict.check_host(black_box("sum.golang.org"), black_box(443)));
    });
    group.bench_function("check_host miss", |b| {
        b.iter(|| strict.check_host(black_box("github.com.evil.example"), black_box(443)));
    });
    group.bench_function("check_host wildcard", |b| {
        b.iter(|| strict.check_host(black_box("s3.us-east-1.amazonaws.com"), black_box(443)));
    });
    group.bench_function("check_ip public", |b| {
        b.iter(|| strict.check_ip(black_box("pypi.org"), black_box(443), black_box(public)));
    });
    group.bench_function("check_ip private refused", |b| {
        b.iter(|| strict.check_ip(black_box("pypi.org"), black_box(443), black_box(private)));
    });
    group.bench_function("check_ip open profile", |b| {
        b.iter(|| open.check_ip(black_box("example.org"), black_box(443), black_box(public)));
    });
    // Baseline in the same run: what a proxy pays anyway for the cheapest connection there is.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    group.bench_function("baseline: loopback TCP connect + accept", |b| {
        b.iter(|| {
            let client = std::net::TcpStream::connect(address).unwrap();
            let (server, _) = listener.accept().unwrap();
            black_box((client, server))
        });
    });
    group.finish();
}

fn rendering(c: &mut Criterion) {
    let data = SandboxData::builtin().unwrap();
    let owner = Owner {
        uid: 1000,
        gid: 1000,
    };
    let spec = SessionSpec {
        session_id: "0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b".into(),
        machine_id: "workstation-1".into(),
        folders: vec![
            FolderSpec {
                path: "/home/alice/project".into(),
                access: FolderAccess::ReadWrite,
                owner,
            },
            FolderSpec {
                path: "/home/alice/ref-docs".into(),
                access: FolderAccess::ReadOnly,
                owner,
            },
        ],
        cwd: "/home/alice/project".into(),
        network: NetworkProfileName::Standard,
        extra_hosts: vec![HostRule::parse("huggingface.co").unwrap()],
        credentials: vec![data.credential("ssh").unwrap()],
        private_home: Some("/home/alice/.local/state/paddock/homes/s1".into()),
        runner_dir: "/opt/paddock/bin".into(),
        image: format!("ghcr.io/example/sandbox@sha256:{}", "ab".repeat(32)),
        driver: MountDriver::Docker,
        secrets: vec![data.known_secret("GITHUB_TOKEN").unwrap()],
        environment: BTreeMap::new(),
        protected: Vec::new(),
    };
    let values = BTreeMap::from([("GITHUB_TOKEN".to_owned(), SecretValue::new("bench-value"))]);
    c.bench_function("render session (standard, ssh, one secret)", |b| {
        b.iter(|| render(black_box(&data), black_box(&spec), black_box(&values)).unwrap());
    });
    c.bench_function("parse builtin data", |b| {
        b.iter(|| SandboxData::builtin().unwrap());
    });
}

criterion_group!(benches, checks, rendering);
criterion_main!(benches);
