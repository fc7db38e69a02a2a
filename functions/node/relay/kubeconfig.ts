/** Loads the relay's KubeConfig the usual way, with clear errors and plain-HTTP servers allowed. */
import { KubeConfig } from "@kubernetes/client-node";

/**
 * KUBECONFIG, ~/.kube/config, or the pod's service account (client-node's loadFromDefault). An
 * error instead of loadFromDefault's silent fallback to http://localhost:8080 when nothing is found.
 */
export function loadKubeConfig(
  env: Record<string, string | undefined>,
): { ok: true; kc: KubeConfig } | { ok: false; error: string } {
  const kc = new KubeConfig();
  try {
    kc.loadFromDefault();
  } catch (err) {
    return {
      ok: false,
      error: `KUBECONFIG=${env.KUBECONFIG ?? ""}: cannot load: ${err instanceof Error ? err.message : err}`,
    };
  }
  const cluster = kc.getCurrentCluster();
  const fallback = kc.getCurrentContext() === "loaded-context" && cluster?.server === "http://localhost:8080";
  if (!cluster || fallback) {
    return {
      ok: false,
      error:
        "no Kubernetes configuration found: set KUBECONFIG, provide ~/.kube/config, or run in a pod with a service account",
    };
  }
  return { ok: true, kc: allowPlainHttp(kc) };
}

/**
 * client-node refuses an http:// server unless skipTLSVerify is set, although there is no TLS to
 * verify (kubectl proxy, test API servers); set it for those servers only.
 */
export function allowPlainHttp(kc: KubeConfig): KubeConfig {
  if (!kc.clusters.some((c) => c.server.startsWith("http:") && !c.skipTLSVerify)) return kc;
  const out = new KubeConfig();
  out.loadFromOptions({
    clusters: kc.clusters.map((c) => (c.server.startsWith("http:") ? { ...c, skipTLSVerify: true } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.getCurrentContext(),
  });
  return out;
}
