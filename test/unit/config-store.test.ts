import { describe, expect, it } from "vitest";
import { type Env, parseConfig, type StoreConfig } from "../../lib/config.ts";

describe("parseConfig: EDGEPILOT_STORE, EDGEPILOT_DATA_DIR and the DynamoDB variables", () => {
  const accepted: [string, Env, StoreConfig][] = [
    ["memory by default", {}, { kind: "memory" }],
    ["memory, empty values as unset", { EDGEPILOT_STORE: "", EDGEPILOT_DATA_DIR: "" }, { kind: "memory" }],
    ["memory named", { EDGEPILOT_STORE: "memory" }, { kind: "memory" }],
    [
      "file in a directory",
      { EDGEPILOT_STORE: "file", EDGEPILOT_DATA_DIR: "/var/lib/edgepilot" },
      { kind: "file", dataDir: "/var/lib/edgepilot" },
    ],
    [
      "file in a relative directory",
      { EDGEPILOT_STORE: "file", EDGEPILOT_DATA_DIR: "./data" },
      { kind: "file", dataDir: "./data" },
    ],
    [
      "dynamodb on AWS, the default table",
      { EDGEPILOT_STORE: "dynamodb", AWS_REGION: "eu-west-1" },
      { kind: "dynamodb", table: "edgepilot", region: "eu-west-1", localCredentials: false },
    ],
    [
      "dynamodb on a local server, no region, no credentials",
      { EDGEPILOT_STORE: "dynamodb", DYNAMODB_ENDPOINT: "http://127.0.0.1:4567", DYNAMODB_TABLE: "mesh.dev" },
      {
        kind: "dynamodb",
        table: "mesh.dev",
        endpoint: "http://127.0.0.1:4567",
        region: "us-east-1",
        localCredentials: true,
      },
    ],
    [
      "dynamodb on a local server with credentials of its own",
      { EDGEPILOT_STORE: "dynamodb", DYNAMODB_ENDPOINT: "http://db:8000", AWS_ACCESS_KEY_ID: "x" },
      {
        kind: "dynamodb",
        table: "edgepilot",
        endpoint: "http://db:8000",
        region: "us-east-1",
        localCredentials: false,
      },
    ],
  ];
  for (const [name, env, store] of accepted) {
    it(`accepts ${name}`, () => {
      const parsed = parseConfig(env);
      expect(parsed.ok && parsed.config.store).toEqual(store);
    });
  }

  const refused: [string, Env, string][] = [
    [
      "file without a directory",
      { EDGEPILOT_STORE: "file" },
      "EDGEPILOT_DATA_DIR: required with EDGEPILOT_STORE=file",
    ],
    [
      "a directory for the memory store",
      { EDGEPILOT_DATA_DIR: "/data" },
      "EDGEPILOT_DATA_DIR=/data: the memory store keeps nothing on disk; set EDGEPILOT_STORE=file to use it",
    ],
    [
      "dynamodb on AWS without a region",
      { EDGEPILOT_STORE: "dynamodb" },
      "AWS_REGION: required with EDGEPILOT_STORE=dynamodb (or DYNAMODB_ENDPOINT for a local server)",
    ],
    [
      "a table name DynamoDB refuses",
      { EDGEPILOT_STORE: "dynamodb", AWS_REGION: "eu-west-1", DYNAMODB_TABLE: "a b" },
      "DYNAMODB_TABLE=a b: a table name is 3-255 letters, digits, '_', '-' or '.'",
    ],
    [
      "an endpoint that is no URL",
      { EDGEPILOT_STORE: "dynamodb", DYNAMODB_ENDPOINT: "localhost:4567" },
      "DYNAMODB_ENDPOINT=localhost:4567: not an http(s) URL (e.g. http://127.0.0.1:4567)",
    ],
    [
      "a data directory for the dynamodb store",
      { EDGEPILOT_STORE: "dynamodb", AWS_REGION: "eu-west-1", EDGEPILOT_DATA_DIR: "/data" },
      "EDGEPILOT_DATA_DIR=/data: the dynamodb store keeps nothing on disk",
    ],
    [
      "a table for another store",
      { DYNAMODB_TABLE: "mesh" },
      "DYNAMODB_TABLE=mesh: set EDGEPILOT_STORE=dynamodb to use it (the memory store ignores it)",
    ],
    [
      "an unknown store",
      { EDGEPILOT_STORE: "File" },
      "EDGEPILOT_STORE=File: not a store (memory, file or dynamodb)",
    ],
  ];
  for (const [name, env, error] of refused) {
    it(`refuses ${name}, naming the variable`, () => {
      expect(parseConfig(env)).toEqual({ ok: false, errors: [error] });
    });
  }
});
