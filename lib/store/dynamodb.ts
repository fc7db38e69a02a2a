/**
 * The Store port on DynamoDB (AWS SDK v3, low-level client): one table, keyed as
 * lib/store/dynamodb-table.ts declares (pk, sk, `ttl`), calling only its `tableActions`.
 *
 * Key design. A store key is split into a partition (the partition key) and the rest (the sort
 * key): the partition is the key up to its family's depth-th "/" (dynamodb-layout.ts
 * `partitionDepths`), so every prefix the hot paths list (`svc/`, `svc/<ns>/<host>/`,
 * `eps/<ns>/<host>/<cluster>/`, `xds/<type URL>/`, `cfg/<kind>/`, `pod/<cluster>/<ns>/`,
 * `push/pending/`, `proxy/`, ...) is one Query with begins_with on the sort key, paged by
 * ExclusiveStartKey (the cursor is the last key), never a Scan. The depths spread the families that
 * take the most writes over many partition key values, since DynamoDB serves about 1,000 write and
 * 3,000 read units per second per partition key value: endpoint pieces per service and cluster, shards
 * per namespace, object records per cluster, kind and namespace, pods per namespace. Families listed
 * whole on the flush path stay one partition: `svc/` (Services change rarely), `xds/<type>/` (its
 * wildcard lists), `gen/`, `proxy/` (a status write per stream at most every second: past about
 * 1,000 streams per table that partition throttles). A prefix shorter than its family's partitions
 * (`shard/` for /debug/endpointShardz and the inventory gauges, `obj/<cluster>/<kind>/` for a
 * resync, `cfg/` for /debug/configz, the empty prefix) is read partition by partition: the
 * directory partition (`#partitions`) names every data partition, written once per process before
 * its first write, and partitions in sort key order hold keys in key order, so pages stay ascending.
 * Partitions emptied later stay named (an empty Query each when walked).
 *
 * Values: codec.ts's encoding, deflated, in one binary attribute `b` (dynamodb-values.ts), and the
 * version in `v`. A value too large for one item (400 KB) is split into chunks written first under
 * a new chunk set id (partition `#chunk/<id>`, one partition per set, so big writes spread too); the
 * head then names the set (`c`, `n`) with a single-item condition on its version, and the set it
 * replaced is deleted after. A reader gets the head, then the chunks (BatchGetItem); a chunk that is
 * gone means a later write replaced the set, so it reads the head again: a value is never torn or
 * mixed, because a chunk set is never changed once written. Proxy status records (`proxy/`) carry
 * `ttl` from their `expiresAt` so DynamoDB removes a dead process's records by itself.
 *
 * Every read is strongly consistent (the core reads what it just wrote and compare-and-sets on it).
 * No transactions (dynalite, the local server the tests run, has none): every condition is on one item.
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { logSafe } from "../log-safe.ts";
import { batchGet, batchWrite, type Item } from "./dynamodb-batch.ts";
import {
  chunkPk,
  chunkSk,
  directoryPk,
  isProxyKey,
  itemKey,
  listPlan,
  storeKeyOf,
} from "./dynamodb-layout.ts";
import { readList } from "./dynamodb-list.ts";
import { bytesToValue, joinBytes, splitBytes, valueToBytes } from "./dynamodb-values.ts";
import { pageLimit } from "./sql.ts";
import type { DeleteOptions, Entry, ListOptions, ListPage, PutOptions, PutResult, Store } from "./store.ts";

export interface DynamoStoreOptions {
  client: DynamoDBClient;
  /** The table (DYNAMODB_TABLE), with lib/store/dynamodb-table.ts's key schema. */
  table: string;
  /** The largest item written (DynamoDB's limit, 400 KB, by default); tests lower it to make chunks of small values. */
  maxItemBytes?: number;
  /** Waits between retries of unprocessed batch items (default setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** Times a reader re-reads a head whose chunks a writer replaced before it gives up (default 32). */
  maxTornReads?: number;
}

/** DynamoDB's item size limit. */
export const dynamoMaxItemBytes = 400 * 1024;

/** Room in an item for attribute names, the version, the TTL and DynamoDB's own overhead. */
const itemOverhead = 128;

/** The bytes of value one chunk item holds under `maxItemBytes` (the rest: its keys and attribute names). */
export function chunkPayloadBytes(maxItemBytes: number): number {
  return maxItemBytes - itemOverhead - chunkPk(crypto.randomUUID()).length - 4;
}

/** Creates the Store over `options.table`; nothing is called until the first store call. */
export function createDynamoStore(options: DynamoStoreOptions): Store {
  const { client, table } = options;
  const maxItemBytes = options.maxItemBytes ?? dynamoMaxItemBytes;
  const maxTornReads = options.maxTornReads ?? 32;
  const batch = { client, table, ...(options.sleep && { sleep: options.sleep }) };
  const chunkBytes = chunkPayloadBytes(maxItemBytes);
  /** Partitions this process has named in the directory (the promise, so concurrent writers share one call). */
  const named = new Map<string, Promise<void>>();

  const nameInDirectory = (pk: string): Promise<void> => {
    let done = named.get(pk);
    if (!done) {
      done = client
        .send(new PutItemCommand({ TableName: table, Item: { pk: s(directoryPk), sk: s(pk) } }))
        .then(() => undefined);
      done.catch(() => named.delete(pk)); // retried by the next write
      named.set(pk, done);
    }
    return done;
  };

  /** The chunks of set `id`, joined; undefined when one is gone (a later write replaced the set). */
  const readChunks = async (id: string, count: number): Promise<Uint8Array | undefined> => {
    const keys = Array.from({ length: count }, (_, i) => ({ pk: s(chunkPk(id)), sk: s(chunkSk(i)) }));
    const items = await batchGet(batch, keys);
    if (items.length !== count) return undefined;
    const pieces: Uint8Array[] = new Array(count);
    for (const item of items) pieces[Number(item.sk?.S)] = item.b?.B as Uint8Array;
    return joinBytes(pieces);
  };

  const deleteChunks = async (id: string, count: number): Promise<void> => {
    const deletes = Array.from({ length: count }, (_, i) => ({
      DeleteRequest: { Key: { pk: s(chunkPk(id)), sk: s(chunkSk(i)) } },
    }));
    await batchWrite(batch, deletes);
  };

  const getHead = async (key: string): Promise<Item | undefined> =>
    (await client.send(new GetItemCommand({ TableName: table, Key: keyOf(key), ConsistentRead: true }))).Item;

  /** The entry a head item holds, its chunks read (and the head re-read while a writer replaces them). */
  const entryOf = async <T>(key: string, head: Item | undefined): Promise<Entry<T> | undefined> => {
    for (let attempt = 1; ; attempt++) {
      if (head === undefined) return undefined;
      const version = Number(head.v?.N);
      if (head.b?.B) return { key, value: bytesToValue<T>(head.b.B), version };
      const bytes = await readChunks(head.c?.S ?? "", Number(head.n?.N));
      if (bytes) return { key, value: bytesToValue<T>(bytes), version };
      if (attempt >= maxTornReads)
        throw new Error(
          `dynamodb store: ${key} kept being rewritten while read; gave up after ${attempt} reads`,
        );
      head = await getHead(key);
    }
  };

  /** Writes a large value's chunks under a new set id; returns the head's attributes naming it. */
  const writeChunks = async (bytes: Uint8Array): Promise<{ id: string; count: number }> => {
    const id = crypto.randomUUID();
    const pieces = splitBytes(bytes, chunkBytes);
    await batchWrite(
      batch,
      pieces.map((b, i) => ({
        PutRequest: { Item: { pk: s(chunkPk(id)), sk: s(chunkSk(i)), b: { B: b } } },
      })),
    );
    return { id, count: pieces.length };
  };

  /** Removes the chunks a head no longer names (an orphan set costs storage, never correctness). */
  const dropReplaced = async (old: Item | undefined): Promise<void> => {
    if (old?.c?.S) await deleteChunks(old.c.S, Number(old.n?.N)).catch(() => {});
  };

  const get = async <T>(key: string): Promise<Entry<T> | undefined> => entryOf<T>(key, await getHead(key));

  return {
    get,

    async getMany<T>(keys: readonly string[]) {
      const out = new Map<string, Entry<T>>();
      const unique = [...new Set(keys)];
      const heads = await batchGet(batch, unique.map(keyOf));
      for (const head of heads) {
        const key = storeKeyOf(head.pk?.S ?? "", head.sk?.S ?? "");
        const entry = await entryOf<T>(key, head);
        if (entry) out.set(key, entry);
      }
      return out;
    },

    async put<T>(key: string, value: T, put: PutOptions = {}): Promise<PutResult> {
      const bytes = valueToBytes(value);
      const head = keyOf(key);
      const [pk, sk] = [head.pk?.S as string, head.sk?.S as string];
      await nameInDirectory(pk);
      const ttl = ttlOf(key, value);
      const inline = bytes.length <= maxItemBytes - itemOverhead - utf8Length(pk) - utf8Length(sk);
      const set = inline ? undefined : await writeChunks(bytes);
      const body: Item = set ? { c: s(set.id), n: n(set.count) } : { b: { B: bytes } };
      if (ttl !== undefined) body.ttl = n(ttl);
      try {
        if (put.ifVersion === undefined) {
          const answer = await client.send(unconditional(table, keyOf(key), body));
          await dropReplaced(answer.Attributes);
          return { ok: true, version: Number(answer.Attributes?.v?.N ?? 0) + 1 };
        }
        const answer = await client.send(
          new PutItemCommand({
            TableName: table,
            Item: { pk: s(pk), sk: s(sk), v: n(put.ifVersion + 1), ...body },
            ...versionCondition(put.ifVersion),
            ReturnValues: "ALL_OLD",
          }),
        );
        await dropReplaced(answer.Attributes);
        return { ok: true, version: put.ifVersion + 1 };
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e; // the new set stays: the write may have landed
        if (set) await deleteChunks(set.id, set.count).catch(() => {}); // refused: no head names the new set
        return { ok: false, current: await get(key) };
      }
    },

    async delete(key: string, options: DeleteOptions = {}) {
      try {
        const answer = await client.send(
          new DeleteItemCommand({
            TableName: table,
            Key: keyOf(key),
            ...(options.ifVersion !== undefined && versionCondition(options.ifVersion)),
            ReturnValues: "ALL_OLD",
          }),
        );
        await dropReplaced(answer.Attributes);
        return answer.Attributes !== undefined;
      } catch (e) {
        if (e instanceof ConditionalCheckFailedException) return false;
        throw e;
      }
    },

    async list<T>(prefix: string, options: ListOptions = {}): Promise<ListPage<T>> {
      const limit = pageLimit(options.limit);
      const query = async (pk: string, skPrefix: string, max: number, after?: string) => {
        const answer = await client.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: "pk = :pk AND begins_with(sk, :sk)",
            ExpressionAttributeValues: { ":pk": s(pk), ":sk": s(skPrefix) },
            ...(after !== undefined && { ExclusiveStartKey: { pk: s(pk), sk: s(after) } }),
            Limit: max,
            ConsistentRead: true,
          }),
        );
        return { items: answer.Items ?? [], more: answer.LastEvaluatedKey !== undefined };
      };
      const page = await readList(listPlan(prefix), prefix, limit, options.cursor, query);
      const entries: Entry<T>[] = [];
      for (const head of page.items) {
        const key = storeKeyOf(head.pk?.S ?? "", head.sk?.S ?? "");
        const entry = await entryOf<T>(key, head);
        if (entry) entries.push(entry);
      }
      return page.cursor === undefined ? { entries } : { entries, cursor: page.cursor };
    },
  };
}

function s(value: string): AttributeValue.SMember {
  return { S: value };
}

function n(value: number): AttributeValue.NMember {
  return { N: String(value) };
}

/** DynamoDB's limits on key attributes, in UTF-8 bytes. */
const maxPkBytes = 2048;
const maxSkBytes = 1024;

/** The table key of a store key; throws, naming the key, when it is longer than DynamoDB's key attributes hold. */
function keyOf(key: string): Item {
  const { pk, sk } = itemKey(key);
  const [pkBytes, skBytes] = [utf8Length(pk), utf8Length(sk)];
  if (pkBytes > maxPkBytes || skBytes > maxSkBytes)
    throw new RangeError(
      `dynamodb store: key ${logSafe(key)} is too long for DynamoDB (partition ${pkBytes} of ${maxPkBytes} bytes, sort ${skBytes} of ${maxSkBytes})`,
    );
  return { pk: s(pk), sk: s(sk) };
}

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** The condition of a compare-and-set: absent for 0, else at exactly that version. */
function versionCondition(ifVersion: number) {
  return ifVersion === 0
    ? { ConditionExpression: "attribute_not_exists(pk)" }
    : { ConditionExpression: "v = :v", ExpressionAttributeValues: { ":v": n(ifVersion) } };
}

/**
 * An unconditional write that still counts versions: the version goes up by one from what is
 * stored (1 when nothing is), in the same single-item update, and the old attributes come back so
 * the chunks the write replaced can go.
 */
function unconditional(table: string, key: Item, body: Item): UpdateItemCommand {
  const set = ["v = if_not_exists(v, :zero) + :one"];
  const names: Record<string, string> = {};
  const values: Item = { ":zero": n(0), ":one": n(1) };
  for (const [name, value] of Object.entries(body)) {
    set.push(`#${name} = :${name}`);
    names[`#${name}`] = name;
    values[`:${name}`] = value;
  }
  const remove = ["b", "c", "n", "ttl"].filter((name) => !(name in body));
  for (const name of remove) names[`#${name}`] = name;
  const removing = remove.length > 0 ? ` REMOVE ${remove.map((r) => `#${r}`).join(", ")}` : "";
  return new UpdateItemCommand({
    TableName: table,
    Key: key,
    UpdateExpression: `SET ${set.join(", ")}${removing}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValues: "UPDATED_OLD",
  });
}

/** Epoch seconds a proxy status record expires at (its `expiresAt`, ms), for the `ttl` attribute. */
function ttlOf(key: string, value: unknown): number | undefined {
  if (!isProxyKey(key) || typeof value !== "object" || value === null) return undefined;
  const at = (value as { expiresAt?: unknown }).expiresAt;
  return typeof at === "number" && Number.isFinite(at) ? Math.ceil(at / 1000) : undefined;
}
