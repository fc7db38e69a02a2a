/**
 * The DynamoDB table at start-up, on dynalite: created when missing on a local server (and left
 * alone when present), refused with a line naming DYNAMODB_TABLE when its key schema is not the
 * store's or, on AWS, when it is missing; and the TTL the store sets on proxy status records.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  GetItemCommand,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../../functions/node/store.ts";
import { createDynamoStore } from "../../../lib/store/dynamodb.ts";
import { itemKey } from "../../../lib/store/dynamodb-layout.ts";
import { ensureLocalTable, probeTable, TableError } from "../../../lib/store/dynamodb-setup.ts";
import { keys } from "../../../lib/store/keys.ts";
import { freePort } from "../../e2e/support/runtime.ts";
import { type RunningDynalite, startDynalite } from "../../support/dynalite.ts";

let dynalite: RunningDynalite;
let admin: DynamoDBClient;

beforeAll(async () => {
  dynalite = await startDynalite();
  admin = dynalite.client();
});

afterAll(async () => {
  await dynalite?.stop();
});

describe("dynamodb table at start-up", () => {
  it("a local server: creates a missing table with the store's key schema, once", async () => {
    expect(await ensureLocalTable(admin, "created-here", async () => {})).toBe(true);
    const table = (await admin.send(new DescribeTableCommand({ TableName: "created-here" }))).Table;
    expect(table?.KeySchema).toEqual([
      { AttributeName: "pk", KeyType: "HASH" },
      { AttributeName: "sk", KeyType: "RANGE" },
    ]);
    expect(table?.TableStatus).toBe("ACTIVE");
    expect(await ensureLocalTable(admin, "created-here", async () => {})).toBe(false);
  });

  it("a local table with another key schema is refused, naming DYNAMODB_TABLE", async () => {
    await admin.send(
      new CreateTableCommand({
        TableName: "other-schema",
        AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
    await expect(ensureLocalTable(admin, "other-schema")).rejects.toThrow(
      new TableError(
        "DYNAMODB_TABLE=other-schema: the table's key schema is id:HASH, not pk (hash) + sk (range)",
      ),
    );
  });

  it("AWS: a missing table stops start-up with one line naming DYNAMODB_TABLE; a present one passes", async () => {
    await expect(probeTable(admin, "missing", "eu-west-1")).rejects.toThrow(
      new TableError(
        "DYNAMODB_TABLE=missing: no such table in eu-west-1 (deploy infra/aws; edgepilot creates a table only with DYNAMODB_ENDPOINT set)",
      ),
    );
    await expect(probeTable(admin, dynalite.table, "eu-west-1")).resolves.toBeUndefined();
  });

  it("npm start's store: a local endpoint nobody serves stops start-up naming the table and the endpoint", async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const config = {
      kind: "dynamodb",
      table: "mesh",
      endpoint,
      region: "us-east-1",
      localCredentials: true,
    } as const;
    await expect(openStore(config, () => {})).rejects.toThrow(
      new RegExp(
        `^DYNAMODB_TABLE=mesh: cannot open the table \\(DYNAMODB_ENDPOINT=${endpoint.replace(/\./g, "\\.")}\\): `,
      ),
    );
  });

  it("npm start's store: a local endpoint gets its table, and the store works", async () => {
    const lines: string[] = [];
    const config = {
      kind: "dynamodb",
      table: "from-start",
      endpoint: dynalite.endpoint,
      region: "us-east-1",
      localCredentials: true,
    } as const;
    const opened = await openStore(config, (l) => lines.push(l));
    try {
      expect(lines[0]).toBe(
        `edgepilot: store: created DynamoDB table from-start at ${dynalite.endpoint} (DYNAMODB_ENDPOINT)`,
      );
      expect(await opened.store.put("svc/a", 1)).toEqual({ ok: true, version: 1 });
    } finally {
      opened.close();
    }
  });
});

describe("dynamodb store: proxy status TTL", () => {
  const ttlOf = async (key: string) =>
    (await admin.send(new GetItemCommand({ TableName: dynalite.table, Key: raw(key) }))).Item?.ttl?.N;
  const raw = (key: string) => {
    const { pk, sk } = itemKey(key);
    return { pk: { S: pk }, sk: { S: sk } };
  };

  it("a proxy record carries ttl (epoch seconds) from its expiresAt, on every kind of write; other keys never", async () => {
    const store = createDynamoStore({ client: dynalite.client(), table: dynalite.table });
    const key = keys.proxy("sidecar~10.0.0.1~a.default~default.svc.cluster.local");
    await store.put(key, { expiresAt: 1_700_000_000_001, streamId: "s1" });
    expect(await ttlOf(key)).toBe("1700000001");
    await store.put(key, { expiresAt: 1_700_000_060_000, streamId: "s1" }, { ifVersion: 1 });
    expect(await ttlOf(key)).toBe("1700000060");
    await store.put(key, { streamId: "s1" });
    expect(await ttlOf(key)).toBeUndefined();
    await store.put("svc/x", { expiresAt: 1_700_000_000_000 });
    expect(await ttlOf("svc/x")).toBeUndefined();
  });
});
