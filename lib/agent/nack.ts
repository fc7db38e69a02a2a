/** A local proxy's NACK, passed upstream where the transport can carry it (machine.ts's step()). */
import { logSafe } from "../log-safe.ts";
import type { AgentAction, AgentInput, AgentState } from "./machine.ts";
import { ackOf, type UpstreamRequest } from "./requests.ts";

/**
 * A local proxy's NACK answers the upstream response of its type still waiting for its ACK, with
 * the proxy's error (prefixed by its node id), so the upstream's proxy status records it. A NACK
 * that comes after that response was ACKed is only logged: the upstream would ignore its nonce.
 */
export function nack(s: AgentState, n: Extract<AgentInput, { type: "nack" }>): [AgentState, AgentAction[]] {
  const p = s.pendingAck.get(n.typeUrl);
  const what = `NACK of ${logSafe(n.typeUrl)} from local proxy ${logSafe(n.nodeId, 256)}: ${logSafe(n.message)}`;
  if (s.transport.current !== "ads") {
    const why = "Poll and Watch carry no NACK: a PollRequest's error_detail must be empty";
    return [s, [{ do: "log", line: `agent: ${what}; not forwarded (${why})` }]];
  }
  if (s.phase !== "streaming" || !p) {
    return [
      s,
      [
        {
          do: "log",
          line: `agent: ${what}; not forwarded (no upstream response of that type awaits an answer)`,
        },
      ],
    ];
  }
  const pendingAck = new Map(s.pendingAck);
  pendingAck.delete(n.typeUrl);
  const request: UpstreamRequest = {
    ...ackOf(n.typeUrl, p.nonce),
    error: { code: n.code, message: `${n.nodeId}: ${n.message}` },
  };
  return [
    { ...s, pendingAck },
    [
      { do: "send", op: s.op, request },
      { do: "log", line: `agent: forwarded upstream: ${what}` },
    ],
  ];
}
