/**
 * A Gateway listener's `tls` ▶ the Istio server's TLS settings, as istiod's buildTLS: Terminate ▶
 * SIMPLE (or the mode `gateway.istio.io/tls-terminate-mode` names) with credentialName
 * `kubernetes-gateway://<ns>/<secret>` (the SDS resource name istiod gives it), Passthrough ▶
 * PASSTHROUGH. A certificate of another namespace needs a ReferenceGrant: refused refs never reach
 * the server, and the error becomes the listener's ResolvedRefs condition.
 */

import type { ReferenceGrants } from "./reference-grants.ts";
import { gatewayGroup, type Listener } from "./types.ts";

/** buildTLS for a listener: the server's tls, or the error its ResolvedRefs condition reports. */
export function buildListenerTls(
  ctx: { grants: ReferenceGrants; secrets?: ReadonlySet<string> },
  gw: { namespace: string },
  l: Listener,
): { tls?: Record<string, unknown>; error?: { reason: string; message: string } } {
  if (!l.tls) return {};
  const mode = l.tls.mode ?? "Terminate";
  if (mode === "Passthrough") return { tls: { mode: "PASSTHROUGH" } };
  const out: Record<string, unknown> = { mode: "SIMPLE" };
  const option = l.tls.options?.["gateway.istio.io/tls-terminate-mode"];
  if (option === "MUTUAL") out.mode = "MUTUAL";
  else if (option === "OPTIONAL_MUTUAL") out.mode = "OPTIONAL_MUTUAL";
  else if (option === "ISTIO_MUTUAL") return { tls: { mode: "ISTIO_MUTUAL" } };
  else if (option === "ISTIO_SIMPLE") return { tls: { credentialName: "builtin://", mode: "SIMPLE" } };
  const refs = l.tls.certificateRefs ?? [];
  if (refs.length > 2)
    return {
      tls: out,
      error: {
        reason: "InvalidCertificateRef",
        message: "TLS mode can only support up to 2 server certificates",
      },
    };
  const names: string[] = [];
  const errors: string[] = [];
  let reason = "";
  for (const ref of refs) {
    const refString = `${ref.group ?? ""}/${ref.kind ?? ""}/${ref.name}.${ref.namespace ?? ""}`;
    if ((ref.group ?? "") !== "" || (ref.kind ?? "Secret") !== "Secret") {
      reason ||= "InvalidCertificateRef";
      errors.push(`invalid certificate reference ${refString}, only secret is allowed`);
      continue;
    }
    const ns = ref.namespace ?? gw.namespace;
    if (ctx.secrets && !ctx.secrets.has(`${ns}/${ref.name}`)) {
      reason ||= "InvalidCertificateRef";
      errors.push(`invalid certificate reference ${refString}, secret ${ns}/${ref.name} not found`);
      continue;
    }
    const allowed = ctx.grants.allowed({
      fromGroup: gatewayGroup,
      fromKind: "Gateway",
      fromNamespace: gw.namespace,
      toGroup: "",
      toKind: "Secret",
      toNamespace: ns,
      toName: ref.name,
    });
    if (!allowed) {
      reason ||= "RefNotPermitted";
      errors.push(
        `certificateRef ${ref.name}/${ns} not accessible to a Gateway in namespace "${gw.namespace}" (missing a ReferenceGrant?)`,
      );
      continue;
    }
    names.push(`kubernetes-gateway://${ns}/${ref.name}`);
  }
  if (names.length === 0)
    return { tls: out, ...(errors.length > 0 && { error: { reason, message: errors.join("; ") } }) };
  if (names.length === 1) out.credentialName = names[0];
  else out.credentialNames = names;
  return {
    tls: Object.fromEntries(
      Object.keys(out)
        .sort()
        .map((k) => [k, out[k]]),
    ),
  };
}
