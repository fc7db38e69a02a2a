/**
 * A real DynamoDB-compatible server for tests: dynalite (npm), in this process, in memory, on a
 * free port, with the table created from lib/store/dynamodb-table.ts's schema (the same code
 * `EDGEPILOT_STORE=dynamodb` runs with DYNAMODB_ENDPOINT set). Tests start it themselves.
 */
import type { AddressInfo } from "node:net";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
// @ts-expect-error dynalite ships no types: a function returning a node:http Server
import dynalite from "dynalite";
import { ensureLocalTable } from "../../lib/store/dynamodb-setup.ts";

export interface RunningDynalite {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  /** The table created at start. */
  table: string;
  /** A client for this server (static local credentials, region us-east-1). */
  client(): DynamoDBClient;
  /** Creates one more table with the schema (a fresh store per test). */
  createTable(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Local credentials: dynalite checks none, the SDK wants some. */
export const localCredentials = { accessKeyId: "local", secretAccessKey: "local" };

/** Starts dynalite on port 0 and creates `table` (default `edgepilot`). */
export async function startDynalite(table = "edgepilot"): Promise<RunningDynalite> {
  const server = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  }) as import("node:http").Server;
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => done());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clients: DynamoDBClient[] = [];
  const client = () => {
    const c = new DynamoDBClient({ endpoint, region: "us-east-1", credentials: localCredentials });
    clients.push(c);
    return c;
  };
  const admin = client();
  const createTable = async (name: string) => {
    await ensureLocalTable(admin, name, async () => {});
  };
  await createTable(table);
  return {
    endpoint,
    table,
    client,
    createTable,
    async stop() {
      for (const c of clients) c.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** One command a client sent, as `recordCommands` reports it. */
export interface SentCommand {
  /** The IAM action name, e.g. `dynamodb:GetItem`. */
  action: string;
  /** Items the command read or wrote (returned, or in its request for writes). */
  items: number;
  /** Read and write capacity units DynamoDB says it consumed (ReturnConsumedCapacity TOTAL). */
  readUnits: number;
  writeUnits: number;
}

const capacityCommands = new Set([
  "GetItemCommand",
  "BatchGetItemCommand",
  "QueryCommand",
  "PutItemCommand",
  "UpdateItemCommand",
  "DeleteItemCommand",
  "BatchWriteItemCommand",
]);

/**
 * Reports every command `client` sends (a middleware at the first step, so SDK retries count once),
 * asking DynamoDB for the capacity each consumed: what the action-set test and the bench count.
 */
export function recordCommands(client: DynamoDBClient, onCommand: (c: SentCommand) => void): DynamoDBClient {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? "unknown";
      const input = args.input as Record<string, unknown>;
      if (capacityCommands.has(name)) input.ReturnConsumedCapacity = "TOTAL";
      const result = await next(args);
      const output = result.output as unknown as Record<string, unknown>;
      const capacity = (
        [] as { ReadCapacityUnits?: number; WriteCapacityUnits?: number; CapacityUnits?: number }[]
      ).concat((output.ConsumedCapacity as never) ?? []);
      let readUnits = 0;
      let writeUnits = 0;
      const writes = /Put|Update|Delete|Write/.test(name);
      for (const c of capacity) {
        const units = c.CapacityUnits ?? 0;
        if (writes) writeUnits += c.WriteCapacityUnits ?? units;
        else readUnits += c.ReadCapacityUnits ?? units;
      }
      onCommand({
        action: `dynamodb:${name.replace(/Command$/, "")}`,
        items: itemsOf(name, input, output),
        readUnits,
        writeUnits,
      });
      return result;
    },
    { step: "initialize", name: "recordCommands" },
  );
  return client;
}

function itemsOf(name: string, input: Record<string, unknown>, output: Record<string, unknown>): number {
  const count = (m: unknown, field?: string) =>
    Object.values((m ?? {}) as Record<string, unknown>).reduce<number>(
      (n, v) => n + ((field ? (v as Record<string, unknown[]>)[field] : (v as unknown[])) ?? []).length,
      0,
    );
  switch (name) {
    case "GetItemCommand":
      return output.Item ? 1 : 0;
    case "QueryCommand":
      return (output.Items as unknown[] | undefined)?.length ?? 0;
    case "BatchGetItemCommand":
      return count(output.Responses);
    case "BatchWriteItemCommand":
      return count(input.RequestItems) - count(output.UnprocessedItems);
    default:
      return /Put|Update|Delete/.test(name) ? 1 : 0;
  }
}
