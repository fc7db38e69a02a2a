/**
 * One Envoy SDS stream (envoy.service.secret.v3 StreamSecrets, SotW) as Istio's SDS server answers
 * it (security/pkg/nodeagent/sds): `default` is the workload's certificate chain and key, `ROOTCA`
 * the root it chains to. A request naming a new set of secrets is answered with all of them once
 * the certificate exists (Envoy waits until then); an ACK (the last nonce, no error) and a stale
 * nonce are answered with nothing; a NACK is logged and not resent; every new certificate is pushed
 * to the stream with its version. Pure: the driver sends what `send` returns.
 */
import { create } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import { type Secret, SecretSchema } from "../gen/envoy/extensions/transport_sockets/tls/v3/secret_pb.ts";
import type { WorkloadSecret } from "./cert-machine.ts";

/** The two secrets the agent serves, named as Istio's (pkg/security WorkloadKeyCertResourceName, RootCertReqResourceName). */
export const sdsSecretNames = { workload: "default", root: "ROOTCA" } as const;

/** The Secret type URL of SDS responses. */
export const secretTypeUrl = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret";

/** What one stream asked for and was last sent. */
export interface SdsSession {
  /** The names of the last request that changed them; undefined before the first request. */
  names: string[] | undefined;
  /** The nonce of the last response; an ACK or NACK names it. */
  nonce: string | undefined;
  /** The certificate version last sent; undefined: nothing sent for the current names. */
  sent: string | undefined;
}

/** What a stream does next: answer with these names at this version, and a line to log. */
export interface SdsStep {
  session: SdsSession;
  send?: { names: string[]; secret: WorkloadSecret };
  log?: string;
}

/** A stream that has asked nothing yet. */
export function newSdsSession(): SdsSession {
  return { names: undefined, nonce: undefined, sent: undefined };
}

/** One request of the stream, with the certificate published now (if any). */
export function onSdsRequest(
  s: SdsSession,
  req: {
    resourceNames: readonly string[];
    responseNonce: string;
    errorDetail?: { message: string } | undefined;
  },
  current: WorkloadSecret | undefined,
): SdsStep {
  if (s.nonce !== undefined && req.responseNonce !== "" && req.responseNonce !== s.nonce)
    return { session: s };
  if (req.errorDetail)
    return {
      session: s,
      log: `agent: SDS: Envoy refused secrets ${s.names?.join(",") ?? ""} version ${s.sent ?? ""}: ${req.errorDetail.message}`,
    };
  const names = [...new Set(req.resourceNames)].sort();
  const same = s.names !== undefined && names.join("\n") === s.names.join("\n");
  // An ACK, or a repeat of the names while a response is awaited: nothing new to say.
  if (same && (s.sent !== undefined || current === undefined)) return { session: s };
  const unknown = names.filter((n) => n !== sdsSecretNames.workload && n !== sdsSecretNames.root);
  const log =
    unknown.length > 0
      ? `agent: SDS: Envoy asks for ${unknown.join(", ")}; only ${sdsSecretNames.workload} and ${sdsSecretNames.root} are served`
      : undefined;
  const session: SdsSession = { ...s, names, sent: undefined };
  if (current === undefined) return { session, ...(log && { log }) };
  return {
    session: { ...session, sent: current.version },
    send: { names, secret: current },
    ...(log && { log }),
  };
}

/** A new certificate: the stream is sent it when it asked for secrets and holds an older version. */
export function onSdsPublish(s: SdsSession, secret: WorkloadSecret): SdsStep {
  if (s.names === undefined || s.sent === secret.version) return { session: s };
  return { session: { ...s, sent: secret.version }, send: { names: s.names, secret } };
}

/** The Secret resources for `names` (the two the agent serves; any other is left out), packed. */
export function sdsResources(names: readonly string[], secret: WorkloadSecret): Any[] {
  const out: Any[] = [];
  for (const name of names) {
    const s = sdsSecret(name, secret);
    if (s) out.push(anyPack(SecretSchema, s));
  }
  return out;
}

/** One named Secret as Istio's SDS server builds it (inline bytes), or undefined for a name it does not serve. */
export function sdsSecret(name: string, secret: WorkloadSecret): Secret | undefined {
  const bytes = (pem: string) => ({
    specifier: { case: "inlineBytes" as const, value: new TextEncoder().encode(pem) },
  });
  if (name === sdsSecretNames.workload)
    return create(SecretSchema, {
      name,
      type: {
        case: "tlsCertificate",
        value: { certificateChain: bytes(secret.certChainPem), privateKey: bytes(secret.privateKeyPem) },
      },
    });
  if (name === sdsSecretNames.root)
    return create(SecretSchema, {
      name,
      type: { case: "validationContext", value: { trustedCa: bytes(secret.rootCertPem) } },
    });
  return undefined;
}
