/**
 * The workload certificate's life in the agent, as Istio's secret cache keeps it
 * (security/pkg/nodeagent/cache/secretcache.go), as a pure step function: the driver asks the CA
 * (`request`), the answer is published (`publish`: SDS and the proxyless files), and the next
 * request is scheduled at (1 - SECRET_GRACE_PERIOD_RATIO ± SECRET_GRACE_PERIOD_RATIO_JITTER) of
 * the certificate's lifetime. A failed request is retried with backoff while the last certificate
 * stays published: a proxy never loses its certificate to a CA that is away. Operations are tagged
 * with `op`; an answer about an older op is stale and ignored.
 */
import { type BackoffOptions, backoffDelay } from "../relay/backoff.ts";

/** A signed workload certificate with its key and the root it chains to (all PEM). */
export interface WorkloadSecret {
  /** Leaf first, then intermediates and the root, as the CA answered (Istio's cert-chain.pem). */
  certChainPem: string;
  /** The private key made for this certificate's CSR (PKCS#8). */
  privateKeyPem: string;
  /** The root of the chain (Istio's root-cert.pem, SDS `ROOTCA`). */
  rootCertPem: string;
  /** When the agent received it (ms): a lifetime is counted from here, as Istio's CreatedTime. */
  createdAt: number;
  /** The leaf's NotAfter (ms). */
  expiresAt: number;
  /** Grows by one per certificate published: SDS's version_info. */
  version: string;
}

/** Where the certificate is: between operations the state says what comes next. */
export type CertPhase = "idle" | "requesting" | "waiting" | "stopped";

/** The state of the workload certificate. */
export interface CertState {
  phase: CertPhase;
  /** The id of the request or wait in progress; inputs naming another op are stale. */
  op: number;
  /** The certificate published now; absent until the first one is issued. */
  current: WorkloadSecret | undefined;
  /** Consecutive failed requests, for backoff; reset by an issued certificate. */
  failures: number;
  /** When the wait in progress ends (ms): the renewal time or the next retry. */
  wakeAt: number;
}

/** What happened: the driver's results (tagged with their op), timers, and stop. */
export type CertInput =
  | { type: "start"; now: number }
  | { type: "issued"; op: number; now: number; secret: Omit<WorkloadSecret, "createdAt" | "version"> }
  | { type: "failed"; op: number; now: number; message: string }
  | { type: "timer"; op: number; now: number }
  | { type: "stop" };

/** What to do: sign a new CSR, wait (then send `timer`), publish a certificate, log a line. */
export type CertAction =
  | { do: "request"; op: number }
  | { do: "wait"; op: number; ms: number }
  | { do: "publish"; secret: WorkloadSecret }
  | { do: "log"; line: string; level?: "warn" };

/** Istio's rotation settings, the retry backoff, a random source in [0, 1). */
export interface CertContext {
  /** SECRET_GRACE_PERIOD_RATIO (0.5): renew when this share of the lifetime is left. */
  graceRatio: number;
  /** SECRET_GRACE_PERIOD_RATIO_JITTER (0.01): the ratio moves by up to this either way per certificate. */
  graceRatioJitter: number;
  backoff: BackoffOptions;
  random: () => number;
  /** The SPIFFE ID asked for, for log lines. */
  identity: string;
}

/** A certificate that has not been asked for. */
export function initialCertState(): CertState {
  return { phase: "idle", op: 0, current: undefined, failures: 0, wakeAt: 0 };
}

/**
 * How long after `now` a certificate received at `createdAt` and expiring at `expiresAt` is renewed:
 * its expiry less the grace period, the grace ratio jittered uniformly by ±jitter and kept in [0, 1],
 * never negative (Istio's rotateTime).
 */
export function rotateDelay(
  cert: { createdAt: number; expiresAt: number },
  now: number,
  ctx: Pick<CertContext, "graceRatio" | "graceRatioJitter" | "random">,
): number {
  const jitter = (ctx.random() * 2 - 1) * ctx.graceRatioJitter;
  const ratio = Math.min(1, Math.max(0, ctx.graceRatio + jitter));
  const grace = ratio * (cert.expiresAt - cert.createdAt);
  return Math.max(0, Math.round(cert.expiresAt - grace - now));
}

type Step = [CertState, CertAction[]];

/** Advances the certificate by one input. Never throws; stale inputs return the state unchanged. */
export function stepCert(s: CertState, input: CertInput, ctx: CertContext): Step {
  if (s.phase === "stopped") return [s, []];
  if ("op" in input && input.op !== s.op) return [s, []];
  switch (input.type) {
    case "start":
      return s.phase === "idle" ? request(s) : [s, []];
    case "issued": {
      if (s.phase !== "requesting") return [s, []];
      const version = String(Number(s.current?.version ?? "0") + 1);
      const secret: WorkloadSecret = { ...input.secret, createdAt: input.now, version };
      const delay = rotateDelay(secret, input.now, ctx);
      const next: CertState = { ...s, phase: "waiting", op: s.op + 1, current: secret, failures: 0 };
      next.wakeAt = input.now + delay;
      return [
        next,
        [
          { do: "publish", secret },
          {
            do: "log",
            line:
              `agent: workload certificate ${version} for ${ctx.identity} issued, valid until ` +
              `${new Date(secret.expiresAt).toISOString()}; renewing in ${Math.round(delay / 1000)}s`,
          },
          { do: "wait", op: next.op, ms: delay },
        ],
      ];
    }
    case "failed": {
      if (s.phase !== "requesting") return [s, []];
      const ms = backoffDelay(s.failures, ctx.backoff, ctx.random);
      const next: CertState = { ...s, phase: "waiting", op: s.op + 1, failures: s.failures + 1 };
      next.wakeAt = input.now + ms;
      const held = s.current
        ? s.current.expiresAt > input.now
          ? `certificate ${s.current.version} is served until then (valid until ${new Date(s.current.expiresAt).toISOString()})`
          : `certificate ${s.current.version} expired at ${new Date(s.current.expiresAt).toISOString()} and is still served: peers will refuse it`
        : "no certificate is served yet";
      return [
        next,
        [
          {
            do: "log",
            level: "warn",
            line: `agent: workload certificate for ${ctx.identity}: ${input.message}; retrying in ${ms}ms, ${held}`,
          },
          { do: "wait", op: next.op, ms },
        ],
      ];
    }
    case "timer": {
      if (s.phase !== "waiting") return [s, []];
      // A wait longer than the driver's timer allows (or a timer that fired early) waits on.
      if (input.now < s.wakeAt) {
        const next = { ...s, op: s.op + 1 };
        return [next, [{ do: "wait", op: next.op, ms: s.wakeAt - input.now }]];
      }
      return request(s);
    }
    case "stop":
      return [{ ...s, phase: "stopped", op: s.op + 1 }, []];
  }
}

function request(s: CertState): Step {
  const next: CertState = { ...s, phase: "requesting", op: s.op + 1 };
  return [next, [{ do: "request", op: next.op }]];
}
