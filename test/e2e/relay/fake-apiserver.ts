/**
 * A fake Kubernetes API server on loopback for the relay's tests: real HTTP, real paths, list with
 * limit/continue paging and resourceVersion, watch as chunked JSON lines from a resourceVersion with
 * bookmarks, GET of one object, the status subresource of CRD kinds (GET, PUT with resourceVersion
 * preconditions, recorded in `statusWrites`), discovery (/api, /apis, group versions; fake-crds.ts),
 * and a test API to change objects, install, upgrade and remove CRDs (the Istio and Gateway API
 * kinds, at any of their versions), send
 * bookmarks, expire resourceVersions (410 Gone), drop or hold watch connections, and fail requests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { FakeCrds } from "./fake-crds.ts";
import { type FakeResource, FakeStore, type HistoryEvent, type KubeObj } from "./fake-resources.ts";

interface OpenWatch {
  /** The resource's id (FakeResource.id). */
  resource: string;
  /** The version watched: every object on it carries group/version as its apiVersion. */
  version: string;
  res: ServerResponse;
  bookmarks: boolean;
  /** The namespace of a namespaced watch and its fieldSelector, as one predicate. */
  selects: (o: KubeObj) => boolean;
}

/** One request the fake saw. */
export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
}

/** One PUT to a status subresource, as the fake received and answered it. */
export interface StatusWrite {
  resource: string;
  namespace: string | undefined;
  name: string;
  /** The resourceVersion the writer sent (its optimistic-concurrency precondition). */
  resourceVersion: string | undefined;
  /** The status the writer sent. */
  status: unknown;
  /** What the fake answered: 200, 404, 409 or 400. */
  code: number;
}

/** How a watch from an expired resourceVersion is refused: a 200 with an ERROR event (as real servers do) or HTTP 410. */
export type ExpiredAs = "event" | "http";

/** The running fake and its test API. */
export interface FakeApiServer {
  url: string;
  store: FakeStore;
  /** Every request, in order. */
  requests: SeenRequest[];
  /** Every PUT to a status subresource, in order, failed ones included. */
  statusWrites: StatusWrite[];
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
  /** Forgets the failures failNext asked for and has not yet answered. */
  clearFailures(): void;
  expiredAs: ExpiredAs;
  /**
   * Installs the CRDs of `resources` (ids, fake-resources.ts; every Istio kind when omitted) at
   * `versions`, or changes the versions they are served at (an upgrade): discovery, lists and
   * watches follow. Open watches at a version no longer served end.
   */
  serveCrds(versions: readonly string[], resources?: readonly string[]): void;
  /** Deletes the CRDs of `resources` (every Istio kind when omitted): their objects go, their watches end. */
  removeCrds(resources?: readonly string[]): void;
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
  const crds = new FakeCrds();
  const store = new FakeStore((e) => {
    for (const w of watches)
      if (w.resource === e.resource && w.selects(e.object)) writeEvent(w.res, e.type, at(e.object, w));
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
    if (req.method !== "GET" && req.method !== "PUT")
      return status(res, 405, "MethodNotAllowed", "the fake serves GET, and PUT on /status");
    if (path === "/api") return json(res, 200, { kind: "APIVersions", versions: ["v1"] });
    if (path === "/apis") return json(res, 200, crds.groupList());
    const m =
      /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([a-z0-9-]+))?(?:\/([a-z]+)(?:\/([^/]+)(\/status)?)?)?$/.exec(
        path,
      );
    const group = m?.[2] ?? "";
    const version = m?.[1] ?? m?.[3] ?? "";
    const resources = m && !m[5] && !m[4] ? crds.resourceList(group, version) : undefined;
    if (resources && req.method === "GET") return json(res, 200, resources);
    const found = m?.[5] ? crds.find(group, version, m[5]) : undefined;
    const spec = found && (m?.[4] === undefined || found.namespaced) ? found : undefined;
    if (!spec)
      return status(res, 404, "NotFound", `the server could not find the requested resource (${path})`);
    const name = m?.[6] === undefined ? undefined : decodeURIComponent(m[6]);
    if (name !== undefined) return one(req, res, spec, version, m?.[4], name, m?.[7] !== undefined);
    if (req.method !== "GET") return status(res, 405, "MethodNotAllowed", "the fake writes status only");
    const selects = selector(m?.[4], query.fieldSelector);
    if (!selects) return status(res, 400, "BadRequest", `unsupported fieldSelector ${query.fieldSelector}`);
    if (query.watch === "true" || query.watch === "1") {
      if (holding) return void held.push(() => watch(res, spec, version, query, selects));
      return watch(res, spec, version, query, selects);
    }
    list(res, spec, version, query, selects);
  }

  /**
   * One object: GET of it or of its status subresource (the same object), and PUT of the status
   * subresource of a CRD kind (FakeStore.putStatus: only `.status` changes, a MODIFIED event follows).
   */
  function one(
    req: IncomingMessage,
    res: ServerResponse,
    spec: FakeResource,
    version: string,
    namespace: string | undefined,
    name: string,
    subresource: boolean,
  ) {
    const what = `${spec.resource}${spec.group ? `.${spec.group}` : ""} "${name}"`;
    if (spec.namespaced !== (namespace !== undefined))
      return status(res, 404, "NotFound", `the server could not find the requested resource`);
    if (req.method === "GET") {
      const o = store.get(spec.id, namespace, name);
      if (!o) return status(res, 404, "NotFound", `${what} not found`);
      return json(res, 200, at(o, { version, resource: spec.id }));
    }
    if (!subresource || !spec.crd)
      return status(res, 405, "MethodNotAllowed", "the fake writes only the status of CRD kinds");
    readBody(req).then(
      (text) => {
        let body: KubeObj;
        try {
          body = JSON.parse(text) as KubeObj;
        } catch {
          return status(res, 400, "BadRequest", "the body is not JSON");
        }
        const answer = store.putStatus(spec.id, namespace, name, body);
        fake.statusWrites.push({
          resource: spec.resource,
          namespace,
          name,
          resourceVersion: body.metadata?.resourceVersion,
          status: body.status,
          code: answer.code,
        });
        if (answer.code !== 200) return status(res, answer.code, answer.reason, answer.message);
        json(res, 200, at(answer.object, { version, resource: spec.id }));
      },
      () => res.destroy(),
    );
  }

  /**
   * The objects a namespaced path and a fieldSelector (`metadata.name=x,metadata.namespace=y`, the
   * two fields every kind supports) select; undefined for a selector the fake does not support.
   */
  function selector(namespace: string | undefined, fieldSelector: string | undefined) {
    const want: [string, string][] = namespace === undefined ? [] : [["metadata.namespace", namespace]];
    for (const term of fieldSelector ? fieldSelector.split(",") : []) {
      const [field, value] = term.split("=") as [string, string | undefined];
      if (value === undefined || (field !== "metadata.name" && field !== "metadata.namespace"))
        return undefined;
      want.push([field, value]);
    }
    return (o: KubeObj) =>
      want.every(([f, v]) => (f === "metadata.name" ? o.metadata.name : (o.metadata.namespace ?? "")) === v);
  }

  /** `object` as served at the watch's version (the fake stores one copy, as etcd does). */
  function at(object: KubeObj, w: Pick<OpenWatch, "version" | "resource">): KubeObj {
    const spec = store.spec(w.resource);
    return spec.crd ? { ...object, apiVersion: `${spec.group}/${w.version}` } : object;
  }

  function list(
    res: ServerResponse,
    spec: FakeResource,
    version: string,
    query: Record<string, string>,
    selects: (o: KubeObj) => boolean,
  ) {
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
      const items = store
        .list(spec.id)
        .filter(selects)
        .map(({ apiVersion: _a, kind: _k, ...rest }) => rest as KubeObj);
      snapshots.set(String(nextSnapshot++), { items, rv: String(store.rv) });
    }
    const { items, rv: snapRv } = snapshots.get(id) as { items: KubeObj[]; rv: string };
    const end = limit > 0 ? Math.min(items.length, offset + limit) : items.length;
    const metadata: Record<string, unknown> = { resourceVersion: snapRv };
    if (end < items.length) {
      metadata.continue = Buffer.from(JSON.stringify({ id, offset: end })).toString("base64url");
      metadata.remainingItemCount = items.length - end;
    }
    const apiVersion = spec.group === "" ? version : `${spec.group}/${version}`;
    json(res, 200, { apiVersion, kind: `${spec.kind}List`, metadata, items: items.slice(offset, end) });
  }

  function watch(
    res: ServerResponse,
    spec: FakeResource,
    version: string,
    query: Record<string, string>,
    selects: (o: KubeObj) => boolean,
  ) {
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
    const w: OpenWatch = {
      resource: spec.id,
      version,
      res,
      bookmarks: query.allowWatchBookmarks === "true",
      selects,
    };
    watches.add(w);
    const forget = () => watches.delete(w);
    res.on("close", forget);
    if (fromRv === undefined) {
      for (const o of store.list(spec.id).filter(selects)) writeEvent(res, "ADDED", at(o, w));
    } else {
      const replay = store.history.filter(
        (e: HistoryEvent) => e.resource === spec.id && e.rv > fromRv && selects(e.object),
      );
      for (const e of replay) writeEvent(res, e.type, at(e.object, w));
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
  const end = (ws: OpenWatch[]) => {
    for (const w of ws) {
      w.res.end();
      watches.delete(w);
    }
  };

  const fake: FakeApiServer = {
    url,
    store,
    requests: [],
    statusWrites: [],
    expiredAs: "event",
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
    apply(resource, obj) {
      const spec = store.spec(resource);
      if (crds.versionsOf(spec).length === 0)
        throw new Error(`fake apiserver: ${resource}: its CRD is not installed (serveCrds first)`);
      return store.apply(resource, obj);
    },
    serveCrds(versions, resources) {
      crds.serve(versions, resources);
      end([...watches].filter((w) => !crds.versionsOf(store.spec(w.resource)).includes(w.version)));
    },
    removeCrds(resources) {
      for (const r of crds.remove(resources)) {
        end(pick(r));
        store.purge(r);
      }
    },
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
    clearFailures: () => void failures.splice(0),
    async close() {
      for (const w of watches) w.res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
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
