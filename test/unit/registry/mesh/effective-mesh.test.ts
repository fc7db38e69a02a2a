import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../../lib/config.ts";
import {
  defaultMesh,
  type EffectiveMesh,
  effectiveMesh,
  type MeshEnvOverrides,
  meshOverrides,
  readEffectiveMesh,
  sameMesh,
} from "../../../../lib/registry/mesh/effective-mesh.ts";
import type { MeshConfigModel, StoredMeshConfig } from "../../../../lib/registry/mesh/mesh-config.ts";
import { keys } from "../../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../../lib/store/memory.ts";

const team = [{ matchLabels: { team: "a" } }];
const other = [{ matchLabels: { team: "b" } }];

describe("effectiveMesh precedence: defaults ◀ stored ◀ explicitly set environment", () => {
  const cases: {
    name: string;
    stored?: MeshConfigModel;
    env?: MeshEnvOverrides;
    want: Partial<EffectiveMesh>;
  }[] = [
    { name: "nothing stored, nothing set: Istio's defaults", want: defaultMesh },
    {
      name: "stored trust domain",
      stored: { trustDomain: "corp.example" },
      want: { trustDomain: "corp.example" },
    },
    {
      name: "TRUST_DOMAIN set wins over stored",
      stored: { trustDomain: "corp.example" },
      env: { trustDomain: "env.example" },
      want: { trustDomain: "env.example" },
    },
    {
      name: "stored empty trust domain is unset",
      stored: { trustDomain: "" },
      want: { trustDomain: "cluster.local" },
    },
    {
      name: "aliases from stored only",
      stored: { trustDomainAliases: ["old.example"] },
      env: { trustDomain: "env.example" },
      want: { trustDomain: "env.example", trustDomainAliases: ["old.example"] },
    },
    {
      name: "stored root namespace",
      stored: { rootNamespace: "mesh-root" },
      want: { rootNamespace: "mesh-root" },
    },
    { name: "stored selectors", stored: { discoverySelectors: team }, want: { discoverySelectors: team } },
    {
      name: "DISCOVERY_SELECTORS set wins over stored",
      stored: { discoverySelectors: team },
      env: { discoverySelectors: other },
      want: { discoverySelectors: other },
    },
    {
      name: "DISCOVERY_SELECTORS set to [] serves every namespace",
      stored: { discoverySelectors: team },
      env: { discoverySelectors: [] },
      want: { discoverySelectors: [] },
    },
    {
      name: "REGISTRY_ONLY",
      stored: { outboundTrafficPolicy: { mode: "REGISTRY_ONLY" } },
      want: { outboundTrafficPolicy: "REGISTRY_ONLY" },
    },
    {
      name: "default exportTo lists",
      stored: {
        defaultServiceExportTo: ["."],
        defaultVirtualServiceExportTo: ["a", "b"],
        defaultDestinationRuleExportTo: ["."],
      },
      want: {
        defaultServiceExportTo: ["."],
        defaultVirtualServiceExportTo: ["a", "b"],
        defaultDestinationRuleExportTo: ["."],
      },
    },
    {
      name: "empty exportTo list is public",
      stored: { defaultServiceExportTo: [] },
      want: { defaultServiceExportTo: ["*"] },
    },
    { name: "stored auto mTLS off", stored: { enableAutoMtls: false }, want: { enableAutoMtls: false } },
    {
      name: "EDGEPILOT_ENABLE_AUTO_MTLS set wins over stored",
      stored: { enableAutoMtls: false },
      env: { enableAutoMtls: true },
      want: { enableAutoMtls: true },
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      expect(effectiveMesh(c.stored, c.env)).toEqual({ ...defaultMesh, ...c.want });
    });
});

describe("sameMesh", () => {
  it("equal settings built apart are the same; any field differing is not", () => {
    expect(sameMesh(effectiveMesh(undefined), effectiveMesh({}))).toBe(true);
    expect(sameMesh(effectiveMesh({ trustDomain: "cluster.local" }), defaultMesh)).toBe(true);
    expect(sameMesh(effectiveMesh({ rootNamespace: "x" }), defaultMesh)).toBe(false);
    expect(sameMesh(effectiveMesh({ enableAutoMtls: false }), defaultMesh)).toBe(false);
  });
  it("a stored change an environment override masks leaves the settings the same", () => {
    const env = { trustDomain: "env.example" };
    expect(sameMesh(effectiveMesh({ trustDomain: "a" }, env), effectiveMesh({ trustDomain: "b" }, env))).toBe(
      true,
    );
  });
});

describe("meshOverrides: only what the environment set", () => {
  const parse = (env: Record<string, string>) => {
    const r = parseConfig(env);
    if (!r.ok) throw new Error(r.errors.join("; "));
    return meshOverrides(r.config.registry);
  };
  const cases: { env: Record<string, string>; want: MeshEnvOverrides }[] = [
    { env: {}, want: {} },
    { env: { TRUST_DOMAIN: "" }, want: {} },
    { env: { TRUST_DOMAIN: "t.example" }, want: { trustDomain: "t.example" } },
    { env: { DISCOVERY_SELECTORS: "[]" }, want: { discoverySelectors: [] } },
    { env: { DISCOVERY_SELECTORS: JSON.stringify(team) }, want: { discoverySelectors: team } },
    { env: { EDGEPILOT_ENABLE_AUTO_MTLS: "false" }, want: { enableAutoMtls: false } },
  ];
  for (const c of cases)
    it(JSON.stringify(c.env), () => {
      expect(parse(c.env)).toEqual(c.want);
    });
  it("options built in code (no meshSet) count every field given", () => {
    expect(meshOverrides({ trustDomain: "x", enableAutoMtls: false })).toEqual({
      trustDomain: "x",
      enableAutoMtls: false,
    });
  });
});

describe("readEffectiveMesh", () => {
  it("reads the stored record once and applies the overrides", async () => {
    const store = createMemoryStore();
    expect(await readEffectiveMesh(store)).toEqual(defaultMesh);
    const record: StoredMeshConfig = {
      model: { rootNamespace: "mesh-root", trustDomain: "corp.example" },
      unsupported: [],
      source: "configmap:Kubernetes/istio-system/istio@1",
    };
    await store.put(keys.meshConfig(), record);
    const got = await readEffectiveMesh(store, { trustDomain: "env.example" });
    expect(got).toEqual({ ...defaultMesh, rootNamespace: "mesh-root", trustDomain: "env.example" });
  });
});
