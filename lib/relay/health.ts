/**
 * The relay's health, decided from what it holds (pure; functions/node/relay-health.ts serves it):
 * live while the process serves at all (GET /healthz), ready (GET /ready) once every watched kind
 * has been listed at least once, so kubelet and `kubectl rollout status` see a relay that cannot
 * reach or is forbidden by its API server as not ready, instead of a Running pod that does nothing.
 */
import type { DeliveryStats } from "./delivery.ts";

/** One watched kind: whether its first list has come back (it has a resourceVersion). */
export interface KindHealth {
  kind: string;
  listed: boolean;
}

/** What /ready answers: its status and a JSON body an operator can read. */
export interface RelayReadiness {
  status: 200 | 503;
  body: {
    ready: boolean;
    stopping: boolean;
    /** Kinds not yet listed (each still retrying with backoff; the log says why). */
    waitingFor: string[];
    kinds: number;
    stats: DeliveryStats;
  };
}

/** Ready once the relay watches at least one kind, has listed every one, and is not stopping. */
export function relayReadiness(
  kinds: readonly KindHealth[],
  stats: DeliveryStats,
  stopping: boolean,
): RelayReadiness {
  const waitingFor = kinds.filter((k) => !k.listed).map((k) => k.kind);
  const ready = !stopping && kinds.length > 0 && waitingFor.length === 0;
  return { status: ready ? 200 : 503, body: { ready, stopping, waitingFor, kinds: kinds.length, stats } };
}
