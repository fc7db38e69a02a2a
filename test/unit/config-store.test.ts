import { describe, expect, it } from "vitest";
import { type Env, parseConfig, type StoreConfig } from "../../lib/config.ts";

describe("parseConfig: EDGEPILOT_STORE and EDGEPILOT_DATA_DIR", () => {
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
      "dynamodb, not yet",
      { EDGEPILOT_STORE: "dynamodb" },
      "EDGEPILOT_STORE=dynamodb: not yet supported; use memory or file",
    ],
    ["an unknown store", { EDGEPILOT_STORE: "File" }, "EDGEPILOT_STORE=File: not a store (memory or file)"],
  ];
  for (const [name, env, error] of refused) {
    it(`refuses ${name}, naming the variable`, () => {
      expect(parseConfig(env)).toEqual({ ok: false, errors: [error] });
    });
  }
});
