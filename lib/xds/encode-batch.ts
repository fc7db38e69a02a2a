/**
 * Many resources encoded in one protobuf-es write. toBinary of one message starts an empty writer
 * and doubles its buffer until the message fits (a 1 KB ClusterLoadAssignment: four buffers
 * allocated and copied, then a fifth for the result), which cost 40% of the publish's encoding.
 * Here the resources of a flush chunk are the repeated fields of one EncodeBatch
 * (proto/edgepilot/xds/v1/encode_batch.proto): one writer grows to the chunk's size once, and each
 * resource's bytes are cut out of it with protobuf-es's own reader and copied into a buffer of
 * their own (nothing shares or pins the batch's buffer). A submessage's bytes are exactly its
 * standalone encoding (protobuf-es writes a child with the same compiled writer as toBinary), so
 * bodies and their content-hash versions are what toBinary gives, byte for byte. Messages of a
 * type the batch has no field for are encoded alone.
 */
import { create, type DescMessage, type Message, toBinary } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { type EncodeBatch, EncodeBatchSchema } from "../gen/edgepilot/xds/v1/encode_batch_pb.ts";

/** What to encode: a message and its schema. */
export interface Encodable {
  schema: DescMessage;
  message: Message;
}

/** The batch's repeated fields by the message schema they hold (the same descriptor objects generated code exports). */
const fields = new Map<DescMessage, { no: number; localName: string }>();
for (const f of EncodeBatchSchema.fields) {
  if (f.fieldKind === "list" && f.listKind === "message")
    fields.set(f.message, { no: f.number, localName: f.localName });
}

/** Whether messages of `schema` go into the batch's one write (else each is encoded alone). */
export function isBatched(schema: DescMessage): boolean {
  return fields.has(schema);
}

/** Fewer messages than this are encoded one by one: a batch of one saves nothing. */
const minBatch = 2;

/**
 * The bytes of every message in `items`, index for index, each equal to toBinary(schema, message)
 * and in a buffer of its own.
 */
export function encodeAll(items: readonly Encodable[]): Uint8Array[] {
  const out = new Array<Uint8Array>(items.length);
  if (items.length < minBatch) {
    for (let i = 0; i < items.length; i++) out[i] = encodeOne(items[i] as Encodable);
    return out;
  }
  const batch = create(EncodeBatchSchema) as unknown as Record<string, Message[]>;
  /** By field number: the indexes in `items` of the messages in that field, in order. */
  const slots = new Map<number, number[]>();
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as Encodable;
    const field = fields.get(item.schema);
    if (field === undefined) {
      out[i] = encodeOne(item);
      continue;
    }
    (batch[field.localName] as Message[]).push(item.message);
    const at = slots.get(field.no);
    if (at) at.push(i);
    else slots.set(field.no, [i]);
  }
  if (slots.size === 0) return out;
  const bytes = toBinary(EncodeBatchSchema, batch as unknown as EncodeBatch);
  const reader = new BinaryReader(bytes);
  const next = new Map<number, number>();
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    const at = slots.get(no);
    const k = next.get(no) ?? 0;
    if (wireType !== WireType.LengthDelimited || at === undefined || k >= at.length)
      throw new Error(`encode batch: unexpected field ${no} (wire type ${wireType}) in the batch's bytes`);
    out[at[k] as number] = reader.bytes().slice();
    next.set(no, k + 1);
  }
  for (const [no, at] of slots)
    if ((next.get(no) ?? 0) !== at.length)
      throw new Error(`encode batch: field ${no} held ${next.get(no) ?? 0} of ${at.length} messages`);
  return out;
}

function encodeOne(item: Encodable): Uint8Array {
  return toBinary(item.schema, item.message);
}
