/**
 * Gateway credentials over SDS, as istiod's SecretGen (pilot/pkg/xds/sds.go): a gateway proxy
 * (`router~`, GENERATOR not grpc) asks for `kubernetes://<name>` (a Secret of its own namespace),
 * `kubernetes://<name>-cacert` (the CA of `<name>`, or the Secret `<name>-cacert`) or
 * `kubernetes-gateway://<ns>/<name>` (a Gateway API certificateRef: its own namespace, or one a
 * ReferenceGrant in `<ns>` opens to Gateways of its namespace). Anything else is answered as
 * absent, with one escaped log line naming the proxy and the name; a sidecar or proxyless node is
 * never bound here, so it gets no Secret at all. Secrets are read per request from the store,
 * never published with the shared resources; a push names them (secret-changes.ts) and only a
 * gateway stream takes those changes.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { type Secret, SecretSchema } from "../gen/envoy/extensions/transport_sockets/tls/v3/secret_pb.ts";
import { logSafe } from "../log-safe.ts";
import { base64Bytes, type SecretMaterial } from "../registry/kube/secret.ts";
import { caSuffix, findSecret, type StoredSecret, secretChangeView } from "../registry/kube/secret-store.ts";
import type { ResourceChange } from "../resources/changes.ts";
import type { StoredResource } from "../resources/types.ts";
import { resourceVersion } from "../resources/version.ts";
import { TypeUrl } from "../resources/xds-types.ts";
import { keys } from "../store/keys.ts";
import { listAll, type Store } from "../store/store.ts";
import { nodeGenerator, nodeLabels } from "./node-meta.ts";
import type { ResourceSource } from "./source.ts";

/** A gateway stream's claim on secrets: its node, namespace (verified by the auth layer) and cluster. */
export interface GatewaySecretsBinding {
  readonly nodeId: string;
  readonly namespace: string;
  readonly cluster?: string;
}

/** An SDS name read: which Secret it names and whether it asks for its CA only. */
export interface SdsName {
  type: "kubernetes" | "kubernetes-gateway";
  namespace: string;
  name: string;
}

/** The binding of a gateway node (`router~`, GENERATOR not grpc, a namespace); undefined for any other node. */
export function bindGatewaySecrets(node: Node, namespace: string): GatewaySecretsBinding | undefined {
  if (!node.id.startsWith("router~") || nodeGenerator(node) === "grpc" || namespace === "") return undefined;
  const { cluster } = nodeLabels(node);
  return { nodeId: node.id, namespace, ...(cluster !== undefined && { cluster }) };
}

/** Reads an SDS name as istiod's ParseResourceName: `kubernetes://` in the proxy's namespace; undefined for any other form. */
export function parseSdsName(resource: string, proxyNamespace: string): SdsName | undefined {
  if (resource.startsWith("kubernetes://")) {
    const name = resource.slice("kubernetes://".length);
    return name === "" || name.includes("/")
      ? undefined
      : { type: "kubernetes", namespace: proxyNamespace, name };
  }
  if (resource.startsWith("kubernetes-gateway://")) {
    const [namespace = "", name = "", ...rest] = resource.slice("kubernetes-gateway://".length).split("/");
    return namespace === "" || name === "" || rest.length > 0
      ? undefined
      : { type: "kubernetes-gateway", namespace, name };
  }
  return undefined;
}

/** A ReferenceGrant's spec as stored (gateway.networking.k8s.io v1beta1), read loosely. */
interface GrantSpec {
  from?: { group?: string; kind?: string; namespace?: string }[];
  to?: { group?: string; kind?: string; name?: string }[];
}

/**
 * Whether a ReferenceGrant lets Gateways of `fromNamespace` read Secret `name` (the grants are
 * those of the Secret's namespace), as the Gateway API defines `from` and `to`.
 */
export function grantAllows(grants: readonly GrantSpec[], fromNamespace: string, name: string): boolean {
  return grants.some(
    (g) =>
      (g.from ?? []).some(
        (f) =>
          f.group === "gateway.networking.k8s.io" && f.kind === "Gateway" && f.namespace === fromNamespace,
      ) &&
      (g.to ?? []).some((t) => (t.group ?? "") === "" && t.kind === "Secret" && (t.name ?? name) === name),
  );
}

/**
 * Whether the gateway of `binding` may read `ref` (istiod's filterAuthorizedResources): its own
 * namespace's `kubernetes://` names; a `kubernetes-gateway://` name of its namespace, or of one
 * whose ReferenceGrants (`grants`) open it to Gateways of the proxy's namespace.
 */
export function mayRead(binding: GatewaySecretsBinding, ref: SdsName, grants: readonly GrantSpec[]): boolean {
  if (ref.namespace === binding.namespace) return true;
  return ref.type === "kubernetes-gateway" && grantAllows(grants, binding.namespace, ref.name);
}

/** Envoy's Secret for `resource` from a stored Secret (toEnvoyTLSSecret / toEnvoyCaSecret); undefined when it lacks that part. */
export function envoySecret(resource: string, m: SecretMaterial, caOnly: boolean): Secret | undefined {
  const inline = (b64: string) => ({ specifier: { case: "inlineBytes" as const, value: base64Bytes(b64) } });
  if (caOnly) {
    if (!m.ca) return undefined;
    return create(SecretSchema, {
      name: resource,
      type: {
        case: "validationContext",
        value: { trustedCa: inline(m.ca.cert), ...(m.ca.crl !== undefined && { crl: inline(m.ca.crl) }) },
      },
    });
  }
  if (!m.certKey) return undefined;
  return create(SecretSchema, {
    name: resource,
    type: {
      case: "tlsCertificate",
      value: {
        certificateChain: inline(m.certKey.cert),
        privateKey: inline(m.certKey.key),
        ...(m.certKey.staple !== undefined && { ocspStaple: inline(m.certKey.staple) }),
      },
    },
  });
}

/** The Secret that serves `ref` (for a `-cacert` name: `<name>-cacert` itself, else `<name>`), and whether only its CA is served. */
async function lookup(
  store: Store,
  ref: SdsName,
  cluster: string | undefined,
): Promise<{ secret: StoredSecret; caOnly: boolean } | undefined> {
  if (!ref.name.endsWith(caSuffix)) {
    const secret = await findSecret(store, ref.namespace, ref.name, cluster);
    return secret && { secret, caOnly: false };
  }
  const own = await findSecret(store, ref.namespace, ref.name, cluster);
  if (own?.material.ca) return { secret: own, caOnly: true };
  const base = await findSecret(store, ref.namespace, ref.name.slice(0, -caSuffix.length), cluster);
  return base && { secret: base, caOnly: true };
}

/** The ReferenceGrant specs of one namespace (every cluster's copy). */
async function grantsIn(store: Store, namespace: string): Promise<GrantSpec[]> {
  const found = await listAll<{ spec?: GrantSpec }>(store, keys.configsIn("ReferenceGrant", namespace));
  return found.map((e) => e.value.spec ?? {});
}

/** The Secrets `names` resolve to for `binding`, authorized, encoded and versioned; refusals logged. */
export async function readGatewaySecrets(
  store: Store,
  binding: GatewaySecretsBinding,
  names: readonly string[],
  log: (line: string) => void,
): Promise<StoredResource[]> {
  const out: StoredResource[] = [];
  const refused: string[] = [];
  const grants = new Map<string, Promise<GrantSpec[]>>();
  for (const resource of [...new Set(names)].sort()) {
    const ref = parseSdsName(resource, binding.namespace);
    if (!ref) continue;
    if (ref.namespace !== binding.namespace) {
      const g = grants.get(ref.namespace) ?? grantsIn(store, ref.namespace);
      grants.set(ref.namespace, g);
      if (!mayRead(binding, ref, await g)) {
        refused.push(resource);
        continue;
      }
    }
    const found = await lookup(store, ref, binding.cluster);
    const secret = found && envoySecret(resource, found.secret.material, found.caOnly);
    if (!secret) continue;
    const body = toBinary(SecretSchema, secret);
    out.push({
      typeUrl: TypeUrl.secret,
      name: resource,
      version: await resourceVersion(body),
      body,
      service: "",
    });
  }
  if (refused.length > 0)
    log(
      `sds: proxy ${logSafe(binding.nodeId, 256)} of namespace ${logSafe(binding.namespace)} refused ` +
        `${refused.map((n) => logSafe(n, 256)).join(", ")}: a gateway reads its own namespace's secrets, or another's through a ReferenceGrant`,
    );
  return out;
}

/** `base` with the Secret type answered for the gateway of `binding` (never listed whole: SDS has no wildcard). */
export function gatewaySecretsSource(
  store: Store,
  binding: GatewaySecretsBinding,
  base: ResourceSource,
  log: (line: string) => void,
): ResourceSource {
  return {
    get: (typeUrl, names) =>
      typeUrl === TypeUrl.secret ? readGatewaySecrets(store, binding, names, log) : base.get(typeUrl, names),
    list: (typeUrl) => (typeUrl === TypeUrl.secret ? Promise.resolve([]) : base.list(typeUrl)),
  };
}

/** Whether a push's change is one a gateway of `binding` takes: a Secret change of its namespace, or any `kubernetes-gateway://` one. */
export function takesSecretChange(
  binding: GatewaySecretsBinding,
  c: Pick<ResourceChange, "name" | "view">,
): boolean {
  // Only Secret changes carry a `~secret/` view (secret-store.ts secretChangeView).
  if (c.view === undefined || !c.view.startsWith("~secret/")) return false;
  return c.view === secretChangeView(binding.namespace) || c.name.startsWith("kubernetes-gateway://");
}

/** `taken` (what the stream's view takes of `changes`) with the Secret changes a gateway of `binding` takes added. */
export function withSecretChanges(
  binding: GatewaySecretsBinding,
  changes: readonly ResourceChange[],
  taken: readonly ResourceChange[] | undefined,
): readonly ResourceChange[] | undefined {
  if (taken === undefined) return undefined;
  const own = changes.filter((c) => takesSecretChange(binding, c));
  return own.length === 0 ? taken : [...taken, ...own];
}
