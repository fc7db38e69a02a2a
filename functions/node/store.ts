/**
 * The Node runtime's Store, as the config names it: memory, the durable file store, or DynamoDB.
 * The file store (libsql) and DynamoDB (the AWS SDK) are imported only when the config names them:
 * loaded, they cost a server on the memory store ~40 MB of RSS it never uses (the SDK's modules
 * ~29 MB, 5 MB of it heap; libsql's native module ~11 MB).
 */
import type { DynamoStoreConfig, StoreConfig } from "../../lib/config.ts";
import { logSafe } from "../../lib/log-safe.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import type { Store } from "../../lib/store/store.ts";

export interface OpenedStore {
  store: Store;
  /** Flushes and closes a file store, closes a DynamoDB client's connections; nothing to do for memory. */
  close(): void;
}

/**
 * Opens the configured store before anything serves. A data directory that cannot hold the store
 * (not creatable, not writable, not a database, in use by another process) throws an Error that
 * names EDGEPILOT_DATA_DIR and the path; a DynamoDB table that is missing on AWS, or not readable
 * with these credentials, or a local server that cannot be reached, throws one naming
 * DYNAMODB_TABLE or DYNAMODB_ENDPOINT: start-up stops with a line an operator can act on.
 */
export async function openStore(config: StoreConfig, log: (line: string) => void): Promise<OpenedStore> {
  if (config.kind === "memory") return { store: createMemoryStore(), close: () => {} };
  if (config.kind === "dynamodb") return openDynamoStore(config, log);
  return openFileStore(config, log);
}

async function openFileStore(
  config: Extract<StoreConfig, { kind: "file" }>,
  log: (line: string) => void,
): Promise<OpenedStore> {
  const { createFileStore, FileStoreError } = await import("../../lib/store/file.ts");
  try {
    const store = createFileStore({ dir: config.dataDir });
    log(`edgepilot: store: file ${store.path} (EDGEPILOT_DATA_DIR)`);
    return { store, close: () => store.close() };
  } catch (e) {
    if (e instanceof FileStoreError)
      throw new Error(`EDGEPILOT_DATA_DIR=${config.dataDir}: ${e.message}`, { cause: e });
    throw e;
  }
}

/**
 * With DYNAMODB_ENDPOINT (local development) the table is created when missing; against AWS it is
 * only probed (one GetItem): the IaC owns it, and nothing here creates or alters it.
 */
async function openDynamoStore(config: DynamoStoreConfig, log: (line: string) => void): Promise<OpenedStore> {
  const [{ DynamoDBClient }, { createDynamoStore }, { ensureLocalTable, probeTable, TableError }] =
    await Promise.all([
      import("@aws-sdk/client-dynamodb"),
      import("../../lib/store/dynamodb.ts"),
      import("../../lib/store/dynamodb-setup.ts"),
    ]);
  const client = new DynamoDBClient({
    region: config.region,
    ...(config.endpoint !== undefined && { endpoint: config.endpoint }),
    ...(config.localCredentials && { credentials: { accessKeyId: "local", secretAccessKey: "local" } }),
  });
  try {
    if (config.endpoint === undefined) await probeTable(client, config.table, config.region);
    else if (await ensureLocalTable(client, config.table))
      log(
        `edgepilot: store: created DynamoDB table ${config.table} at ${config.endpoint} (DYNAMODB_ENDPOINT)`,
      );
  } catch (e) {
    client.destroy();
    if (e instanceof TableError) throw e;
    const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    const where =
      config.endpoint === undefined ? `AWS_REGION=${config.region}` : `DYNAMODB_ENDPOINT=${config.endpoint}`;
    throw new Error(`DYNAMODB_TABLE=${config.table}: cannot open the table (${where}): ${logSafe(what)}`, {
      cause: e,
    });
  }
  log(
    `edgepilot: store: DynamoDB table ${config.table} ${config.endpoint === undefined ? `in ${config.region}` : `at ${config.endpoint}`} (DYNAMODB_TABLE)`,
  );
  return { store: createDynamoStore({ client, table: config.table }), close: () => client.destroy() };
}
