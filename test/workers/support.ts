/**
 * Drives the real Worker (its default export, in workerd) and the real MeshStore Durable Object:
 * ingest over HTTP, xDS and status over Connect, and the debounce alarm run explicitly on a
 * frozen, far-future clock so the runtime never fires an alarm on its own during a test.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { meshStub } from "../../functions/workers/app.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";

export { TypeUrl };

/** The bearer token the Worker under test requires (set in vitest.workers.config.ts). */
export const testToken: string = env.EDGEPILOT_TOKEN ?? "";
if (testToken === "") throw new Error("vitest.workers.config.ts must set EDGEPILOT_TOKEN for these tests");

/** The xDS read token the Worker under test requires (XDS_AUTH=token, vitest.workers.config.ts). */
export const testXdsToken: string = env.EDGEPILOT_XDS_TOKEN ?? "";
if (testXdsToken === "")
  throw new Error("vitest.workers.config.ts must set EDGEPILOT_XDS_TOKEN for these tests");

/** The header every xDS read sends. */
export const xdsAuth = { authorization: `Bearer ${testXdsToken}` } as const;

export const origin = "https://edgepilot.test";

/** A request to the Worker's fetch handler, as the outside world would send it. */
export function worker(path: string, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(new Request(`${origin}${path}`, init));
}

/** POST /v1/events with a JSON body (a string is sent as is); `token: null` sends no header. */
export function ingest(
  body: unknown,
  options: { token?: string | null; contentType?: string } = {},
): Promise<Response> {
  const token = options.token === undefined ? testToken : options.token;
  const headers: Record<string, string> = { "content-type": options.contentType ?? "application/json" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return worker("/v1/events", {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A unary Connect call with the JSON codec; answers the parsed JSON body (throws on non-200). */
export async function connectJson(procedure: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await worker(`/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", "connect-protocol-version": "1", ...xdsAuth },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  return JSON.parse(text) as Record<string, unknown>;
}

/** What GetStatus says, with proto3 JSON defaults (omitted zeros, empty maps) filled back in. */
export interface Status {
  pushVersion: number;
  pendingPushes: number;
  /** type URL ─▶ name ─▶ version, every served type present. */
  versions: Record<string, Record<string, string>>;
}

/** edgepilot.v1.StatusService/GetStatus over Connect JSON. */
export async function getStatus(): Promise<Status> {
  const json = (await connectJson("edgepilot.v1.StatusService/GetStatus", {})) as {
    pushVersion?: string;
    pendingPushes?: number;
    types?: { typeUrl: string; versions?: Record<string, string> }[];
  };
  return {
    pushVersion: Number(json.pushVersion ?? 0),
    pendingPushes: json.pendingPushes ?? 0,
    versions: Object.fromEntries((json.types ?? []).map((t) => [t.typeUrl, t.versions ?? {}])),
  };
}

/**
 * A sidecar node id as Istio names it, of a proxyless client (GENERATOR=grpc, CONTRACT): the suites
 * compare what it is served with the published (proxyless) set.
 */
export const envoyNode = {
  id: "sidecar~10.244.9.9~productpage-v1-6b746f74dc-9stvs.default~default.svc.cluster.local",
  cluster: "productpage.default",
  metadata: { GENERATOR: "grpc" },
};

const fetchMethods = {
  [TypeUrl.cluster]: "envoy.service.cluster.v3.ClusterDiscoveryService/FetchClusters",
  [TypeUrl.endpoint]: "envoy.service.endpoint.v3.EndpointDiscoveryService/FetchEndpoints",
  [TypeUrl.listener]: "envoy.service.listener.v3.ListenerDiscoveryService/FetchListeners",
  [TypeUrl.route]: "envoy.service.route.v3.RouteDiscoveryService/FetchRoutes",
} as const;

/** Envoy's unary Fetch RPC for `typeUrl` over Connect JSON; answers the DiscoveryResponse JSON. */
export async function fetchJson(
  typeUrl: keyof typeof fetchMethods,
  resourceNames: string[] = [],
): Promise<{ versionInfo: string; typeUrl: string; resources: Record<string, unknown>[] }> {
  const json = await connectJson(fetchMethods[typeUrl], { node: envoyNode, typeUrl, resourceNames });
  return {
    versionInfo: json.versionInfo as string,
    typeUrl: json.typeUrl as string,
    resources: (json.resources ?? []) as Record<string, unknown>[],
  };
}

/** The name a resource's JSON carries (ClusterLoadAssignment calls it clusterName). */
export function resourceName(resource: Record<string, unknown>): string {
  return (resource.name ?? resource.clusterName) as string;
}

/** The one MeshStore the Worker uses. */
export const mesh = () => meshStub(env);

/** When the MeshStore's alarm is set for, or null. */
export function alarmAt(): Promise<number | null> {
  return runInDurableObject(mesh(), (_object, state) => state.storage.getAlarm());
}

/**
 * Freezes Date (shared by the tests, the Worker and the Durable Object: one isolate) a day ahead
 * of real time, so the alarms the Worker sets are never due in real time and only run when a
 * test runs them. Returns the frozen time.
 */
export function freezeClock(): number {
  const at = Date.now() + 86_400_000;
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(at);
  return at;
}

/** Moves the frozen clock to `at` (never backwards). */
export function advanceClockTo(at: number): void {
  if (at > Date.now()) vi.setSystemTime(at);
}

/**
 * Runs the alarm, moving the clock to each alarm time, until no alarm is set: what the runtime
 * would do over the next moments. Answers how many alarm runs it took.
 */
export async function runAlarmsUntilIdle(limit = 10): Promise<number> {
  let runs = 0;
  for (let at = await alarmAt(); at !== null; at = await alarmAt()) {
    if (++runs > limit) throw new Error(`the alarm was still set after ${limit} runs`);
    advanceClockTo(at);
    expect(await runDurableObjectAlarm(mesh())).toBe(true);
  }
  return runs;
}
