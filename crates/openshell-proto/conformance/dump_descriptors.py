"""Dump the upstream OpenShell wire schema for the names Paddock declares.

Run with the `openshell` wheel installed (it embeds the release's serialized descriptors).
Reads a JSON request on stdin:

    {"messages": ["openshell.v1.HealthRequest", ...],
     "enums": ["openshell.v1.ServiceStatus", ...],
     "rpcs": ["openshell.v1.OpenShell.Health", ...]}

and writes a JSON object with the same three keys to stdout. Each requested name maps to its
upstream shape, or to null when the upstream release does not define it:

    messages: {name: {"fields": [{"name", "number", "type", "label", "type_name",
                                  "oneof", "proto3_optional"}], "map_entry": bool}}
    enums:    {name: {"values": {value_name: number}}}
    rpcs:     {name: {"input_type", "output_type", "client_streaming", "server_streaming"}}

`type` and `label` use the descriptor.proto enum names (TYPE_STRING, LABEL_REPEATED, ...) and
`type_name` is fully qualified with a leading dot, as protoc writes it.
"""

import json
import sys

from google.protobuf import descriptor_pb2

# Importing the generated modules registers the release's descriptors in the default pool.
from openshell._proto import datamodel_pb2, openshell_pb2, sandbox_pb2  # noqa: F401

POOL = openshell_pb2.DESCRIPTOR.pool
FIELD_TYPES = {number: name for name, number in descriptor_pb2.FieldDescriptorProto.Type.items()}
FIELD_LABELS = {number: name for name, number in descriptor_pb2.FieldDescriptorProto.Label.items()}


def message_shape(full_name):
    try:
        descriptor = POOL.FindMessageTypeByName(full_name)
    except KeyError:
        return None
    proto = descriptor_pb2.DescriptorProto()
    descriptor.CopyToProto(proto)
    fields = []
    for field in proto.field:
        oneof = None
        if field.HasField("oneof_index"):
            oneof = proto.oneof_decl[field.oneof_index].name
        fields.append(
            {
                "name": field.name,
                "number": field.number,
                "type": FIELD_TYPES[field.type],
                "label": FIELD_LABELS[field.label],
                "type_name": field.type_name,
                "oneof": oneof,
                "proto3_optional": field.proto3_optional,
            }
        )
    return {"fields": fields, "map_entry": proto.options.map_entry}


def enum_shape(full_name):
    try:
        descriptor = POOL.FindEnumTypeByName(full_name)
    except KeyError:
        return None
    return {"values": {value.name: value.number for value in descriptor.values}}


def rpc_shape(full_name):
    service_name, _, method_name = full_name.rpartition(".")
    try:
        service = POOL.FindServiceByName(service_name)
    except KeyError:
        return None
    method = service.methods_by_name.get(method_name)
    if method is None:
        return None
    proto = descriptor_pb2.MethodDescriptorProto()
    method.CopyToProto(proto)
    return {
        "input_type": proto.input_type,
        "output_type": proto.output_type,
        "client_streaming": proto.client_streaming,
        "server_streaming": proto.server_streaming,
    }


def main():
    request = json.load(sys.stdin)
    answer = {
        "messages": {name: message_shape(name) for name in request.get("messages", [])},
        "enums": {name: enum_shape(name) for name in request.get("enums", [])},
        "rpcs": {name: rpc_shape(name) for name in request.get("rpcs", [])},
    }
    json.dump(answer, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
