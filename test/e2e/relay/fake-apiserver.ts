/**
 * A fake Kubernetes API server on loopback for the relay's tests: real HTTP, real paths, list with
 * limit/continue paging and resourceVersion, watch as chunked JSON lines from a resourceVersion with
 * bookmarks, discovery (/api, /apis, group versions), and a test API to change objects, send
 * bookmarks, expire resourceVersions (410 Gone), drop or hold watch connections, and fail requests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import {
  type FakeResource,
  FakeStore,
  fakeResources,
  type HistoryEvent,
  type KubeObj,
} from "./fake-resources.ts";

interface OpenWatch {
  resource: string;
  res: ServerResponse;
  bookmarks: boolean;
}

/** One request the fake saw. */
export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
}

/** How a watch from an expired resourceVersion is refused: a 200 with an ERROR event (as real servers do) or HTTP 410. */
export type ExpiredAs = "event" | "http";

/** The running fake and its test API. */
export interface FakeApiServer {
  url: string;
  store: FakeStore;
  /** Every request, in order. */
  requests: SeenRequest[];
  /** A KubeConfig for the fake: server http://127.0.0.1:<port>, no auth. */
  kubeConfig(): KubeConfig;
  /** The same as a kubeconfig file's YAML (JSON is YAML). */
  kubeconfigYaml(): string;
  apply(resource: string, obj: KubeObj): KubeObj;
  remove(resource: string, namespace: string | undefined, name: string): void;
  /** Sends a BOOKMARK at the current resourceVersion to every open watch that asked for bookmarks. */
  bookmark(resource?: string): void;
  /** Forgets history: watches from older resourceVersions are answered 410 (see expiredAs). */
  compact(): void;
  /** Sends an ERROR 410 event on every open watch of `resource` (all when omitted) and ends them. */
  expireWatches(resource?: string): void;
  /** Ends every open watch of `resource` (all when omitted) abruptly; returns how many. */
  dropWatches(resource?: string): number;
  /** Holds new watch requests unanswered until released (to act between a drop and the re-watch). */
  holdWatches(): void;
  /** Answers the held watch requests against the state at this moment. */
  releaseWatches(): void;
  heldWatches(): number;
  openWatches(resource?: string): number;
  /** Forgets every list snapshot: a continue token is then answered 410 Expired. */
  expireContinueTokens(): void;
  /** Answers the next `count` requests whose path and query contain `match` with `status`. */
  failNext(match: string, status: number, count?: number): void;
  expiredAs: ExpiredAs;
  /** Whether the Istio CRDs are served (discovery, lists and watches of networking.istio.io). */
  istio: boolean;
  close(): Promise<void>;
}

/** Starts the fake on a free loopback port. */
export async function startFakeApiServer(): Promise<FakeApiServer> {
  const watches = new Set<OpenWatch>();
  const held: (() => void)[] = [];
  const failures: { match: string; status: number; count: number }[] = [];
  const snapshots = new Map<string, { items: KubeObj[]; rv: string }>();
  let holding = false;
  let nextSnapshot = 0;
  const store = new FakeStore((e) => {
    for (const w of watches) if (w.resource === e.resource) writeEvent(w.res, e.type, e.object);
  });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const query = Object.fromEntries(url.searchParams);
    fake.requests.push({ method: req.method ?? "GET", path: url.pathname, query });
    const failure = failures.find((f) => f.count > 0 && (req.url ?? "").includes(f.match));
    if (failure) {
      failure.count--;
      return status(res, failure.status, "InternalError", "injected failure");
    }
    route(req, res, url.pathname, query);
  });

  function route(req: IncomingMessage, res: ServerResponse, path: string, query: Record<string, string>) {
    if (req.method !== "GET") return status(res, 405, "MethodNotAllowed", "the fake serves GET only");
    if (path === "/api") return json(res, 200, { kind: "APIVersions", versions: ["v1"] });
    if (path === "/apis") return json(res, 200, groupList());
    const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/(v1))(?:\/([a-z]+))?$/.exec(path);
    const group = m?.[2] ?? "";
    const spec = m?.[4] ? served().find((s) => s.group === group && s.resource === m[4]) : undefined;
    if (m && !m[4] && served().some((s) => s.group === group)) return json(res, 200, resourceList(group));
    if (!spec)
      return status(res, 404, "NotFound", `the server could not find the requested resource (${path})`);
    if (query.watch === "true" || query.watch === "1") {
      if (holding) return void held.push(() => watch(res, spec, query));
      return watch(res, spec, query);
    }
    list(res, spec, query);
  }

  function served(): FakeResource[] {
    return fakeResources.filter((s) => !s.istio || fake.istio);
  }

  function groupList() {
    const groups = [...new Set(served().map((s) => s.group))].filter((g) => g !== "");
    const version = (g: string) => ({ groupVersion: `${g}/v1`, version: "v1" });
    return {
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: groups.map((g) => ({ name: g, versions: [version(g)], preferredVersion: version(g) })),
    };
  }

  function resourceList(group: string) {
    const resources = served()
      .filter((s) => s.group === group)
      .map((s) => ({
        name: s.resource,
        kind: s.kind,
        namespaced: s.namespaced,
        verbs: ["get", "list", "watch"],
      }));
    return {
      kind: "APIResourceList",
      apiVersion: "v1",
      groupVersion: group ? `${group}/v1` : "v1",
      resources,
    };
  }

  function list(res: ServerResponse, spec: FakeResource, query: Record<string, string>) {
    const limit = Number(query.limit ?? 0);
    let offset = 0;
    let id = String(nextSnapshot);
    if (query.continue) {
      const token = JSON.parse(Buffer.from(query.continue, "base64url").toString()) as {
        id: string;
        offset: number;
      };
      if (!snapshots.has(token.id))
        return status(res, 410, "Expired", "the provided continue parameter is too old");
      [offset, id] = [token.offset, token.id];
    } else {
      // Items of a list carry neither apiVersion nor kind, as from a real API server.
      const items = store.list(spec.resource).map(({ apiVersion: _a, kind: _k, ...rest }) => rest as KubeObj);
      snapshots.set(String(nextSnapshot++), { items, rv: String(store.rv) });
    }
    const { items, rv: snapRv } = snapshots.get(id) as { items: KubeObj[]; rv: string };
    const end = limit > 0 ? Math.min(items.length, offset + limit) : items.length;
    const metadata: Record<string, unknown> = { resourceVersion: snapRv };
    if (end < items.length) {
      metadata.continue = Buffer.from(JSON.stringify({ id, offset: end })).toString("base64url");
      metadata.remainingItemCount = items.length - end;
    }
    const apiVersion = spec.group === "" ? "v1" : `${spec.group}/v1`;
    json(res, 200, { apiVersion, kind: `${spec.kind}List`, metadata, items: items.slice(offset, end) });
  }

  function watch(res: ServerResponse, spec: FakeResource, query: Record<string, string>) {
    const from = query.resourceVersion;
    const fromRv = from === undefined || from === "" || from === "0" ? undefined : Number(from);
    if (fromRv !== undefined && fromRv < store.compactedRv) {
      const message = `too old resource version: ${fromRv} (${store.compactedRv})`;
      if (fake.expiredAs === "http") return status(res, 410, "Expired", message);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`${JSON.stringify(expiredEvent(message))}\n`);
      return;
    }
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    res.flushHeaders();
    const w: OpenWatch = { resource: spec.resource, res, bookmarks: query.allowWatchBookmarks === "true" };
    watches.add(w);
    const forget = () => watches.delete(w);
    res.on("close", forget);
    if (fromRv === undefined) {
      for (const o of store.list(spec.resource)) writeEvent(res, "ADDED", o);
    } else {
      const replay = store.history.filter((e: HistoryEvent) => e.resource === spec.resource && e.rv > fromRv);
      for (const e of replay) writeEvent(res, e.type, e.object);
    }
    const seconds = Number(query.timeoutSeconds ?? 0);
    if (seconds > 0) {
      const t = setTimeout(() => res.end(), seconds * 1000);
      res.on("close", () => clearTimeout(t));
    }
  }

  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pick = (resource?: string) =>
    [...watches].filter((w) => resource === undefined || w.resource === resource);

  const fake: FakeApiServer = {
    url,
    store,
    requests: [],
    expiredAs: "event",
    istio: false,
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromString(fake.kubeconfigYaml());
      return kc;
    },
    kubeconfigYaml: () =>
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "fake", cluster: { server: url } }],
        users: [{ name: "nobody", user: {} }],
        contexts: [{ name: "fake", context: { cluster: "fake", user: "nobody" } }],
        "current-context": "fake",
      }),
    apply: (resource, obj) => store.apply(resource, obj),
    remove: (resource, namespace, name) => store.remove(resource, namespace, name),
    bookmark(resource) {
      const object = { kind: "Bookmark", metadata: { resourceVersion: String(store.rv) } };
      for (const w of pick(resource)) if (w.bookmarks) writeEvent(w.res, "BOOKMARK", object);
    },
    compact: () => store.compact(),
    expireWatches(resource) {
      for (const w of pick(resource)) {
        w.res.end(`${JSON.stringify(expiredEvent("too old resource version"))}\n`);
        watches.delete(w);
      }
    },
    dropWatches(resource) {
      const ws = pick(resource);
      for (const w of ws) {
        w.res.socket?.destroy();
        watches.delete(w);
      }
      return ws.length;
    },
    holdWatches: () => {
      holding = true;
    },
    releaseWatches() {
      holding = false;
      for (const f of held.splice(0)) f();
    },
    heldWatches: () => held.length,
    openWatches: (resource) => pick(resource).length,
    expireContinueTokens: () => snapshots.clear(),
    failNext: (match, code, count = 1) => void failures.push({ match, status: code, count }),
    async close() {
      for (const w of watches) w.res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

function writeEvent(res: ServerResponse, type: string, object: unknown): void {
  if (!res.writableEnded) res.write(`${JSON.stringify({ type, object })}\n`);
}

function expiredEvent(message: string) {
  const object = {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    message,
    reason: "Expired",
    code: 410,
  };
  return { type: "ERROR", object };
}

function json(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  json(res, code, { kind: "Status", apiVersion: "v1", status: "Failure", message, reason, code });
}
