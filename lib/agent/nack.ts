/** A local proxy's NACK, passed upstream where the transport can carry it (machine.ts's step()). */
import { logSafe } from "../log-safe.ts";
import { maxPollNackMessageChars } from "../xds/poll-request.ts";
import type { AgentAction, AgentInput, AgentState } from "./machine.ts";
import { ackOf, callOf, type UpstreamRequest } from "./requests.ts";

type Nack = Extract<AgentInput, { type: "nack" }>;

/**
 * A local proxy's NACK answers the upstream response of its type still waiting for its ACK, with
 * the proxy's error (prefixed by its node id), so the upstream's proxy status records it. A NACK
 * that comes after that response was ACKed is only logged: the upstream would ignore its nonce.
 */
export function nack(s: AgentState, n: Nack): [AgentState, AgentAction[]] {
  const p = s.pendingAck.get(n.typeUrl);
  const what = `NACK of ${logSafe(n.typeUrl)} from local proxy ${logSafe(n.nodeId, 256)}: ${logSafe(n.message)}`;
  if (s.transport.current !== "ads") return connectNack(s, n, what);
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

/**
 * Over Watch/Poll (no nonce to answer): the type's call restarts at once carrying the proxy's
 * error_detail (message prefixed by its node id, cut to what a PollRequest takes), the whole
 * subscription and what the cache holds, so the upstream records the NACK and answers as it would
 * any call (nothing new). Once: the calls after it (the next long poll, a reconnect) carry none.
 */
function connectNack(s: AgentState, n: Nack, what: string): [AgentState, AgentAction[]] {
  const want = s.demand.get(n.typeUrl);
  if (s.phase !== "streaming" || !want) {
    const why =
      s.phase !== "streaming" ? "the upstream is not connected" : "the agent does not ask for that type";
    return [s, [{ do: "log", line: `agent: ${what}; not forwarded (${why})` }]];
  }
  const request: UpstreamRequest = {
    ...callOf(n.typeUrl, want, s.held.get(n.typeUrl), s.node),
    error: { code: n.code, message: cutMessage(`${n.nodeId}: ${n.message}`) },
  };
  return [
    s,
    [
      { do: "send", op: s.op, request },
      { do: "log", line: `agent: forwarded upstream: ${what}` },
    ],
  ];
}

function cutMessage(m: string): string {
  if (m.length <= maxPollNackMessageChars) return m;
  const more = "…(cut)";
  return m.slice(0, maxPollNackMessageChars - more.length) + more;
}
