/**
 * The writer the file store's durability test kills: opens the store in argv[2] and, from where
 * the last run stopped, writes record after record (each followed by a compare-and-set of the
 * counter), printing each index once both writes are acknowledged. It runs until it is killed.
 */
import { pathToFileURL } from "node:url";
import { createFileStore } from "../../../lib/store/file.ts";
import { update } from "../../../lib/store/store.ts";

/** Record `i`: a key, and a value big enough that some span several pages and every checkpoint. */
export function record(i: number): { key: string; value: { i: number; bytes: Uint8Array } } {
  const size = 1 + ((i * 7919) % 24_000);
  return { key: `w/${String(i).padStart(8, "0")}`, value: { i, bytes: new Uint8Array(size).fill(i % 251) } };
}

/** The counter key: how many records exist (0..count-1). */
export const COUNT_KEY = "meta/count";

/** The most records one run writes, so a writer whose parent died stops by itself. */
const MAX_RECORDS = 100_000;

async function isWhole(store: ReturnType<typeof createFileStore>, i: number): Promise<boolean> {
  const { key, value } = record(i);
  const found = (await store.get<{ i: number; bytes: Uint8Array }>(key))?.value;
  return found?.i === i && Buffer.compare(found.bytes, value.bytes) === 0;
}

async function main(dir: string): Promise<void> {
  const store = createFileStore({ dir });
  const start = (await store.get<number>(COUNT_KEY))?.value ?? 0;
  for (let i = start; i < start + MAX_RECORDS; i++) {
    const { key, value } = record(i);
    const put = await store.put(key, value, { ifVersion: 0 });
    // The record and the counter are two writes: a kill between them leaves record `start` written
    // and uncounted. That one may exist, whole; any other existing record is a lost counter write.
    if (!put.ok && !(i === start && (await isWhole(store, i)))) throw new Error(`record ${i} exists already`);
    await update<number>(store, COUNT_KEY, (current) => {
      if ((current?.value ?? 0) !== i) throw new Error(`counter is ${current?.value}, expected ${i}`);
      return i + 1;
    });
    process.stdout.write(`${i}\n`);
  }
  store.close();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main(process.argv[2]!);
