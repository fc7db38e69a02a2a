/**
 * The fields of a VirtualService, DestinationRule or Sidecar that are accepted but not implemented
 * for every client (the proxyless gRPC table in docs/concepts/istio-compatibility.md: fields only Envoy sidecars apply, such as
 * rewrite, mirrors or a DestinationRule's tls, stay listed), so ingest can list them once in its
 * summary instead of dropping them silently. Declared as the tree of implemented fields: any other
 * field present (not null and not its proto3 default) is reported with its path, e.g.
 * `spec.http[0].mirror`. A VirtualService bound to gateways only (no `mesh`) is served to gateway
 * proxies, which also implement its `tls` and `tcp` routes (lib/resources/generators/gateway/).
 */
import { child } from "../check.ts";

/** true: implemented leaf (any value); an object: implemented message; a one-element array: repeated message. */
type Shape = true | { [field: string]: Shape } | [Shape];

const loadBalancer: Shape = {
  simple: true,
  consistentHash: { httpHeaderName: true, minimumRingSize: true, ringHash: { minimumRingSize: true } },
};
const policyParts = {
  loadBalancer,
  connectionPool: { http: { http2MaxRequests: true } },
  outlierDetection: {
    consecutive5xxErrors: true,
    consecutiveGatewayErrors: true,
    consecutiveErrors: true,
    interval: true,
    baseEjectionTime: true,
    maxEjectionPercent: true,
  },
} satisfies Shape;
const trafficPolicy: Shape = {
  ...policyParts,
  portLevelSettings: [{ port: { number: true }, ...policyParts }],
};

const l4Destination: Shape = [
  { destination: { host: true, subset: true, port: { number: true } }, weight: true },
];
/** What gateway proxies implement of `tls` and `tcp` routes beside the HTTP ones. */
const gatewayRoutes = {
  tls: [{ match: [{ sniHosts: true, port: true, gateways: true }], route: l4Destination }],
  tcp: [{ match: [{ port: true, gateways: true }], route: l4Destination }],
} satisfies Shape;

const shapes: Record<UnsupportedKind, Shape> = {
  VirtualService: {
    hosts: true,
    gateways: true,
    exportTo: true,
    http: [
      {
        name: true,
        match: [{ name: true, uri: true, headers: true, port: true, ignoreUriCase: true, gateways: true }],
        route: [{ destination: { host: true, subset: true, port: { number: true } }, weight: true }],
        // Envoy sidecars get Envoy's redirect and direct response actions; proxyless gRPC clients an
        // abort with the status (route-vs.ts), since grpc-js-xds refuses those actions.
        redirect: true,
        directResponse: true,
        timeout: true,
        retries: { attempts: true, perTryTimeout: true, retryOn: true },
        fault: {
          delay: { fixedDelay: true, percentage: true, percent: true },
          abort: { grpcStatus: true, httpStatus: true, percentage: true },
        },
      },
    ],
  },
  DestinationRule: {
    host: true,
    exportTo: true,
    trafficPolicy,
    subsets: [{ name: true, labels: true, trafficPolicy }],
  },
  Sidecar: {
    egress: [{ hosts: true }],
    outboundTrafficPolicy: { mode: true },
    ingress: [
      {
        port: { number: true, protocol: true, name: true },
        bind: true,
        captureMode: true,
        defaultEndpoint: true,
      },
    ],
  },
};

/** The kinds unsupportedFields knows. */
export type UnsupportedKind = "VirtualService" | "DestinationRule" | "Sidecar";

/** Field paths (from `spec`) present in `spec` that edgepilot accepts but does not implement. */
export function unsupportedFields(kind: UnsupportedKind, spec: unknown): string[] {
  const out: string[] = [];
  const gateways = (spec as { gateways?: unknown } | undefined)?.gateways;
  const gatewayOnly =
    kind === "VirtualService" && Array.isArray(gateways) && gateways.length > 0 && !gateways.includes("mesh");
  const shape = gatewayOnly
    ? { ...(shapes.VirtualService as Record<string, Shape>), ...gatewayRoutes }
    : shapes[kind];
  walk(spec, shape, "spec", out);
  return [...new Set(out)];
}

function isDefault(v: unknown): boolean {
  return (
    v === undefined ||
    v === null ||
    v === false ||
    v === "" ||
    v === 0 ||
    (Array.isArray(v) && v.length === 0)
  );
}

function walk(v: unknown, shape: Shape, path: string, out: string[]): void {
  if (shape === true || isDefault(v)) return;
  if (Array.isArray(shape)) {
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) walk(v[i], shape[0], `${path}[${i}]`, out);
    return;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return;
  for (const [k, x] of Object.entries(v)) {
    if (isDefault(x)) continue;
    const s = shape[k];
    if (s === undefined) out.push(child(path, k));
    else walk(x, s, child(path, k), out);
  }
}
