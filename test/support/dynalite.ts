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
