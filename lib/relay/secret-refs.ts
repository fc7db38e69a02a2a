/**
 * Which Secrets the relay reads: only those a Gateway names, learned from the Gateways and
 * ReferenceGrants it relays. An Istio Gateway (networking.istio.io) names `servers[].tls.
 * credentialName` / `credentialNames` in its own namespace; a Gateway API Gateway
 * (gateway.networking.k8s.io) names `listeners[].tls.certificateRefs` of kind Secret, in another
 * namespace only when a ReferenceGrant there lets Gateways of its namespace read it. Each Secret
 * comes with its `<name>-cacert` companion (istiod reads the CA of a MUTUAL server from either).
 * Objects are told apart by apiVersion group and kind, never by a kind id. Pure: a driver
 * (functions/node/relay/secret-watchers.ts) starts and stops one watch per Secret from the
 * changes this answers, at most `maxWatched` of them.
 */

/** One Secret the relay reads. */
export interface SecretRef {
  namespace: string;
  name: string;
}

/** What one observation changed: the watches to start and stop, and lines to log. */
export interface SecretRefChange {
  start: SecretRef[];
  stop: SecretRef[];
  log: string[];
}

/** A watch event or list item as the API server sends it (only what this reads). */
interface Obj {
  apiVersion?: string;
  kind?: string;
  metadata?: { namespace?: string; name?: string };
  spec?: unknown;
}

/** The three kinds of objects the references are read from. */
type Source = "istio-gateway" | "gateway-api-gateway" | "reference-grant";

/** The kind of object `o` is for this module (by apiVersion group and kind), or undefined. */
export function secretRefSource(o: Obj): Source | undefined {
  const group = o.apiVersion?.includes("/") ? o.apiVersion.slice(0, o.apiVersion.indexOf("/")) : "";
  if (group === "networking.istio.io" && o.kind === "Gateway") return "istio-gateway";
  if (group === "gateway.networking.k8s.io" && o.kind === "Gateway") return "gateway-api-gateway";
  if (group === "gateway.networking.k8s.io" && o.kind === "ReferenceGrant") return "reference-grant";
  return undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** A reference as a Gateway makes it: where it points, and whether it crosses namespaces through a grant. */
interface Named extends SecretRef {
  /** Set for a Gateway API reference to another namespace: allowed only through a ReferenceGrant. */
  grantFrom?: string;
}

/** The Secrets an Istio or Gateway API Gateway names (credentialName with `kubernetes://` stripped, as istiod reads it). */
export function namedSecrets(o: Obj, source: Source | undefined = secretRefSource(o)): Named[] {
  const ns = o.metadata?.namespace ?? "";
  const spec = isRecord(o.spec) ? o.spec : {};
  const out: Named[] = [];
  if (source === "istio-gateway") {
    for (const s of list(spec.servers)) {
      const tls = isRecord(s) && isRecord(s.tls) ? s.tls : {};
      for (const n of [tls.credentialName, ...list(tls.credentialNames)]) {
        const name = str(n)?.replace(/^kubernetes:\/\//, "");
        if (name && !name.includes("://") && !name.includes("/")) out.push({ namespace: ns, name });
      }
    }
  } else if (source === "gateway-api-gateway") {
    for (const l of list(spec.listeners)) {
      const tls = isRecord(l) && isRecord(l.tls) ? l.tls : {};
      for (const r of list(tls.certificateRefs)) {
        if (!isRecord(r)) continue;
        if ((str(r.group) ?? "") !== "" || (str(r.kind) ?? "Secret") !== "Secret") continue;
        const name = str(r.name);
        const to = str(r.namespace) ?? ns;
        if (name) out.push({ namespace: to, name, ...(to !== ns && { grantFrom: ns }) });
      }
    }
  }
  return out;
}

/** Whether one ReferenceGrant spec lets Gateways of `from` read Secret `name` in its namespace. */
function grants(spec: unknown, from: string, name: string): boolean {
  const s = isRecord(spec) ? spec : {};
  const fromOk = list(s.from).some(
    (f) =>
      isRecord(f) && f.group === "gateway.networking.k8s.io" && f.kind === "Gateway" && f.namespace === from,
  );
  const toOk = list(s.to).some(
    (t) =>
      isRecord(t) && (str(t.group) ?? "") === "" && t.kind === "Secret" && (str(t.name) ?? name) === name,
  );
  return fromOk && toOk;
}

const refKey = (r: SecretRef) => `${r.namespace}/${r.name}`;
const objKey = (source: Source, o: Obj) =>
  `${source}/${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

/** The reference tracker of one relay. */
export interface SecretRefs {
  /** A watch event of a Gateway or ReferenceGrant (anything else changes nothing). */
  event(e: { type: string; object: unknown }): SecretRefChange;
  /** A complete list of one source's objects (a relist): what it lacks is forgotten. */
  resync(items: readonly unknown[], source: Source): SecretRefChange;
  /** The Secrets watched now, sorted. */
  watched(): SecretRef[];
  /** How many referenced Secrets are not watched because of the limit. */
  overLimit(): number;
}

/** Creates a tracker that watches at most `maxWatched` Secrets (the first in namespace/name order). */
export function createSecretRefs(options: { maxWatched: number }): SecretRefs {
  const gateways = new Map<string, Named[]>();
  const grantSpecs = new Map<string, { namespace: string; spec: unknown }>();
  let watched = new Map<string, SecretRef>();
  let over = 0;

  const wanted = (): Map<string, SecretRef> => {
    const all = new Map<string, SecretRef>();
    for (const refs of gateways.values())
      for (const r of refs) {
        if (r.grantFrom !== undefined) {
          const from = r.grantFrom;
          const ok = [...grantSpecs.values()].some(
            (g) => g.namespace === r.namespace && grants(g.spec, from, r.name),
          );
          if (!ok) continue;
        }
        for (const name of r.name.endsWith("-cacert") ? [r.name] : [r.name, `${r.name}-cacert`]) {
          const ref = { namespace: r.namespace, name };
          all.set(refKey(ref), ref);
        }
      }
    return all;
  };

  const settle = (): SecretRefChange => {
    const keys = [...wanted().entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const next = new Map(keys.slice(0, options.maxWatched));
    const log: string[] = [];
    const nowOver = Math.max(0, keys.length - options.maxWatched);
    if (nowOver > 0 && nowOver !== over)
      log.push(
        `secrets: ${keys.length} referenced, ${nowOver} not watched: the limit of ${options.maxWatched} watched Secrets is reached`,
      );
    over = nowOver;
    const start = [...next].filter(([k]) => !watched.has(k)).map(([, r]) => r);
    const stop = [...watched].filter(([k]) => !next.has(k)).map(([, r]) => r);
    watched = next;
    return { start, stop, log };
  };

  const put = (o: Obj, source: Source) => {
    if (source === "reference-grant")
      grantSpecs.set(objKey(source, o), { namespace: o.metadata?.namespace ?? "", spec: o.spec });
    else gateways.set(objKey(source, o), namedSecrets(o, source));
  };
  const remove = (o: Obj, source: Source) => {
    if (source === "reference-grant") grantSpecs.delete(objKey(source, o));
    else gateways.delete(objKey(source, o));
  };

  return {
    event(e) {
      const o = (isRecord(e.object) ? e.object : {}) as Obj;
      const source = secretRefSource(o);
      if (!source || (e.type !== "ADDED" && e.type !== "MODIFIED" && e.type !== "DELETED"))
        return { start: [], stop: [], log: [] };
      if (e.type === "DELETED") remove(o, source);
      else put(o, source);
      return settle();
    },
    resync(items, source) {
      const map = source === "reference-grant" ? grantSpecs : gateways;
      for (const k of [...map.keys()]) if (k.startsWith(`${source}/`)) map.delete(k);
      for (const item of items) {
        const o = (isRecord(item) ? item : {}) as Obj;
        // A list's items carry no apiVersion or kind: the source says what they are.
        put(o, source);
      }
      return settle();
    },
    watched: () => [...watched.values()],
    overLimit: () => over,
  };
}
