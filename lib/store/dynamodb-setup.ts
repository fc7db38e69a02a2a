/**
 * The DynamoDB table at start-up: created when missing on a local server (DYNAMODB_ENDPOINT set:
 * dynalite, DynamoDB Local), with lib/store/dynamodb-table.ts's key schema and TTL attribute; only
 * probed against AWS itself, where the IaC owns the table and nothing here creates or alters it.
 * Every failure is one line naming DYNAMODB_TABLE.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { partitionKey, sortKey, tableKeySchema, ttlAttribute } from "./dynamodb-table.ts";

/** A table that cannot be used: the message names DYNAMODB_TABLE and what is wrong. */
export class TableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TableError";
  }
}

/** How long a local table may stay CREATING before start-up gives up. */
const activeWithinMs = 30_000;

/**
 * Local development: creates `table` when missing (on-demand, TTL on `ttl` where the server has
 * UpdateTimeToLive) and checks an existing one has the key schema; returns whether it created it.
 */
export async function ensureLocalTable(
  client: DynamoDBClient,
  table: string,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((done) => setTimeout(done, ms)),
): Promise<boolean> {
  const existing = await describe(client, table);
  if (existing) {
    const schema = existing.KeySchema?.map((k) => `${k.AttributeName}:${k.KeyType}`).join(",");
    if (schema !== `${partitionKey}:HASH,${sortKey}:RANGE`)
      throw new TableError(
        `DYNAMODB_TABLE=${table}: the table's key schema is ${schema}, not ${partitionKey} (hash) + ${sortKey} (range)`,
      );
    return false;
  }
  await client.send(
    new CreateTableCommand({
      TableName: table,
      AttributeDefinitions: [
        { AttributeName: tableKeySchema.partitionKey.name, AttributeType: tableKeySchema.partitionKey.type },
        { AttributeName: tableKeySchema.sortKey.name, AttributeType: tableKeySchema.sortKey.type },
      ],
      KeySchema: [
        { AttributeName: tableKeySchema.partitionKey.name, KeyType: "HASH" },
        { AttributeName: tableKeySchema.sortKey.name, KeyType: "RANGE" },
      ],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
  for (let waited = 0; (await describe(client, table))?.TableStatus !== "ACTIVE"; waited += 100) {
    if (waited >= activeWithinMs)
      throw new TableError(`DYNAMODB_TABLE=${table}: created, but not ACTIVE after ${activeWithinMs} ms`);
    await sleep(100);
  }
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: table,
        TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
      }),
    );
  } catch {
    // Local servers without TTL (dynalite) keep expired proxy records until the core removes them.
  }
  return true;
}

/**
 * AWS itself: one GetItem (an action the store is granted anyway) shows the table exists and is
 * readable with these credentials; throws a TableError naming DYNAMODB_TABLE otherwise.
 */
export async function probeTable(client: DynamoDBClient, table: string, region: string): Promise<void> {
  try {
    await client.send(
      new GetItemCommand({ TableName: table, Key: { pk: { S: "#probe" }, sk: { S: "#probe" } } }),
    );
  } catch (e) {
    if (e instanceof ResourceNotFoundException)
      throw new TableError(
        `DYNAMODB_TABLE=${table}: no such table in ${region} (deploy infra/aws; edgepilot creates a table only with DYNAMODB_ENDPOINT set)`,
        { cause: e },
      );
    const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    throw new TableError(`DYNAMODB_TABLE=${table}: cannot read the table in ${region}: ${what}`, {
      cause: e,
    });
  }
}

async function describe(client: DynamoDBClient, table: string) {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: table }))).Table;
  } catch (e) {
    if (e instanceof ResourceNotFoundException) return undefined;
    throw e;
  }
}
