/** What an ingest answer means to the relay: delivered, retry later, or a rejected batch to skip. */

/**
 * An ingest answer, or a network failure before one. `instance`: the answer's x-edgepilot-instance
 * header, which names the lifetime of the control plane's state (a new one after a restart that
 * lost it).
 */
export type PostResult = { status: number; body: string; instance?: string } | { error: string };

/**
 * Whether an answer says the control plane's state is not the one the relay fed before: a
 * different instance id than the last one seen. The first id seen is no restart.
 */
export function restarted(last: string | undefined, result: PostResult): boolean {
  if ("error" in result || !result.instance) return false;
  return last !== undefined && last !== result.instance;
}

/** The relay's reading of a PostResult. */
export type PostOutcome =
  | { kind: "delivered" }
  /** 5xx, 408, 429, network: the same batch again after a backoff. */
  | { kind: "retry"; why: string }
  /** 401: the token is wrong or missing; retried with backoff (the Secret may be fixed meanwhile). */
  | { kind: "unauthorized"; why: string }
  /** 400 and other 4xx: a relay bug or a bad object. `index` names the one bad event when ingest says. */
  | { kind: "rejected"; why: string; index?: number };

/** Classifies an answer. Ingest's 400 body is `{ error, index?, field? }` (CONTRACT.md). */
export function classifyPost(result: PostResult): PostOutcome {
  if ("error" in result) return { kind: "retry", why: `network: ${result.error}` };
  const { status, body } = result;
  const why = `${status} ${truncate(body, 500)}`;
  if (status >= 200 && status < 300) return { kind: "delivered" };
  if (status === 401) return { kind: "unauthorized", why };
  if (status >= 500 || status === 408 || status === 429) return { kind: "retry", why };
  const index = errorIndex(body);
  return index === undefined ? { kind: "rejected", why } : { kind: "rejected", why, index };
}

function errorIndex(body: string): number | undefined {
  try {
    const index = (JSON.parse(body) as { index?: unknown } | null)?.index;
    return typeof index === "number" && Number.isInteger(index) && index >= 0 ? index : undefined;
  } catch {
    return undefined;
  }
}

function truncate(s: string, n: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n)}…` : one;
}
