/**
 * The CA bundle an https:// upstream's certificate must chain to (EDGEPILOT_AGENT_CA_FILE). Read at
 * start, where an unreadable file or one without a PEM certificate stops the agent naming the
 * variable; then read again at each new upstream connection, so a rotated bundle is used from the
 * next connection on (a bundle that became unreadable keeps the last good one, said once). Without
 * the variable, Node's default CA store is used (its bundled Mozilla roots, plus NODE_EXTRA_CA_CERTS;
 * `node --use-openssl-ca` for OpenSSL's system store). Any upstream kind takes its options from here.
 */
import { readFileSync } from "node:fs";
import { logWarn } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";

/** The TLS options of an upstream connection. */
export interface UpstreamTls {
  /** `ca` for node:http2.connect / node:tls, or {} for Node's default roots. */
  options(): { ca?: string };
}

const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/** Reads `caFile` (if any) now, throwing a start-up error that names `variable` (the setting it came from). */
export function upstreamTls(
  caFile: string | undefined,
  log: (line: string) => void,
  variable = "EDGEPILOT_AGENT_CA_FILE",
): UpstreamTls {
  if (caFile === undefined) return { options: () => ({}) };
  const read = (): string => {
    const text = readFileSync(caFile, "utf8");
    if (!pem.test(text)) throw new Error("no PEM certificate (-----BEGIN CERTIFICATE-----) in it");
    return text;
  };
  let ca: string;
  try {
    ca = read();
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new Error(`${variable}=${logSafe(caFile)}: cannot use it: ${logSafe(why)}`);
  }
  let problem = "";
  return {
    options() {
      try {
        const next = read();
        if (problem) log(`agent: ${variable} ${logSafe(caFile)} is readable again`);
        problem = "";
        ca = next;
      } catch (e) {
        const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
        if (why !== problem)
          logWarn(
            log,
            `agent: ${variable} ${logSafe(caFile)}: cannot read it (${logSafe(why)}); the last good bundle is used`,
          );
        problem = why;
      }
      return { ca };
    },
  };
}

/** Node's certificate-verification error codes: said as such, naming where trust comes from. */
const untrusted = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * A connection error as the agent logs it: a certificate the agent does not trust says why and what
 * to check, naming `variable`, the setting its roots come from (the upstream's, or the CA's).
 */
export function describeConnectError(
  e: Error & { code?: string },
  caFile: string | undefined,
  variable = "EDGEPILOT_AGENT_CA_FILE",
): string {
  // A stream cancelled by its session's TLS failure carries that failure as its cause.
  const cause = e.cause as (Error & { code?: string }) | undefined;
  if (cause?.code !== undefined && untrusted.has(cause.code))
    return describeConnectError(cause, caFile, variable);
  if (e.code === undefined || !untrusted.has(e.code)) return e.message;
  const trust = caFile
    ? `${variable} (${caFile})`
    : `Node's default CA store (set ${variable} to the ${variable === "EDGEPILOT_AGENT_CA_FILE" ? "upstream's" : "CA's"} CA bundle)`;
  return `TLS: the upstream's certificate is not trusted (${e.code}: ${e.message}); it must chain to ${trust}`;
}
