//! Wire shapes of messages, enums and RPCs, and the comparison that reports every mismatch.
//!
//! Both sides are reduced to the same plain data: ours from the compiled `FileDescriptorSet`,
//! upstream's from the JSON `conformance/dump_descriptors.py` prints. Only what decides
//! compatibility is kept: field names, numbers, types, labels, type names, oneof membership,
//! proto3 `optional`; enum value names and numbers; RPC input/output types and streaming.

use std::collections::BTreeMap;

use prost_types::{DescriptorProto, EnumDescriptorProto, FileDescriptorSet};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldShape {
    pub name: String,
    pub number: i32,
    /// `TYPE_STRING`, `TYPE_MESSAGE`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// `LABEL_OPTIONAL` or `LABEL_REPEATED`.
    pub label: String,
    /// Fully qualified with a leading dot; empty for scalars.
    pub type_name: String,
    pub oneof: Option<String>,
    pub proto3_optional: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageShape {
    pub fields: Vec<FieldShape>,
    pub map_entry: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumShape {
    pub values: BTreeMap<String, i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RpcShape {
    pub input_type: String,
    pub output_type: String,
    pub client_streaming: bool,
    pub server_streaming: bool,
}

/// A set of shapes keyed by full name (`openshell.v1.ExecSandboxRequest`,
/// `openshell.v1.OpenShell.ExecSandbox`). `None` = the name is not defined on that side.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    pub messages: BTreeMap<String, Option<MessageShape>>,
    pub enums: BTreeMap<String, Option<EnumShape>>,
    pub rpcs: BTreeMap<String, Option<RpcShape>>,
}

/// The names a schema declares, as the request the Python dumper reads.
#[derive(Debug, Serialize)]
pub struct NameRequest {
    pub messages: Vec<String>,
    pub enums: Vec<String>,
    pub rpcs: Vec<String>,
}

impl Schema {
    pub fn names(&self) -> NameRequest {
        NameRequest {
            messages: self.messages.keys().cloned().collect(),
            enums: self.enums.keys().cloned().collect(),
            rpcs: self.rpcs.keys().cloned().collect(),
        }
    }
}

/// Our shapes: every message (nested ones and map entries included), enum and RPC declared in
/// the descriptor set's `openshell.*` files. Imported `google.protobuf` files are skipped.
pub fn from_descriptor_set(set: &FileDescriptorSet) -> Schema {
    let mut schema = Schema::default();
    for file in &set.file {
        let package = file.package();
        if !package.starts_with("openshell.") {
            continue;
        }
        for message in &file.message_type {
            collect_message(&mut schema, package, message);
        }
        for enumeration in &file.enum_type {
            collect_enum(&mut schema, package, enumeration);
        }
        for service in &file.service {
            for method in &service.method {
                schema.rpcs.insert(
                    format!("{package}.{}.{}", service.name(), method.name()),
                    Some(RpcShape {
                        input_type: method.input_type().to_owned(),
                        output_type: method.output_type().to_owned(),
                        client_streaming: method.client_streaming(),
                        server_streaming: method.server_streaming(),
                    }),
                );
            }
        }
    }
    schema
}

fn collect_message(schema: &mut Schema, scope: &str, message: &DescriptorProto) {
    let full_name = format!("{scope}.{}", message.name());
    let fields = message
        .field
        .iter()
        .map(|field| FieldShape {
            name: field.name().to_owned(),
            number: field.number(),
            kind: field.r#type().as_str_name().to_owned(),
            label: field.label().as_str_name().to_owned(),
            type_name: field.type_name().to_owned(),
            oneof: field
                .oneof_index
                .and_then(|index| usize::try_from(index).ok())
                .and_then(|index| message.oneof_decl.get(index))
                .map(|oneof| oneof.name().to_owned()),
            proto3_optional: field.proto3_optional(),
        })
        .collect();
    let map_entry = message
        .options
        .as_ref()
        .is_some_and(|options| options.map_entry());
    for nested in &message.nested_type {
        collect_message(schema, &full_name, nested);
    }
    for enumeration in &message.enum_type {
        collect_enum(schema, &full_name, enumeration);
    }
    schema
        .messages
        .insert(full_name, Some(MessageShape { fields, map_entry }));
}

fn collect_enum(schema: &mut Schema, scope: &str, enumeration: &EnumDescriptorProto) {
    let values = enumeration
        .value
        .iter()
        .map(|value| (value.name().to_owned(), value.number()))
        .collect();
    schema.enums.insert(
        format!("{scope}.{}", enumeration.name()),
        Some(EnumShape { values }),
    );
}

/// Every way `ours` differs from `upstream`, one readable line per mismatch (empty = conformant).
/// Only what we declare is checked: upstream may have more messages, fields, values and RPCs.
pub fn compare(ours: &Schema, upstream: &Schema) -> Vec<String> {
    let mut diff = Vec::new();
    for (name, shape) in &ours.messages {
        let Some(ours) = shape else { continue };
        match upstream.messages.get(name) {
            Some(Some(theirs)) => compare_message(&mut diff, name, ours, theirs),
            _ => diff.push(format!("message {name}: not defined upstream")),
        }
    }
    for (name, shape) in &ours.enums {
        let Some(ours) = shape else { continue };
        match upstream.enums.get(name) {
            Some(Some(theirs)) => compare_enum(&mut diff, name, ours, theirs),
            _ => diff.push(format!("enum {name}: not defined upstream")),
        }
    }
    for (name, shape) in &ours.rpcs {
        let Some(ours) = shape else { continue };
        match upstream.rpcs.get(name) {
            Some(Some(theirs)) => compare_rpc(&mut diff, name, ours, theirs),
            _ => diff.push(format!("rpc {name}: not defined upstream")),
        }
    }
    diff
}

fn compare_message(diff: &mut Vec<String>, name: &str, ours: &MessageShape, theirs: &MessageShape) {
    if ours.map_entry != theirs.map_entry {
        diff.push(format!(
            "message {name}: map entry ours {}, upstream {}",
            ours.map_entry, theirs.map_entry
        ));
    }
    for field in &ours.fields {
        let at = format!("field {name}.{} (#{})", field.name, field.number);
        let Some(upstream) = theirs.fields.iter().find(|f| f.number == field.number) else {
            match theirs.fields.iter().find(|f| f.name == field.name) {
                Some(same_name) => diff.push(format!(
                    "{at}: upstream numbers `{}` #{}",
                    field.name, same_name.number
                )),
                None => diff.push(format!("{at}: no field with this number upstream")),
            }
            continue;
        };
        let mut differs = |what: &str, ours: &str, theirs: &str| {
            if ours != theirs {
                diff.push(format!("{at}: {what} ours `{ours}`, upstream `{theirs}`"));
            }
        };
        differs("name", &field.name, &upstream.name);
        differs("type", &field.kind, &upstream.kind);
        differs("label", &field.label, &upstream.label);
        differs("type name", &field.type_name, &upstream.type_name);
        differs(
            "oneof",
            field.oneof.as_deref().unwrap_or("-"),
            upstream.oneof.as_deref().unwrap_or("-"),
        );
        differs(
            "proto3 optional",
            &field.proto3_optional.to_string(),
            &upstream.proto3_optional.to_string(),
        );
    }
}

fn compare_enum(diff: &mut Vec<String>, name: &str, ours: &EnumShape, theirs: &EnumShape) {
    for (value, number) in &ours.values {
        match theirs.values.get(value) {
            Some(upstream) if upstream == number => {}
            Some(upstream) => diff.push(format!(
                "enum {name}.{value}: number ours {number}, upstream {upstream}"
            )),
            None => diff.push(format!(
                "enum {name}.{value} (= {number}): not defined upstream"
            )),
        }
    }
}

fn compare_rpc(diff: &mut Vec<String>, name: &str, ours: &RpcShape, theirs: &RpcShape) {
    let mut differs = |what: &str, ours: String, theirs: String| {
        if ours != theirs {
            diff.push(format!(
                "rpc {name}: {what} ours `{ours}`, upstream `{theirs}`"
            ));
        }
    };
    differs("input", ours.input_type.clone(), theirs.input_type.clone());
    differs(
        "output",
        ours.output_type.clone(),
        theirs.output_type.clone(),
    );
    differs(
        "client streaming",
        ours.client_streaming.to_string(),
        theirs.client_streaming.to_string(),
    );
    differs(
        "server streaming",
        ours.server_streaming.to_string(),
        theirs.server_streaming.to_string(),
    );
}
