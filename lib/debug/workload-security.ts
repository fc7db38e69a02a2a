/**
 * The security policies as they apply to workloads, for the debug paths: /debug/authorizationz
 * (istiod's, narrowed to one connected proxy: the AuthorizationPolicies that apply to it by action,
 * and its effective mTLS) and /debug/configz?mtls (the effective mTLS of every pod, paged). The
 * policies are read from the store as a push context reads them (lib/resources/security-policies.ts);
 * a proxy's workload is its node id's namespace and the labels of its pod in its cluster.
 */

import type {
  AuthorizationPolicyModel,
  MergedPeerAuthentication,
  PolicyWorkload,
  SecurityPolicies,
} from "../registry/istio/security.ts";
import type { PodInfo } from "../registry/kube/records.ts";
import { readEffectiveMesh } from "../registry/mesh/effective-mesh.ts";
import { parseSidecarNode } from "../resources/generators/sidecar/proxy.ts";
import { loadSecurityPolicies } from "../resources/security-policies.ts";
import { decodeSegment, keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { liveProxyRecord } from "./config-dump.ts";
import { type DebugList, mapPage, readPage } from "./page.ts";
import type { Parsed } from "./params.ts";

/** A workload's effective mTLS as the debug paths show it (per-port modes by target port). */
export interface MtlsJson {
  mode: MergedPeerAuthentication["mode"];
  per_port?: Readonly<Record<number, MergedPeerAuthentication["mode"]>>;
}

const mtlsJson = (m: MergedPeerAuthentication): MtlsJson => ({
  mode: m.mode,
  ...(m.perPort && { per_port: m.perPort }),
});

/** What /debug/authorizationz answers for one proxy. */
export interface Authorizationz {
  proxy: string;
  /** The workload the policies were selected for; `pod` when its pod was found (its labels come from it). */
  workload: { namespace: string; labels: Record<string, string>; pod?: string; cluster?: string };
  root_namespace: string;
  mtls: MtlsJson;
  /** The AuthorizationPolicies that apply, by action, each list oldest first (as istiod evaluates them). */
  authorization_policies: {
    custom: AuthorizationPolicyModel[];
    deny: AuthorizationPolicyModel[];
    allow: AuthorizationPolicyModel[];
    audit: AuthorizationPolicyModel[];
  };
}

/** The policies of one workload, from the policies of a push (pure). */
export function authorizationzOf(
  security: SecurityPolicies,
  proxy: string,
  workload: Authorizationz["workload"],
): Authorizationz {
  const w: PolicyWorkload = { namespace: workload.namespace, labels: workload.labels };
  const a = security.authorizationFor(w);
  return {
    proxy,
    workload,
    root_namespace: security.rootNamespace,
    mtls: mtlsJson(security.mtlsFor(w)),
    authorization_policies: {
      custom: [...a.custom],
      deny: [...a.deny],
      allow: [...a.allow],
      audit: [...a.audit],
    },
  };
}

/**
 * /debug/authorizationz?proxyID=: the proxy must hold a live status record (as config_dump), its
 * node id an Istio one (`sidecar~<ip>~<pod>.<ns>~…`) naming its namespace; 404 otherwise.
 */
export async function readAuthorizationz(
  store: Store,
  q: { proxyID: string; now: number },
): Promise<{ ok: true; body: Authorizationz } | { ok: false; error: string }> {
  const live = await liveProxyRecord(store, q);
  if (!live.ok) return live;
  const record = live.record;
  const parsed = parseSidecarNode(record.nodeId, undefined);
  if (!parsed.ok)
    return {
      ok: false,
      error: `proxyID is not an Istio node id, so its workload is unknown: ${parsed.error}`,
    };
  const { namespace } = parsed.proxy;
  const id = parsed.proxy.parts.id;
  const podName = id.includes(".") ? id.slice(0, id.indexOf(".")) : id;
  const pod =
    record.cluster !== undefined
      ? (await store.get<PodInfo>(keys.pod(record.cluster, namespace, podName)))?.value
      : undefined;
  const workload: Authorizationz["workload"] = {
    namespace,
    labels: pod?.labels ?? {},
    ...(pod && { pod: `${pod.namespace}/${pod.name}` }),
    ...(record.cluster !== undefined && { cluster: record.cluster }),
  };
  return { ok: true, body: authorizationzOf(await storedSecurity(store), record.nodeId, workload) };
}

/** One pod's effective mTLS, as /debug/configz?mtls lists it. */
export interface WorkloadMtls {
  cluster: string;
  namespace: string;
  name: string;
  mtls: MtlsJson;
}

/** /debug/configz?mtls: every pod's effective mTLS, one page of pods (by cluster, namespace, name). */
export async function readWorkloadMtls(
  store: Store,
  q: { limit: number; cursor?: string },
): Promise<Parsed<DebugList<WorkloadMtls>>> {
  const page = await readPage<PodInfo>(store, keys.pods(), q.limit, q.cursor);
  if (!page.ok) return page;
  const security = await storedSecurity(store);
  return {
    ok: true,
    value: mapPage(page.value, (e) => {
      const cluster = decodeSegment(e.key.split("/")[1] ?? "");
      const { namespace, name, labels } = e.value;
      return { cluster, namespace, name, mtls: mtlsJson(security.mtlsFor({ namespace, labels })) };
    }),
  };
}

/** The stored policies under the stored root namespace (no environment variable sets it). */
async function storedSecurity(store: Store): Promise<SecurityPolicies> {
  return loadSecurityPolicies(store, (await readEffectiveMesh(store)).rootNamespace);
}
