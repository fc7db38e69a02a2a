/**
 * DynamoDB's batch calls as the Store adapter needs them: BatchGetItem of any number of keys (100
 * per call, strongly consistent) and BatchWriteItem of any number of puts and deletes (25 per
 * call), each retrying what DynamoDB left unprocessed (throttling, the 16 MB response cap) with
 * exponential backoff until done or out of attempts, so a caller sees every key or an error.
 */
import {
  type AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  type DynamoDBClient,
  type WriteRequest,
} from "@aws-sdk/client-dynamodb";

/** An item key or whole item as the low-level client takes it. */
export type Item = Record<string, AttributeValue>;

/** Keys per BatchGetItem (the API's limit). */
export const getBatchSize = 100;
/** Requests per BatchWriteItem (the API's limit). */
export const writeBatchSize = 25;

/** How the batch calls wait between rounds of unprocessed items. */
export interface BatchOptions {
  client: DynamoDBClient;
  table: string;
  /** Waits `ms` (tests pass an instant one; default setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** Rounds before giving up on unprocessed items (default 10: about 10 s of backoff). */
  maxRounds?: number;
}

const realSleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Backoff before round `round` (1-based): 20 ms doubling, capped at 2 s, with jitter so writers do not retry in step. */
function backoffMs(round: number): number {
  const base = Math.min(2000, 20 * 2 ** (round - 1));
  return base / 2 + Math.random() * (base / 2);
}

/** Every item of `keys` (unique table keys) that exists, read strongly consistent. */
export async function batchGet(options: BatchOptions, keys: readonly Item[]): Promise<Item[]> {
  const out: Item[] = [];
  const one = async (batch: Item[]) => {
    let pending = batch;
    for (let round = 1; pending.length > 0; round++) {
      if (round > 1)
        await waitRound(options, round, `BatchGetItem left ${pending.length} key(s) unprocessed`);
      const answer = await options.client.send(
        new BatchGetItemCommand({
          RequestItems: { [options.table]: { Keys: pending, ConsistentRead: true } },
        }),
      );
      for (const item of answer.Responses?.[options.table] ?? []) out.push(item);
      pending = answer.UnprocessedKeys?.[options.table]?.Keys ?? [];
    }
  };
  // A few calls in flight at once: a publish reads hundreds of keys per getMany.
  const batches: Item[][] = [];
  for (let at = 0; at < keys.length; at += getBatchSize) batches.push(keys.slice(at, at + getBatchSize));
  for (let at = 0; at < batches.length; at += getsInFlight)
    await Promise.all(batches.slice(at, at + getsInFlight).map(one));
  return out;
}

/** BatchGetItem calls in flight at once. */
const getsInFlight = 4;

/** Applies every write request (puts and deletes of distinct keys), 25 per call. */
export async function batchWrite(options: BatchOptions, requests: readonly WriteRequest[]): Promise<void> {
  for (let at = 0; at < requests.length; at += writeBatchSize) {
    let pending: WriteRequest[] = requests.slice(at, at + writeBatchSize);
    for (let round = 1; pending.length > 0; round++) {
      if (round > 1)
        await waitRound(options, round, `BatchWriteItem left ${pending.length} request(s) unprocessed`);
      const answer = await options.client.send(
        new BatchWriteItemCommand({ RequestItems: { [options.table]: pending } }),
      );
      pending = answer.UnprocessedItems?.[options.table] ?? [];
    }
  }
}

async function waitRound(options: BatchOptions, round: number, what: string): Promise<void> {
  const max = options.maxRounds ?? 10;
  if (round > max) throw new Error(`dynamodb store: ${what} after ${max} rounds; giving up`);
  await (options.sleep ?? realSleep)(backoffMs(round - 1));
}
