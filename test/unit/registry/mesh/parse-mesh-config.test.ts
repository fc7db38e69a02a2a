/**
 * MeshConfig parsing and validation of the implemented fields: istiod's TestValidateTrustDomain and
 * the trust domain part of TestValidateMeshConfig (pkg/config/validation/agent/validation_test.go)
 * as YAML, ApplyMeshConfig's leniency (unknown keys ignored, proto names accepted, aliases a sorted
 * set), and each implemented field's type and value checks; every error names its field path.
 */
import { describe, expect, it } from "vitest";
import { parseMeshConfig } from "../../../../lib/registry/mesh/parse-mesh-config.ts";
import { describeProblem } from "../../../../lib/registry/mesh/yaml-document.ts";

const trustDomainCases: { name: string; in: string; error?: string }[] = [
  { name: "empty", in: "", error: "empty" },
  { name: "happy", in: "x".repeat(63) },
  { name: "multi-segment", in: "foo.bar.com" },
  { name: "middle dash", in: "f-oo.bar.com" },
  { name: "trailing dot", in: "foo.bar.com." },
  { name: "prefix dash", in: "-foo.bar.com", error: "invalid" },
  { name: "forward slash separated", in: "foo/bar/com", error: "invalid" },
  { name: "colon separated", in: "foo:bar:com", error: "invalid" },
];

describe("parseMeshConfig: trustDomain (istiod TestValidateTrustDomain)", () => {
  for (const c of trustDomainCases)
    it(c.name, () => {
      const r = parseMeshConfig(JSON.stringify({ trustDomain: c.in }));
      if (c.error === undefined)
        expect(r).toEqual({
          ok: true,
          value: { model: { trustDomain: c.in }, unsupported: [], unknown: [] },
        });
      else {
        expect(r.ok).toBe(false);
        if (!r.ok) {
          expect(r.problem.field).toBe("trustDomain");
          expect(r.problem.message).toContain(c.error);
        }
      }
    });
});

const cases: { name: string; yaml: string; error: string }[] = [
  // TestValidateMeshConfig: the trust domain errors, one at a time (the first wins here)
  {
    name: "empty trust domain",
    yaml: 'trustDomain: ""',
    error: "trustDomain: empty domain name not allowed",
  },
  {
    name: "alias a.$b",
    yaml: 'trustDomainAliases: ["a.$b"]',
    error: 'trustDomainAliases[0]: trust domain name "a.$b" invalid',
  },
  {
    name: "alias a/b",
    yaml: 'trustDomainAliases: ["ok.td", "a/b"]',
    error: 'trustDomainAliases[1]: trust domain name "a/b" invalid',
  },
  {
    name: "empty alias",
    yaml: 'trustDomainAliases: [""]',
    error: "trustDomainAliases[0]: empty domain name not allowed",
  },
  {
    name: "aliases not a list",
    yaml: "trustDomainAliases: td",
    error: "trustDomainAliases: must be a list, got string",
  },
  {
    name: "discovery selector with an unknown operator",
    yaml: "discoverySelectors:\n- matchExpressions:\n  - {key: env, operator: Near}",
    error: "discoverySelectors[0].matchExpressions[0].operator",
  },
  {
    name: "discovery selectors not a list",
    yaml: "discoverySelectors: {matchLabels: {a: b}}",
    error: "discoverySelectors: must be a list of label selectors",
  },
  {
    name: "outbound mode not an enum value",
    yaml: "outboundTrafficPolicy: {mode: VIRTUAL_SERVICE_ONLY}",
    error:
      'outboundTrafficPolicy.mode: unsupported value "VIRTUAL_SERVICE_ONLY"; want one of REGISTRY_ONLY, ALLOW_ANY',
  },
  {
    name: "export list of numbers",
    yaml: "defaultVirtualServiceExportTo: [1]",
    error: "defaultVirtualServiceExportTo[0]: must be a string, got number",
  },
  {
    name: "export to not a list",
    yaml: "defaultDestinationRuleExportTo: '*'",
    error: "defaultDestinationRuleExportTo: must be a list, got string",
  },
  {
    name: "enableAutoMtls not a boolean",
    yaml: 'enableAutoMtls: "true"',
    error: "enableAutoMtls: must be a boolean, got string",
  },
  { name: "not YAML", yaml: "trustDomain: [", error: "not valid YAML" },
  { name: "a scalar document", yaml: "hello", error: "must be a YAML mapping, got string" },
];

describe("parseMeshConfig: refused documents name the field", () => {
  for (const c of cases)
    it(c.name, () => {
      const r = parseMeshConfig(c.yaml);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(describeProblem(r.problem)).toContain(c.error);
    });
});

describe("parseMeshConfig: what is read", () => {
  it("every implemented field, in the table's order whatever the YAML's, aliases sorted and deduplicated", () => {
    const r = parseMeshConfig(`
enableAutoMtls: false
defaultDestinationRuleExportTo: ["~"]
defaultVirtualServiceExportTo: ["."]
defaultServiceExportTo: ["*", "istio-system"]
outboundTrafficPolicy:
  mode: REGISTRY_ONLY
discoverySelectors:
- matchLabels: {env: prod}
rootNamespace: istio-config
trustDomainAliases: [td2, old.td, td2]
trustDomain: example.org
`);
    expect(r).toEqual({
      ok: true,
      value: {
        model: {
          trustDomain: "example.org",
          trustDomainAliases: ["old.td", "td2"],
          rootNamespace: "istio-config",
          discoverySelectors: [{ matchLabels: { env: "prod" } }],
          outboundTrafficPolicy: { mode: "REGISTRY_ONLY" },
          defaultServiceExportTo: ["*", "istio-system"],
          defaultVirtualServiceExportTo: ["."],
          defaultDestinationRuleExportTo: ["~"],
          enableAutoMtls: false,
        },
        unsupported: [],
        unknown: [],
      },
    });
    const reordered = parseMeshConfig("trustDomain: example.org\nenableAutoMtls: false\n");
    const original = parseMeshConfig("enableAutoMtls: false\ntrustDomain: example.org\n");
    expect(JSON.stringify(reordered)).toBe(JSON.stringify(original));
  });

  it("proto field names as protobuf JSON takes them; enum numbers; an empty policy is REGISTRY_ONLY; null is unset", () => {
    expect(parseMeshConfig("trust_domain: a.b\nenable_auto_mtls: true\nroot_namespace: null")).toMatchObject({
      ok: true,
      value: { model: { trustDomain: "a.b", enableAutoMtls: true } },
    });
    expect(parseMeshConfig("outboundTrafficPolicy: {mode: 1}")).toMatchObject({
      value: { model: { outboundTrafficPolicy: { mode: "ALLOW_ANY" } } },
    });
    expect(parseMeshConfig("outboundTrafficPolicy: {}")).toMatchObject({
      value: { model: { outboundTrafficPolicy: { mode: "REGISTRY_ONLY" } } },
    });
    expect(parseMeshConfig('rootNamespace: ""')).toMatchObject({ value: { model: {} } });
  });

  it("MeshConfig fields not implemented are accepted and listed; keys MeshConfig lacks are ignored, as ApplyMeshConfig does", () => {
    const r = parseMeshConfig(`
accessLogFile: /dev/stdout
defaultConfig:
  discoveryAddress: istiod.istio-system.svc:15012
mesh_mTLS: {minProtocolVersion: TLSV1_3}
enableTracing: true
notAMeshField: 1
trustDomain: cluster.local
`);
    expect(r).toEqual({
      ok: true,
      value: {
        model: { trustDomain: "cluster.local" },
        unsupported: ["accessLogFile", "defaultConfig", "enableTracing", "meshMTLS"],
        unknown: ["notAMeshField"],
      },
    });
  });

  it("rootNamespace and exportTo entries are taken as written (istiod's ValidateMeshConfig checks neither)", () => {
    const r = parseMeshConfig('rootNamespace: Istio_Config\ndefaultServiceExportTo: ["Bad_NS"]');
    expect(r).toMatchObject({
      ok: true,
      value: { model: { rootNamespace: "Istio_Config", defaultServiceExportTo: ["Bad_NS"] } },
    });
  });

  it("an empty document sets nothing", () => {
    expect(parseMeshConfig("")).toEqual({ ok: true, value: { model: {}, unsupported: [], unknown: [] } });
    expect(parseMeshConfig("# only a comment\n")).toMatchObject({ ok: true, value: { model: {} } });
  });
});
