//! Wire conformance: every message, field, enum value and RPC Paddock declares must exist in the
//! OpenShell release named by `OPENSHELL_WIRE_VERSION` with identical name, number, type, label
//! and type name. Upstream's shapes come from the release's PyPI wheel (its `_pb2` modules embed
//! the serialized descriptors); the first run installs it into a venv under `target/`.

#![allow(
    clippy::expect_used,
    reason = "test helpers: a panic is a failed test with a message"
)]

#[path = "conformance/shape.rs"]
mod shape;
#[path = "conformance/upstream.rs"]
mod upstream;

use openshell_proto::{FILE_DESCRIPTOR_SET, OPENSHELL_WIRE_VERSION};
use prost::Message;
use prost_types::FileDescriptorSet;

fn our_descriptor_set() -> FileDescriptorSet {
    FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).expect("FILE_DESCRIPTOR_SET decodes")
}

#[test]
fn our_subset_matches_the_openshell_release() {
    let ours = shape::from_descriptor_set(&our_descriptor_set());
    let upstream =
        upstream::shapes(OPENSHELL_WIRE_VERSION, &ours.names()).unwrap_or_else(|error| {
            panic!("could not read OpenShell {OPENSHELL_WIRE_VERSION}: {error}")
        });
    let diff = shape::compare(&ours, &upstream);
    assert!(
        diff.is_empty(),
        "Paddock's proto subset differs from OpenShell {OPENSHELL_WIRE_VERSION} \
         ({} mismatches):\n{}",
        diff.len(),
        diff.join("\n")
    );
    // The comparison ran over real data, not an empty answer.
    assert!(upstream.messages.values().filter(|m| m.is_some()).count() > 50);
}

/// The RPCs Paddock's OpenShell provider calls; dropping one from the `.proto` is a defect.
const RPCS_WE_CALL: &[&str] = &[
    "Health",
    "GetGatewayInfo",
    "GetCurrentUser",
    "CreateSandbox",
    "GetSandbox",
    "ListSandboxes",
    "WatchSandbox",
    "DeleteSandbox",
    "ExecSandbox",
    "ExecSandboxInteractive",
    "GetSandboxLogs",
    "GetSandboxConfig",
    "UpdateConfig",
    "GetSandboxPolicyStatus",
    "GetDraftPolicy",
    "ApproveDraftChunk",
    "RejectDraftChunk",
    "CreateProvider",
    "DeleteProvider",
    "ListProviders",
];

#[test]
fn every_rpc_we_call_is_declared() {
    let ours = shape::from_descriptor_set(&our_descriptor_set());
    let missing: Vec<&str> = RPCS_WE_CALL
        .iter()
        .copied()
        .filter(|rpc| {
            !ours
                .rpcs
                .contains_key(&format!("openshell.v1.OpenShell.{rpc}"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "RPCs missing from openshell.proto: {missing:?}"
    );
    assert_eq!(
        ours.rpcs.len(),
        RPCS_WE_CALL.len(),
        "{:?}",
        ours.rpcs.keys()
    );
}

// ---- The comparison can fail: altered descriptors must be named in the diff. -------------

/// Our own shapes stand in for upstream; a copy with one deliberate change plays "ours".
fn altered(change: impl FnOnce(&mut FileDescriptorSet)) -> Vec<String> {
    let pristine = our_descriptor_set();
    let mut changed = pristine.clone();
    change(&mut changed);
    shape::compare(
        &shape::from_descriptor_set(&changed),
        &shape::from_descriptor_set(&pristine),
    )
}

fn message_mut<'a>(
    set: &'a mut FileDescriptorSet,
    package: &str,
    name: &str,
) -> &'a mut prost_types::DescriptorProto {
    set.file
        .iter_mut()
        .filter(|file| file.package() == package)
        .flat_map(|file| file.message_type.iter_mut())
        .find(|message| message.name() == name)
        .expect("message exists")
}

#[test]
fn identical_descriptors_have_no_diff() {
    assert_eq!(altered(|_| {}), Vec::<String>::new());
}

#[test]
fn a_renumbered_field_is_named() {
    let diff = altered(|set| {
        let request = message_mut(set, "openshell.v1", "CreateSandboxRequest");
        let field = request
            .field
            .iter_mut()
            .find(|f| f.name() == "name")
            .expect("name");
        field.number = Some(42);
    });
    assert_eq!(
        diff,
        ["field openshell.v1.CreateSandboxRequest.name (#42): upstream numbers `name` #2"]
    );
}

#[test]
fn a_changed_field_type_is_named() {
    use prost_types::field_descriptor_proto::Type;
    let diff = altered(|set| {
        // The kind of break 0.0.x → 0.1.x made: same number, different type.
        let spec = message_mut(set, "openshell.v1", "ExecSandboxRequest");
        let field = spec
            .field
            .iter_mut()
            .find(|f| f.name() == "tty")
            .expect("tty");
        field.set_type(Type::String);
    });
    assert_eq!(
        diff,
        [
            "field openshell.v1.ExecSandboxRequest.tty (#7): type ours `TYPE_STRING`, upstream `TYPE_BOOL`"
        ]
    );
}

#[test]
fn a_changed_label_and_type_name_are_named() {
    use prost_types::field_descriptor_proto::Label;
    let diff = altered(|set| {
        let spec = message_mut(set, "openshell.v1", "SandboxSpec");
        let field = spec
            .field
            .iter_mut()
            .find(|f| f.name() == "policy")
            .expect("policy");
        field.set_label(Label::Repeated);
        field.type_name = Some(".openshell.v1.Sandbox".into());
    });
    assert_eq!(
        diff,
        [
            "field openshell.v1.SandboxSpec.policy (#7): label ours `LABEL_REPEATED`, upstream `LABEL_OPTIONAL`",
            "field openshell.v1.SandboxSpec.policy (#7): type name ours `.openshell.v1.Sandbox`, upstream `.openshell.sandbox.v1.SandboxPolicy`",
        ]
    );
}

#[test]
fn a_changed_enum_value_and_a_streaming_flip_are_named() {
    let diff = altered(|set| {
        let file = set
            .file
            .iter_mut()
            .find(|file| file.package() == "openshell.v1")
            .expect("openshell.v1");
        let phase = file
            .enum_type
            .iter_mut()
            .find(|e| e.name() == "SandboxPhase")
            .expect("SandboxPhase");
        let ready = phase
            .value
            .iter_mut()
            .find(|v| v.name() == "SANDBOX_PHASE_READY")
            .expect("READY");
        ready.number = Some(7);
        let exec = file.service[0]
            .method
            .iter_mut()
            .find(|m| m.name() == "ExecSandbox")
            .expect("ExecSandbox");
        exec.server_streaming = Some(false);
    });
    assert_eq!(
        diff,
        [
            "enum openshell.v1.SandboxPhase.SANDBOX_PHASE_READY: number ours 7, upstream 2",
            "rpc openshell.v1.OpenShell.ExecSandbox: server streaming ours `false`, upstream `true`",
        ]
    );
}

#[test]
fn a_field_unknown_upstream_is_named() {
    let diff = altered(|set| {
        let request = message_mut(set, "openshell.v1", "HealthRequest");
        request.field.push(prost_types::FieldDescriptorProto {
            name: Some("verbose".into()),
            number: Some(9),
            label: Some(prost_types::field_descriptor_proto::Label::Optional.into()),
            r#type: Some(prost_types::field_descriptor_proto::Type::Bool.into()),
            ..Default::default()
        });
    });
    assert_eq!(
        diff,
        ["field openshell.v1.HealthRequest.verbose (#9): no field with this number upstream"]
    );
}
