/** The mesh the Delta conformance suite feeds through real ingest posts, and waits on its pushes. */
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { StatusService } from "../../../lib/gen/edgepilot/v1/status_pb.ts";
import { endpointSlice, event, pod, service } from "../support/kube.ts";
import type { RunningControlPlane } from "../support/runtime.ts";

export const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
export const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
export const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
export const RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";

export const PORT = { name: "grpc", port: 9080 };
const NS = "default";

/** The resource names of service `name` on PORT: Cluster/ClusterLoadAssignment and Listener/RouteConfiguration. */
export const names = (name: string) => {
  const host = `${name}.${NS}.svc.cluster.local`;
  return { cluster: `outbound|${PORT.port}||${host}`, listener: `${host}:${PORT.port}` };
};

/** A node id as an Istio sidecar sends it. */
export const node = (pod: string) => ({
  id: `sidecar~10.0.0.9~${pod}.${NS}~${NS}.svc.cluster.local`,
  // A proxyless client (CONTRACT: GENERATOR=grpc): these suites test the proxyless set.
  metadata: { GENERATOR: "grpc" },
});

/** The events that create service `name` with ready endpoints at `ips` (pods, Service, one slice). */
export function serviceEvents(name: string, ips: string[]) {
  return [
    ...ips.map((ip) => event("ADDED", pod(name, NS, ip))),
    event("ADDED", service(name, NS, [PORT])),
    sliceEvent(name, ips, "ADDED"),
  ];
}

/** A running pod of service `name` at `ip`. */
export const podEvent = (name: string, ip: string) => event("ADDED", pod(name, NS, ip));

/** The slice of service `name` now serving `ips` (pods for new IPs must have been posted: podEvent). */
export function sliceEvent(name: string, ips: string[], type: "ADDED" | "MODIFIED" = "MODIFIED") {
  const endpoints = ips.map((ip) => ({ ip, ready: true }));
  return event(type, endpointSlice(`${name}-1`, name, NS, PORT, endpoints));
}

/** Deletes service `name` (its slice stays, as when a Service is deleted before its endpoints). */
export const deleteService = (name: string) => event("DELETED", service(name, NS, [PORT]));

/** The control plane's push counter. */
export async function pushVersion(cp: RunningControlPlane): Promise<bigint> {
  const status = createClient(
    StatusService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${cp.xdsPort}` }),
  );
  return (await status.getStatus({})).pushVersion;
}

/** Posts events that change the mesh and waits (≤5s) until a push after `before` published them. */
export async function apply(cp: RunningControlPlane, events: unknown[]): Promise<void> {
  const before = await pushVersion(cp);
  const res = await cp.post(events);
  if (!res.ok) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
  for (const deadline = Date.now() + 5000; Date.now() < deadline; ) {
    if ((await pushVersion(cp)) > before) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no push after posting ${events.length} event(s)`);
}

/** Waits (≤2s) until `cp`'s output matches `pattern`. */
export async function logged(cp: RunningControlPlane, pattern: RegExp): Promise<string> {
  for (const deadline = Date.now() + 2000; Date.now() < deadline; ) {
    const m = cp.output().match(pattern);
    if (m) return m[0];
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${pattern} never appeared in the output:\n${cp.output()}`);
}

/** One line per response: `<cds|eds|lds|rds> +name -name`, for order and content assertions. */
export function summary(
  responses: readonly { typeUrl: string; resources: { name: string }[]; removedResources: string[] }[],
) {
  const short: Record<string, string> = { [CDS]: "cds", [EDS]: "eds", [LDS]: "lds", [RDS]: "rds" };
  return responses.map((r) =>
    [
      short[r.typeUrl] ?? r.typeUrl,
      ...r.resources.map((x) => `+${x.name}`),
      ...r.removedResources.map((n) => `-${n}`),
    ].join(" "),
  );
}
