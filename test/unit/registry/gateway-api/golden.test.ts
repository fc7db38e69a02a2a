/**
 * istiod's Gateway API golden cases (testdata/, from istio 1.30.3) run through translateGatewayApi:
 * the Istio Gateways, VirtualServices and statuses must equal istiod's. Normalized, because ours by
 * nature: metadata annotations (istiod's internal bookkeeping; edgepilot keeps no annotations on
 * generated configs), the Gateway `selector` (manual deployment selects the proxy by label, where
 * istiod binds through its gateway-service annotation), a consumer mesh route's `exportTo: ["."]`
 * (how edgepilot scopes it to its namespace, which istiod does in its sidecar scope), a written-out
 * `tls.mode: PASSTHROUGH` (proto3's default, which istiod's output omits), and lastTransitionTime
 * (the status writer fills it). Kinds outside the translation (TCPRoute, TLSRoute, ServiceEntry
 * parents, ListenerSet) and routes using a filter or backend outside it (CORS, InferencePool) are
 * left out of input and expected output alike.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadAll } from "js-yaml";
import { describe, expect, it } from "vitest";
import {
  type GatewayApiInputs,
  translateGatewayApi,
} from "../../../../lib/registry/gateway-api/translate.ts";
import type { StoredConfig } from "../../../../lib/registry/istio/stored.ts";

const dir = join(dirname(fileURLToPath(import.meta.url)), "testdata");
interface Obj {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { rules?: unknown };
  status?: unknown;
}
const read = (f: string) => (loadAll(readFileSync(join(dir, f), "utf8")) as Obj[]).filter(Boolean);

/** The Services of istiod's conversion_test.go table: ingress gateway ports and address, the rest's ports. */
const serviceHosts = [
  "istio-ingressgateway.istio-system",
  "httpbin.default",
  "httpbin-apple.apple",
  "httpbin-banana.banana",
  "httpbin-second.default",
  "httpbin-wildcard.default",
  "foo-svc.default",
  "httpbin-other.default",
  "example.default",
  "echo.default",
  "httpbin.cert",
  "my-svc.service",
  "a-example.allowed-1",
  "a-example.allowed-2",
  "b-example.allowed-1",
  "svc2.allowed-1",
  "svc2.allowed-2",
  "svc1.allowed-1",
  "svc3.allowed-2",
  "svc4.default",
  "httpbin.group-namespace1",
  "httpbin.group-namespace2",
  "httpbin-zero.default",
  "httpbin.istio-system",
  "httpbin-mirror.default",
  "httpbin-foo.default",
  "httpbin-alt.default",
  "istiod.istio-system",
  "echo.istio-system",
  "httpbin-bad.default",
  "echo-1.default",
  "echo-2.default",
  "echo-port.default",
  "not-found.default",
];
/** Services whose hostname is not a Kubernetes name (the table's ServiceEntry-like entries). */
const otherServices = [
  {
    name: "example.com",
    namespace: "istio-system",
    hostname: "example.com",
    ports: [80, 34000, 34001],
    externalAddresses: [],
  },
  {
    name: "google.com",
    namespace: "default",
    hostname: "google.com",
    ports: [80, 34000, 34001],
    externalAddresses: [],
  },
];
const services = serviceHosts.map((h) => {
  const [name, namespace] = h.split(".") as [string, string];
  const ingress = name === "istio-ingressgateway";
  return {
    name,
    namespace,
    hostname: `${h}.svc.domain.suffix`,
    ports: ingress ? [80, 443, 34000, 34001] : [80, 34000, 34001],
    externalAddresses: ingress ? ["1.2.3.4"] : [],
  };
});

const ids: Record<string, string> = {
  GatewayClass: "GatewayClass",
  Gateway: "KubernetesGateway",
  HTTPRoute: "HTTPRoute",
  GRPCRoute: "GRPCRoute",
  ReferenceGrant: "ReferenceGrant",
};
/** A route with a filter (CORS) or a backend (InferencePool) the translation does not implement. */
const outOfScope = (o: Obj) =>
  /"type":"CORS"|"kind":"InferencePool"/.test(JSON.stringify(o.spec?.rules ?? []));
const isGatewayApi = (o: Obj) =>
  o.apiVersion.startsWith("gateway.networking.k8s.io/") && ids[o.kind] !== undefined;
/** `<Kind>/<name>.<namespace>` of the routes left out, as istiod's parents annotation names them. */
const leftOut = (objs: Obj[]) =>
  new Set(objs.filter(outOfScope).map((o) => `${o.kind}/${o.metadata.name}.${o.metadata.namespace}`));

function inputs(objs: Obj[]): GatewayApiInputs {
  const stored = (o: Obj): StoredConfig<never, never> => ({
    kind: ids[o.kind] as never,
    name: o.metadata.name,
    namespace: o.metadata.namespace ?? "",
    clusterId: "Kubernetes",
    resourceVersion: "1",
    labels: o.metadata.labels ?? {},
    spec: (o.spec ?? {}) as never,
    // istiod's fake objects carry no creation time either: namespace and name order them.
  });
  const api = objs.filter((o) => isGatewayApi(o) && !outOfScope(o));
  const of = (kind: string) =>
    api.map((o) => (o.kind === kind ? stored(o) : undefined)).filter((c) => c !== undefined);
  const namespaces = [...new Set(objs.map((o) => o.metadata.namespace ?? ""))]
    .filter((n) => n !== "")
    .map((n) => ({
      name: n,
      labels: { "istio.io/test-name-part": n.split("-")[0] as string },
    }));
  return {
    domainSuffix: "domain.suffix",
    // istiod's conversion tests run with PILOT_ENABLE_ALPHA_GATEWAY_API on.
    alphaGatewayApi: true,
    gatewayClasses: of("GatewayClass"),
    gateways: of("Gateway"),
    httpRoutes: of("HTTPRoute"),
    grpcRoutes: of("GRPCRoute"),
    referenceGrants: of("ReferenceGrant"),
    services: [...services, ...otherServices],
    namespaces,
  };
}

/** The golden configs generated only from kinds the translation reads. */
function expectedConfigs(golden: Obj[], dropped: Set<string>) {
  const supported = (o: Obj) => {
    const parents = String(o.metadata.annotations?.["internal.istio.io/parents"] ?? "");
    return parents.split(",").every((p) => /^(Gateway|HTTPRoute|GRPCRoute)\//.test(p) && !dropped.has(p));
  };
  const pick = (kind: string) =>
    golden
      .filter((o) => o.kind === kind && supported(o))
      .map((o) => ({ name: o.metadata.name, namespace: o.metadata.namespace ?? "", spec: o.spec }));
  return { gateways: pick("Gateway"), virtualServices: pick("VirtualService") };
}

function stripTimes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripTimes);
  if (typeof v !== "object" || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => k !== "lastTransitionTime")
      .map(([k, x]) => [k, stripTimes(x)]),
  );
}

/**
 * The spec with `tls.mode: PASSTHROUGH` left out: PASSTHROUGH is the proto3 default of Istio's
 * ServerTLSSettings.Mode, which istiod's output omits and edgepilot writes out.
 */
function withoutDefaultMode(spec: Record<string, unknown>): Record<string, unknown> {
  const servers = (spec.servers as { tls?: { mode?: string } }[] | undefined)?.map((s) => {
    if (s.tls?.mode !== "PASSTHROUGH") return s;
    const { mode: _mode, ...tls } = s.tls;
    return { ...s, tls };
  });
  return servers ? { ...spec, servers } : spec;
}

/** The status without listeners' attachedRoutes. */
function dropAttached(status: unknown): unknown {
  const listeners = (status as { listeners?: Record<string, unknown>[] } | null)?.listeners ?? [];
  for (const l of listeners) delete l.attachedRoutes;
  return status;
}

const cases = [
  "http",
  "grpc",
  "mesh",
  "weighted",
  "reference-policy-service",
  "redirect-only",
  "route-binding",
  "isolation",
  "multi-gateway",
  "route-precedence",
  "zero",
  "empty-backend-refs",
  "http-grpc-same-host",
  "mismatch",
  "reference-grant-multiple-to",
  "tls-terminate",
];

describe("istiod's Gateway API golden cases", () => {
  for (const name of cases) {
    describe(name, () => {
      const input = read(`${name}.yaml`);
      const out = translateGatewayApi(inputs(input));

      it("generates istiod's Istio Gateways and VirtualServices", () => {
        const want = expectedConfigs(read(`${name}.yaml.golden`), leftOut(input));
        const gateways = out.gateways.map((g) => {
          const { selector: _selector, ...spec } = g.spec as Record<string, unknown>;
          return { name: g.name, namespace: g.namespace, spec: withoutDefaultMode(spec) };
        });
        const virtualServices = out.virtualServices.map((v) => {
          const { exportTo: _exportTo, ...spec } = v.spec as Record<string, unknown>;
          return { name: v.name, namespace: v.namespace, spec };
        });
        const sort = (l: { name: string; namespace: string }[]) =>
          [...l].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
        expect(sort(gateways)).toEqual(sort(want.gateways));
        expect(sort(virtualServices)).toEqual(sort(want.virtualServices));
      });

      it("computes istiod's statuses", () => {
        const want = read(`${name}.status.yaml.golden`)
          .filter(
            (o) =>
              isGatewayApi(o) && !leftOut(input).has(`${o.kind}/${o.metadata.name}.${o.metadata.namespace}`),
          )
          .map((o) => ({
            kind: o.kind,
            namespace: o.metadata.namespace,
            name: o.metadata.name,
            status: stripTimes(o.status),
          }));
        // A route left out (or of a kind left out) still counts in istiod's attachedRoutes: compare
        // counts only when none was.
        const dropped = leftOut(input).size > 0 || input.some((o) => /^(TCP|TLS)Route$/.test(o.kind));
        if (dropped) for (const w of want) dropAttached(w.status);
        const got = out.statuses
          .filter((s) =>
            want.some((w) => w.kind === s.kind && w.name === s.name && w.namespace === s.namespace),
          )
          .map((s) => ({
            kind: s.kind,
            namespace: s.namespace,
            name: s.name,
            status: dropped ? dropAttached(structuredClone(s.status)) : s.status,
          }));
        expect(got).toEqual(expect.arrayContaining(want));
        expect(got).toHaveLength(want.length);
      });
    });
  }
});
