/** API discovery: which Istio networking kinds this cluster serves (their CRDs are installed). */
import type { KubeConfig } from "@kubernetes/client-node";
import {
  istioGroupVersion,
  istioKindsServed,
  type KindSpec,
  servesIstioGroup,
} from "../../../lib/relay/kinds.ts";
import { kubeGet } from "./kube-http.ts";

/** The Istio kinds served now, from GET /apis then GET /apis/networking.istio.io/v1. Throws if discovery fails. */
export async function discoverIstioKinds(kc: KubeConfig, signal: AbortSignal): Promise<KindSpec[]> {
  if (!servesIstioGroup(await kubeGet(kc, "/apis", {}, signal))) return [];
  const { group, version } = istioGroupVersion;
  return istioKindsServed(await kubeGet(kc, `/apis/${group}/${version}`, {}, signal));
}
