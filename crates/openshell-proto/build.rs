//! Compiles Paddock's OpenShell `.proto` subset with the vendored `protoc` (no system protoc).
//!
//! Messages are always generated; the tonic client and server only with the `grpc` feature.
//! Output goes to `OUT_DIR`, together with the descriptor set the conformance test reads.

use std::path::PathBuf;

const PROTOS: &[&str] = &[
    "proto/openshell/datamodel/v1/datamodel.proto",
    "proto/openshell/sandbox/v1/sandbox.proto",
    "proto/openshell/v1/openshell.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let well_known = protoc_bin_vendored::include_path()?;
    // SAFETY: a build script is single-threaded here; nothing else reads the environment yet.
    unsafe { std::env::set_var("PROTOC", &protoc) };

    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let grpc = std::env::var_os("CARGO_FEATURE_GRPC").is_some();

    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }

    tonic_prost_build::configure()
        .build_client(grpc)
        .build_server(grpc)
        // Callers build their own channel (mTLS or plaintext); no `connect` helper needed.
        .build_transport(false)
        // Unimplemented by default: a test double implements only the RPCs it serves.
        .generate_default_stubs(true)
        // Ordered maps: rendered requests and snapshots are deterministic.
        .btree_map(".")
        // Provider carries secret values: its Debug is hand-written and redacts them.
        .skip_debug(["openshell.datamodel.v1.Provider"])
        .file_descriptor_set_path(out_dir.join("openshell_descriptor_set.bin"))
        .compile_protos(
            &PROTOS.iter().map(PathBuf::from).collect::<Vec<_>>(),
            &[PathBuf::from("proto"), well_known],
        )?;
    Ok(())
}
