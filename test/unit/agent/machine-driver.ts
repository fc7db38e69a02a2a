/** One driver for the agent machine's unit tests (machine.test.ts, transport.test.ts): pure steps, a clock variable. */
import { create } from "@bufbuild/protobuf";
import {
  type AgentAction,
  type AgentContext,
  type AgentInput,
  type AgentState,
  initialAgentState,
  step,
  type UpstreamRequest,
} from "../../../lib/agent/machine.ts";
import type { UpstreamProtocol } from "../../../lib/agent/transport.ts";
import { NodeSchema } from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";

/** The local proxy every ask comes from. */
export const node = create(NodeSchema, { id: "sidecar~10.0.0.1~app-1.shop~shop.svc.cluster.local" });

/** What a driver starts from: the upstream protocol, context overrides, and what the disk cache held. */
export interface MachineDriverOptions {
  protocol?: UpstreamProtocol;
  context?: Partial<AgentContext>;
  held?: Map<string, Map<string, string>>;
}

/** Drives the machine through inputs, returning each step's actions; the clock starts at 1000 and moves only by tick. */
export function driveMachine({ protocol = "ads", context = {}, held }: MachineDriverOptions = {}) {
  let now = 1000;
  let state: AgentState = initialAgentState(protocol, held);
  const ctx: AgentContext = {
    backoff: { initialMs: 100, maxMs: 800 },
    random: () => 1,
    ackDelayMs: 500,
    healthyStreamMs: 10_000,
    upstream: "http://up:15010",
    tokenSource: "the token file /var/run/token",
    ...context,
  };
  const m = {
    send(input: AgentInput | ((s: AgentState) => AgentInput)): AgentAction[] {
      const [next, actions] = step(state, typeof input === "function" ? input(state) : input, ctx);
      state = next;
      return actions;
    },
    get state() {
      return state;
    },
    tick(ms: number) {
      now += ms;
    },
    get now() {
      return now;
    },
    /** A local ask. */
    ask: (typeUrl: string, names: string[], wildcard = false): AgentAction[] =>
      m.send({ type: "demand", node, typeUrl, names, wildcard }),
    /** An upstream response on the current stream (Watch and Poll carry no nonce: ""). */
    respond: (typeUrl: string, nonce: string, resources: [string, string][], removed: string[] = []) =>
      m.send((s) => ({
        type: "response",
        op: s.op,
        now,
        typeUrl,
        nonce,
        resources: resources.map(([name, version]) => ({ name, version, body: new Uint8Array([1]) })),
        removed,
      })),
    /** The current stream connected (Watch/Poll: its first answer's headers). */
    connected: () => m.send((s) => ({ type: "connected", op: s.op, now })),
    end: (code = "unavailable", message = "connection refused") =>
      m.send((s) => ({ type: "ended", op: s.op, now, code, message })),
    /** The reconnect wait (or a slice's) is over. */
    timer: () => m.send((s) => ({ type: "timer", op: s.op })),
  };
  return m;
}

/** The upstream requests among `actions`, in order. */
export const sends = (actions: AgentAction[]): UpstreamRequest[] =>
  actions.flatMap((a) => (a.do === "send" ? [a.request] : []));

/** The log lines among `actions`, in order. */
export const logs = (actions: AgentAction[]) => actions.flatMap((a) => (a.do === "log" ? [a.line] : []));
