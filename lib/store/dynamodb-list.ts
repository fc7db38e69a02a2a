/**
 * One page of a prefix list over the DynamoDB layout (dynamodb-layout.ts): a Query of the one
 * partition that holds the prefix, or a walk of the partitions the directory names under it, in
 * order, resuming after the cursor. Driven by a `query` function (the adapter's one Query call), so
 * the paging logic is here and the I/O is there.
 */
import type { Item } from "./dynamodb-batch.ts";
import { directoryPk, itemKey, type ListPlan, storeKeyOf } from "./dynamodb-layout.ts";
import { compareKeys } from "./sorted-keys.ts";

/** One Query: up to `max` items of partition `pk` whose sort key starts with `skPrefix`, after sort key `after`. */
export type QueryPage = (
  pk: string,
  skPrefix: string,
  max: number,
  after?: string,
) => Promise<{ items: Item[]; more: boolean }>;

/** Directory entries read per Query while walking. */
const directoryPage = 100;

/** Every item holds the sort key prefix of its partition: "=" then the rest of the key. */
const wholePartition = "=";

/** Up to `limit` head items under `prefix` after `cursor`, ascending, and the cursor to the next page when more may follow. */
export async function readList(
  plan: ListPlan,
  prefix: string,
  limit: number,
  cursor: string | undefined,
  query: QueryPage,
): Promise<{ items: Item[]; cursor?: string }> {
  if (cursor !== undefined && !cursor.startsWith(prefix)) {
    // A cursor before every key under the prefix resumes at its start; one after them, nowhere.
    if (compareKeys(cursor, prefix) > 0) return { items: [] };
    cursor = undefined;
  }
  if (plan.kind === "one") {
    const after = cursor === undefined ? undefined : itemKey(cursor).sk;
    const { items, more } = await query(plan.pk, plan.skPrefix, limit, after);
    return more && items.length > 0 ? { items, cursor: lastKey(items) } : { items };
  }
  const items: Item[] = [];
  let afterPartition: string | undefined;
  if (cursor !== undefined) {
    // The cursor's partition starts with the prefix (the prefix is shorter than it): finish it first.
    const { pk, sk } = itemKey(cursor);
    const page = await query(pk, wholePartition, limit, sk);
    items.push(...page.items);
    if (items.length > 0 && (page.more || items.length >= limit)) return { items, cursor: lastKey(items) };
    afterPartition = pk;
  }
  for (;;) {
    const dir = await query(directoryPk, plan.dirPrefix, directoryPage, afterPartition);
    for (const entry of dir.items) {
      const pk = entry.sk?.S as string;
      const page = await query(pk, wholePartition, limit - items.length);
      items.push(...page.items);
      if (items.length > 0 && (page.more || items.length >= limit)) return { items, cursor: lastKey(items) };
    }
    if (!dir.more || dir.items.length === 0) return { items };
    afterPartition = dir.items[dir.items.length - 1]?.sk?.S;
  }
}

function lastKey(items: readonly Item[]): string {
  const last = items[items.length - 1] as Item;
  return storeKeyOf(last.pk?.S ?? "", last.sk?.S ?? "");
}
