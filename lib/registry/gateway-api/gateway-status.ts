/** One object's status as edgepilot's gateway controller computes it, for the relay to write back. */
export interface GatewayApiStatus {
  group: string;
  version: string;
  /** The plural resource in URLs (`httproutes`). */
  resource: string;
  /** The object's kind as the API server names it (`HTTPRoute`, `Gateway`). */
  kind: string;
  /** Absent for a cluster-scoped object (GatewayClass). */
  namespace?: string;
  name: string;
  /** metadata.generation the status was computed from (observedGeneration). */
  generation?: number;
  /** This controller's part of the status subresource, as istiod writes it. */
  status: Record<string, unknown>;
}
