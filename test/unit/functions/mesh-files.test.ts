/**
 * MESH_CONFIG_FILE / MESH_NETWORKS_FILE on Node with real temporary files and the real ingest core
 * over the memory store: read at start and pushed; a mounted-ConfigMap style symlink swap is seen
 * through the directory watch and applied (waiting on the stored record, no fixed sleep); an
 * invalid file is logged with its field and the previous record stays; a missing file stops
 * start-up naming its variable; an unset variable drops a record a file wrote earlier.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type MeshFiles, startMeshFiles } from "../../../functions/node/mesh-files.ts";
import { createIngestCore, type IngestCore } from "../../../lib/core/ingest.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { readQueue } from "../../../lib/push/queue.ts";
import type { StoredMeshConfig } from "../../../lib/registry/mesh/mesh-config.ts";
import type { StoredMeshNetworks } from "../../../lib/registry/mesh/mesh-networks.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

let dir: string;
let store: Store;
let core: IngestCore;
let logs: string[];
let files: MeshFiles | undefined;
let turns = 0;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mesh-files-"));
  store = createMemoryStore();
  logs = [];
  turns = 0;
  core = createIngestCore({
    store,
    now: () => 1000,
    registry: defaultRegistryOptions,
    requestTurn: () => {
      turns++;
    },
    log: (l) => logs.push(l),
  });
});
afterEach(() => {
  files?.stop();
  files = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** Polls an async condition until it holds (a file watch has no event to await), or fails after 10s. */
async function eventually<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const meshRecord = async () => (await store.get<StoredMeshConfig>(keys.meshConfig()))?.value;
const networksRecord = async () => (await store.get<StoredMeshNetworks>(keys.meshNetworks()))?.value;

/**
 * A directory laid out as the kubelet mounts a ConfigMap: `<key>` ▶ `..data/<key>`, `..data` ▶ a
 * timestamped directory; `swap` writes a new timestamped directory and renames a new `..data` link over the old one.
 */
function mountedConfigMap(data: Record<string, string>) {
  const mount = join(dir, "mount");
  mkdirSync(mount);
  let n = 0;
  const write = (d: Record<string, string>) => {
    const ts = `..2026_12_07_${n++}`;
    mkdirSync(join(mount, ts));
    for (const [k, v] of Object.entries(d)) writeFileSync(join(mount, ts, k), v);
    symlinkSync(ts, join(mount, "..data_tmp"));
    renameSync(join(mount, "..data_tmp"), join(mount, "..data"));
  };
  write(data);
  for (const k of Object.keys(data)) symlinkSync(join("..data", k), join(mount, k));
  return { path: (k: string) => join(mount, k), swap: write };
}

describe("mesh files", () => {
  it("reads both files at start, stores them with a file source and queues their push", async () => {
    const m = mountedConfigMap({
      mesh: "trustDomain: file.org\n",
      meshNetworks: "networks:\n  n1:\n    endpoints:\n    - fromRegistry: c1\n",
    });
    files = await startMeshFiles({
      files: { mesh: m.path("mesh"), meshNetworks: m.path("meshNetworks") },
      core,
      log: (l) => logs.push(l),
    });
    expect(await meshRecord()).toEqual({
      model: { trustDomain: "file.org" },
      unsupported: [],
      source: `file:${m.path("mesh")}`,
    });
    expect((await networksRecord())?.model).toEqual({
      networks: { n1: { endpoints: [{ fromRegistry: "c1" }], gateways: [] } },
    });
    const configs = (await readQueue(store)).flatMap((q) => q.request.configsUpdated ?? []);
    expect(configs.sort()).toEqual(["MeshConfig/istio-system/istio", "MeshNetworks/istio-system/istio"]);
    expect(turns).toBe(2);
    expect(logs).toContain("edgepilot: MESH_CONFIG_FILE is set: the istio ConfigMap's `mesh` key is ignored");
  });

  it("a symlink swap is applied; an invalid swap is logged with the field and the previous record stays", async () => {
    const m = mountedConfigMap({ mesh: "trustDomain: one.org\n" });
    files = await startMeshFiles({ files: { mesh: m.path("mesh") }, core, log: (l) => logs.push(l) });
    m.swap({ mesh: "trustDomain: two.org\n" });
    await eventually(
      "the swapped file applied",
      async () => (await meshRecord())?.model.trustDomain === "two.org" || undefined,
    );
    m.swap({ mesh: "trustDomainAliases: [a/b]\n" });
    const line = await eventually("the invalid file logged", () =>
      logs.find((l) => l.includes("is invalid")),
    );
    expect(line).toContain("MESH_CONFIG_FILE");
    expect(line).toContain('trustDomainAliases[0]: trust domain name "a/b" invalid');
    expect((await meshRecord())?.model).toEqual({ trustDomain: "two.org" });
  });

  it("a missing file stops start-up naming its variable", async () => {
    const missing = join(dir, "nope", "meshNetworks");
    await expect(startMeshFiles({ files: { meshNetworks: missing }, core, log: () => {} })).rejects.toThrow(
      `MESH_NETWORKS_FILE=${missing}: cannot read`,
    );
  });

  it("an unset variable drops a record a file wrote, never one the ConfigMap wrote", async () => {
    await store.put(keys.meshConfig(), {
      model: { trustDomain: "old.org" },
      unsupported: [],
      source: "file:/etc/old/mesh",
    });
    const fromConfigMap: StoredMeshNetworks = {
      model: { networks: {} },
      source: "configmap:east/istio-system/istio@3",
    };
    await store.put(keys.meshNetworks(), fromConfigMap);
    files = await startMeshFiles({ files: {}, core, log: () => {} });
    expect(await meshRecord()).toBeUndefined();
    expect(await networksRecord()).toEqual(fromConfigMap);
  });
});
