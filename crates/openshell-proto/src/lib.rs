//! Paddock's subset of the OpenShell gRPC wire, compatible with OpenShell 0.1.x gateways.
//!
//! The `.proto` files under `proto/` are Paddock's own: they declare only the RPCs, messages,
//! fields and enums Paddock sets or reads, with names, numbers, types and labels exactly as in
//! OpenShell [`OPENSHELL_WIRE_VERSION`]. `tests/wire_conformance.rs` proves that against the
//! release's published Python wheel. Layer 0: types only, no logic.
//!
//! - [`v1`]: the `openshell.v1` package (requests, responses; the `OpenShell` service client
//!   and server with the `grpc` feature).
//! - [`sandbox`]: `openshell.sandbox.v1`, the sandbox policy and live configuration.
//! - [`datamodel`]: `openshell.datamodel.v1`, object metadata, workspaces and providers.

mod generated {
    pub mod openshell {
        pub mod datamodel {
            #[allow(clippy::all, clippy::pedantic, missing_docs, unused_qualifications)]
            pub mod v1 {
                include!(concat!(env!("OUT_DIR"), "/openshell.datamodel.v1.rs"));
            }
        }
        pub mod sandbox {
            #[allow(clippy::all, clippy::pedantic, missing_docs, unused_qualifications)]
            pub mod v1 {
                include!(concat!(env!("OUT_DIR"), "/openshell.sandbox.v1.rs"));
            }
        }
        #[allow(clippy::all, clippy::pedantic, missing_docs, unused_qualifications)]
        pub mod v1 {
            include!(concat!(env!("OUT_DIR"), "/openshell.v1.rs"));
        }
    }
}

mod provider_debug;

pub use generated::openshell::datamodel::v1 as datamodel;
pub use generated::openshell::sandbox::v1 as sandbox;
pub use generated::openshell::v1;
pub use prost;
pub use prost_types;

/// The OpenShell release whose wire this crate speaks (and the PyPI `openshell` version the
/// conformance test compares against). Gateways of the same minor line (0.1.x) are compatible.
pub const OPENSHELL_WIRE_VERSION: &str = "0.1.5";

/// The compiled `FileDescriptorSet` of Paddock's subset (our `.proto` files plus the
/// `google/protobuf` imports), as encoded bytes. Decode with `prost_types::FileDescriptorSet`.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/openshell_descriptor_set.bin"));

/// The workspace Paddock always names explicitly (0.1.x treats an empty selector as an error).
pub const DEFAULT_WORKSPACE: &str = "default";

/// A selector for [`DEFAULT_WORKSPACE`], the value every Paddock request carries.
pub fn default_workspace() -> datamodel::WorkspaceSelector {
    datamodel::WorkspaceSelector {
        selection: Some(datamodel::workspace_selector::Selection::Workspace(
            DEFAULT_WORKSPACE.to_owned(),
        )),
    }
}
