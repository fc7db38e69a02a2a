/**
 * Builders of one-field messages carrying any `(validate.rules)`, made from a FileDescriptorProto at
 * test time, for the rule kinds no generated Envoy field carries (email, uuid, timestamp rules...):
 * the checker reads them exactly as it reads lib/gen's descriptors, through getOption.
 */
import {
  create,
  createFileRegistry,
  type DescMessage,
  type MessageInitShape,
  setExtension,
} from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  type FieldDescriptorProtoSchema,
  FieldOptionsSchema,
  FileDescriptorProtoSchema,
  file_google_protobuf_any,
  file_google_protobuf_duration,
  file_google_protobuf_timestamp,
  file_google_protobuf_wrappers,
  MessageOptionsSchema,
  OneofOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import {
  disabled,
  FieldRulesSchema,
  file_validate_validate,
  ignored,
  required,
  rules,
} from "../../../lib/gen/validate/validate_pb.ts";

const T = FieldDescriptorProto_Type;
/** Proto scalar and kind names ─▶ descriptor types. */
export const protoType = {
  double: T.DOUBLE,
  float: T.FLOAT,
  int64: T.INT64,
  uint64: T.UINT64,
  int32: T.INT32,
  fixed64: T.FIXED64,
  fixed32: T.FIXED32,
  bool: T.BOOL,
  string: T.STRING,
  bytes: T.BYTES,
  uint32: T.UINT32,
  sfixed32: T.SFIXED32,
  sfixed64: T.SFIXED64,
  sint32: T.SINT32,
  sint64: T.SINT64,
  enum: T.ENUM,
  message: T.MESSAGE,
} as const;
export type ProtoTypeName = keyof typeof protoType;

type RulesInit = MessageInitShape<typeof FieldRulesSchema>;
type FieldInit = MessageInitShape<typeof FieldDescriptorProtoSchema>;

/** The field `v`: its type (message types by full name, e.g. google.protobuf.Duration), rules, shape. */
export interface FieldSpec {
  type: ProtoTypeName;
  message?: string;
  rules?: RulesInit;
  repeated?: boolean;
  /** proto3 `optional`. */
  optional?: boolean;
  /** A map<key, type> instead. */
  mapKey?: "string" | "int32";
}

/** Message-level shapes: `(validate.disabled)`, `(validate.ignored)`, a required oneof of `a`/`b`. */
export interface MessageSpec {
  disabled?: boolean;
  ignored?: boolean;
  requiredOneof?: boolean;
}

let counter = 0;

function fieldOptions(r: RulesInit | undefined) {
  if (!r) return undefined;
  const o = create(FieldOptionsSchema);
  setExtension(o, rules, create(FieldRulesSchema, r));
  return o;
}

/** A message `T` with field `v` per `spec` (and the enum `E { E_ZERO, E_ONE, E_TWO }` beside it). */
export function ruleMessage(spec: FieldSpec | undefined, shape: MessageSpec = {}): DescMessage {
  const pkg = `pgvt${++counter}`;
  const typeName = (s: FieldSpec) =>
    s.type === "enum" ? `.${pkg}.E` : s.type === "message" ? `.${s.message}` : undefined;
  const fields: FieldInit[] = [];
  const nested = [];
  if (spec?.mapKey) {
    nested.push({
      name: "VEntry",
      options: { mapEntry: true },
      field: [
        {
          name: "key",
          number: 1,
          label: FieldDescriptorProto_Label.OPTIONAL,
          type: protoType[spec.mapKey],
          jsonName: "key",
        },
        {
          name: "value",
          number: 2,
          label: FieldDescriptorProto_Label.OPTIONAL,
          type: protoType[spec.type],
          typeName: typeName(spec),
          jsonName: "value",
        },
      ],
    });
    fields.push({
      name: "v",
      number: 1,
      label: FieldDescriptorProto_Label.REPEATED,
      type: T.MESSAGE,
      typeName: `.${pkg}.T.VEntry`,
      jsonName: "v",
      options: fieldOptions(spec.rules),
    });
  } else if (spec) {
    fields.push({
      name: "v",
      number: 1,
      jsonName: "v",
      label: spec.repeated ? FieldDescriptorProto_Label.REPEATED : FieldDescriptorProto_Label.OPTIONAL,
      type: protoType[spec.type],
      typeName: typeName(spec),
      options: fieldOptions(spec.rules),
      ...(spec.optional && { proto3Optional: true, oneofIndex: 0 }),
    });
  }
  const oneofs = [];
  if (spec?.optional) oneofs.push({ name: "_v" });
  if (shape.requiredOneof) {
    const o = create(OneofOptionsSchema);
    setExtension(o, required, true);
    oneofs.push({ name: "o", options: o });
    const index = oneofs.length - 1;
    fields.push({
      name: "a",
      number: 2,
      jsonName: "a",
      label: FieldDescriptorProto_Label.OPTIONAL,
      type: T.STRING,
      oneofIndex: index,
    });
    fields.push({
      name: "b",
      number: 3,
      jsonName: "b",
      label: FieldDescriptorProto_Label.OPTIONAL,
      type: T.INT32,
      oneofIndex: index,
    });
  }
  const mo = create(MessageOptionsSchema);
  if (shape.disabled) setExtension(mo, disabled, true);
  if (shape.ignored) setExtension(mo, ignored, true);
  const file = create(FileDescriptorProtoSchema, {
    name: `${pkg}.proto`,
    package: pkg,
    syntax: "proto3",
    dependency: [
      "validate/validate.proto",
      "google/protobuf/duration.proto",
      "google/protobuf/timestamp.proto",
      "google/protobuf/any.proto",
      "google/protobuf/wrappers.proto",
    ],
    enumType: [
      { name: "E", value: [0, 1, 2].map((n) => ({ name: `E_${["ZERO", "ONE", "TWO"][n]}`, number: n })) },
    ],
    messageType: [{ name: "T", field: fields, nestedType: nested, oneofDecl: oneofs, options: mo }],
  });
  const deps = [
    file_validate_validate,
    file_google_protobuf_duration,
    file_google_protobuf_timestamp,
    file_google_protobuf_any,
    file_google_protobuf_wrappers,
  ];
  const registry = createFileRegistry(file, (name) => deps.find((d) => `${d.name}.proto` === name));
  return registry.getMessage(`${pkg}.T`) as DescMessage;
}
