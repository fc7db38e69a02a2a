/**
 * The driver of the workload certificate machine (lib/agent/cert-machine.ts) on Node: a request is
 * a new key and CSR (lib/agent/workload-csr.ts) sent to the CA (agent-ca-client.ts), a wait is a
 * timer, a publish writes OUTPUT_CERTS (agent-cert-files.ts) and tells the SDS streams. This file
 * only does I/O; what happens when is the machine's.
 */
import type { CertConfig } from "../../lib/agent/cert-config.ts";
import {
  type CertAction,
  type CertInput,
  initialCertState,
  stepCert,
  type WorkloadSecret,
} from "../../lib/agent/cert-machine.ts";
import { createWorkloadCsr, readIssuedChain } from "../../lib/agent/workload-csr.ts";
import { logError, logWarn } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";
import { type BackoffOptions, defaultBackoff } from "../../lib/relay/backoff.ts";
import type { CaClient } from "./agent-ca-client.ts";
import { writeCertFiles } from "./agent-cert-files.ts";

/** The workload certificate as it is published, and who hears of the next one. */
export interface WorkloadCerts {
  /** The certificate published now; undefined until the first is issued. */
  current(): WorkloadSecret | undefined;
  /** Calls `listener` with each certificate published from now on; returns the unsubscribe. */
  subscribe(listener: (secret: WorkloadSecret) => void): () => void;
  stop(): void;
}

/** What the driver needs besides the settings; a test may pass its clock and randomness. */
export interface WorkloadCertsDeps {
  ca: CaClient;
  log: (line: string) => void;
  now?: () => number;
  random?: () => number;
  backoff?: BackoffOptions;
}

/** The longest timer Node keeps (about 24.8 days); a longer wait is resumed by the machine. */
const maxTimerMs = 2 ** 31 - 1;

/** Starts asking for the workload certificate at once. */
export function startWorkloadCerts(config: CertConfig, deps: WorkloadCertsDeps): WorkloadCerts {
  const now = deps.now ?? Date.now;
  const ctx = {
    graceRatio: config.graceRatio,
    graceRatioJitter: config.graceRatioJitter,
    backoff: deps.backoff ?? { ...defaultBackoff, maxMs: 60_000 },
    random: deps.random ?? Math.random,
    identity: config.identity,
  };
  let state = initialCertState();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const listeners = new Set<(secret: WorkloadSecret) => void>();

  const dispatch = (input: CertInput): void => {
    const [next, actions] = stepCert(state, input, ctx);
    state = next;
    for (const a of actions) run(a);
  };
  const run = (a: CertAction): void => {
    switch (a.do) {
      case "request":
        void issue(a.op);
        return;
      case "wait":
        clearTimeout(timer);
        timer = setTimeout(
          () => dispatch({ type: "timer", op: a.op, now: now() }),
          Math.min(a.ms, maxTimerMs),
        );
        return;
      case "publish":
        if (config.outputDir !== undefined)
          try {
            writeCertFiles(config.outputDir, a.secret);
          } catch (e) {
            logError(
              deps.log,
              `agent: OUTPUT_CERTS=${logSafe(config.outputDir)}: cannot write: ${logSafe(String(e))}`,
            );
          }
        for (const l of listeners) l(a.secret);
        return;
      case "log":
        if (a.level === "warn") logWarn(deps.log, a.line);
        else deps.log(a.line);
        return;
    }
  };
  const issue = async (op: number): Promise<void> => {
    try {
      const { csrPem, privateKeyPem } = await createWorkloadCsr(config.identity);
      const answer = await deps.ca.createCertificate(csrPem, Math.round(config.ttlMs / 1000));
      if (!answer.ok) return dispatch({ type: "failed", op, now: now(), message: answer.message });
      const chain = readIssuedChain(answer.certChain);
      if (!chain.ok) return dispatch({ type: "failed", op, now: now(), message: chain.error });
      const { certChainPem, rootCertPem, expiresAt } = chain;
      dispatch({
        type: "issued",
        op,
        now: now(),
        secret: { certChainPem, privateKeyPem, rootCertPem, expiresAt },
      });
    } catch (e) {
      dispatch({ type: "failed", op, now: now(), message: e instanceof Error ? e.message : String(e) });
    }
  };
  dispatch({ type: "start", now: now() });
  return {
    current: () => state.current,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop() {
      dispatch({ type: "stop" });
      clearTimeout(timer);
      listeners.clear();
    },
  };
}
