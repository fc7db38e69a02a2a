/**
 * The agent's workload-certificate settings, named as Istio's pilot-agent names them (SERVICE_ACCOUNT,
 * TRUST_DOMAIN, SECRET_TTL, SECRET_GRACE_PERIOD_RATIO[_JITTER], OUTPUT_CERTS, CA_ADDR and CA_ROOT_CA
 * as EDGEPILOT_CA_ADDR and EDGEPILOT_CA_ROOT_CA). Certificates are on when the pod's service account
 * is known: it is the identity the CSR asks for, and a pod without one has nothing to prove.
 */
import { parseDuration } from "../push/debounce.ts";
import type { UpstreamHttp, UpstreamProtocol } from "./transport.ts";

/** Istio's SDS socket, relative to the agent's working directory as pilot-agent's is. */
export const defaultSdsSocket = "./var/run/secrets/workload-spiffe-uds/socket";

/** How the agent reaches the CA: IstioCertificateService over gRPC (istiod, a Node XDS_PORT) or Connect (the Worker, Lambda). */
export type CaProtocol = "grpc" | "connect";

/** Validated certificate settings. */
export interface CertConfig {
  /** The SPIFFE ID asked for: spiffe://<TRUST_DOMAIN>/ns/<POD_NAMESPACE>/sa/<SERVICE_ACCOUNT>. */
  identity: string;
  /** The CA's address (`http(s)://host:port`): EDGEPILOT_CA_ADDR, else the upstream. */
  caAddr: string;
  caProtocol: CaProtocol;
  /** The HTTP version of a Connect CA: the upstream's (EDGEPILOT_AGENT_UPSTREAM_HTTP); gRPC is HTTP/2 only. */
  caHttp: UpstreamHttp;
  /** PEM roots an https:// CA must chain to; absent: the upstream's bundle when the CA is the upstream, else Node's. */
  caRootFile: string | undefined;
  /** Where the CA's bearer token is read (EDGEPILOT_CA_TOKEN_FILE, else the upstream's token file). */
  tokenFile: string | undefined;
  /** SECRET_TTL: the validity asked for (ms). */
  ttlMs: number;
  graceRatio: number;
  graceRatioJitter: number;
  /** The Unix socket of the SDS server for Envoy. */
  sdsSocket: string;
  /** OUTPUT_CERTS: where cert-chain.pem, key.pem and root-cert.pem are kept for proxyless gRPC; absent: not written. */
  outputDir: string | undefined;
}

/** The certificate settings, for parsing and --help (flags as lib/cli-flags.ts takes them). */
export const certSettings = [
  {
    flag: "service-account",
    env: "SERVICE_ACCOUNT",
    help: "this pod's service account: turns on workload certificates (SDS, OUTPUT_CERTS)",
  },
  { flag: "trust-domain", env: "TRUST_DOMAIN", fallback: "cluster.local", help: "the mesh's trust domain" },
  {
    flag: "ca-addr",
    env: "EDGEPILOT_CA_ADDR",
    help: "IstioCertificateService over gRPC (http(s)://host:port); default: the upstream (Connect for watch/poll)",
  },
  {
    flag: "ca-root-ca",
    env: "EDGEPILOT_CA_ROOT_CA",
    help: "PEM roots of an https:// CA (Istio's CA_ROOT_CA)",
  },
  {
    flag: "ca-token-file",
    env: "EDGEPILOT_CA_TOKEN_FILE",
    help: "the service-account token (audience istio-ca) sent to the CA; default: --token-file",
  },
  { flag: "secret-ttl", env: "SECRET_TTL", fallback: "24h", help: "workload certificate validity asked for" },
  {
    flag: "secret-grace-period-ratio",
    env: "SECRET_GRACE_PERIOD_RATIO",
    fallback: "0.5",
    help: "renew when this share of the lifetime is left",
  },
  {
    flag: "secret-grace-period-ratio-jitter",
    env: "SECRET_GRACE_PERIOD_RATIO_JITTER",
    fallback: "0.01",
    help: "the ratio moves by up to this either way",
  },
  {
    flag: "sds-socket",
    env: "EDGEPILOT_AGENT_SDS_SOCKET",
    fallback: defaultSdsSocket,
    help: "Unix socket of SDS for Envoy",
  },
  {
    flag: "output-certs",
    env: "OUTPUT_CERTS",
    help: "directory for cert-chain.pem, key.pem, root-cert.pem (proxyless gRPC)",
  },
] as const;

/** A setting's value and how an error names it, or undefined (lib/agent/config.ts's reader). */
type Raw = (name: string) => { value: string; label: string } | undefined;

/**
 * Reads the certificate settings (undefined when SERVICE_ACCOUNT is unset: no certificates). The CA
 * is spoken to over gRPC when named or when the upstream speaks ADS (a Node XDS_PORT, istiod), over
 * Connect when the upstream is a Worker or Lambda URL (watch, poll).
 */
export function parseCertConfig(
  raw: Raw,
  upstream: {
    url: string;
    protocol: UpstreamProtocol;
    http: UpstreamHttp;
    tokenFile: string | undefined;
    namespace: string;
  },
  errors: string[],
): CertConfig | undefined {
  const sa = raw("SERVICE_ACCOUNT");
  for (const name of [
    "EDGEPILOT_CA_ADDR",
    "EDGEPILOT_CA_ROOT_CA",
    "EDGEPILOT_CA_TOKEN_FILE",
    "OUTPUT_CERTS",
  ]) {
    const r = raw(name);
    if (r && sa === undefined)
      errors.push(`${r.label}: set, but SERVICE_ACCOUNT is not: no workload certificate is made`);
  }
  if (sa === undefined) return undefined;
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(sa.value))
    errors.push(`${sa.label}=${JSON.stringify(sa.value)}: not a service account name`);
  const td = raw("TRUST_DOMAIN") as { value: string; label: string };
  if (!/^[A-Za-z0-9]([-A-Za-z0-9._]*[A-Za-z0-9])?$/.test(td.value))
    errors.push(`${td.label}=${JSON.stringify(td.value)}: not a trust domain`);
  const ratio = (name: string, max: number): number => {
    const r = raw(name) as { value: string; label: string };
    const n = Number(r.value);
    if (r.value.trim() === "" || !Number.isFinite(n) || n < 0 || n > max)
      errors.push(`${r.label}=${JSON.stringify(r.value)}: want a number from 0 to ${max}`);
    return n;
  };
  const ttl = raw("SECRET_TTL") as { value: string; label: string };
  const ttlMs = parseDuration(ttl.value);
  if (!ttlMs.ok) errors.push(`${ttl.label}: ${ttlMs.error}`);
  else if (ttlMs.ms < 1000) errors.push(`${ttl.label}=${JSON.stringify(ttl.value)}: at least 1s`);
  const addr = raw("EDGEPILOT_CA_ADDR");
  let caAddr = upstream.url;
  if (addr) {
    try {
      const u = new URL(addr.value);
      if ((u.protocol !== "http:" && u.protocol !== "https:") || u.pathname !== "/" || u.search || u.username)
        throw new Error("scheme");
      caAddr = `${u.protocol}//${u.host}`;
    } catch {
      errors.push(
        `${addr.label}=${JSON.stringify(addr.value)}: want http://host:port (h2c) or https://host:port (TLS)`,
      );
    }
  }
  const caRoot = raw("EDGEPILOT_CA_ROOT_CA");
  if (caRoot && caAddr.startsWith("http:"))
    errors.push(
      `${caRoot.label}: set, but the CA ${caAddr} is cleartext (http://); use https:// or unset it`,
    );
  const output = raw("OUTPUT_CERTS");
  const caProtocol: CaProtocol = addr !== undefined || upstream.protocol === "ads" ? "grpc" : "connect";
  return {
    identity: `spiffe://${td.value}/ns/${upstream.namespace}/sa/${sa.value}`,
    caAddr,
    caProtocol,
    caHttp: caProtocol === "connect" ? upstream.http : "2",
    caRootFile: caRoot?.value,
    tokenFile: raw("EDGEPILOT_CA_TOKEN_FILE")?.value ?? upstream.tokenFile,
    ttlMs: ttlMs.ok ? ttlMs.ms : 0,
    graceRatio: ratio("SECRET_GRACE_PERIOD_RATIO", 1),
    graceRatioJitter: ratio("SECRET_GRACE_PERIOD_RATIO_JITTER", 1),
    sdsSocket: (raw("EDGEPILOT_AGENT_SDS_SOCKET") as { value: string }).value,
    outputDir: output?.value,
  };
}
