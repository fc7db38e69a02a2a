/**
 * The relay's status writer machine (lib/relay/status-machine.ts), driven step by step: a round
 * reads and writes what differs, settles what is equal, leaves a 409 to the next round, backs off
 * on 5xx, bounds its writes, answers 304 rounds with nothing, ignores stale answers, and runs one
 * more round for a tick that came during one.
 */
import { describe, expect, it } from "vitest";
import type { GatewayApiStatus } from "../../../lib/registry/gateway-api/gateway-status.ts";
import {
  initialStatusState,
  type StatusAction,
  type StatusContext,
  type StatusInput,
  type StatusState,
  statusStep,
} from "../../../lib/relay/status-machine.ts";

const ctx: StatusContext = {
  backoff: { initialMs: 100, maxMs: 1000 },
  random: () => 1,
  now: () => Date.UTC(2024, 4, 2, 12, 30),
  maxWritesPerRound: 2,
};

const route = (name: string, message = "Route was valid"): GatewayApiStatus => ({
  group: "gateway.networking.k8s.io",
  version: "v1",
  resource: "httproutes",
  kind: "HTTPRoute",
  namespace: "apps",
  name,
  generation: 1,
  status: {
    parents: [
      {
        parentRef: { name: "gw" },
        controllerName: "istio.io/gateway-controller",
        conditions: [{ type: "Accepted", status: "True", reason: "Accepted", message }],
      },
    ],
  },
});

const object = (name: string, status?: unknown) => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name, namespace: "apps", resourceVersion: "7", generation: 1 },
  spec: {},
  ...(status !== undefined && { status }),
});

/** Runs inputs in order, each with the op of the state it meets; returns the last state and every action. */
function run(s: StatusState, inputs: (StatusInput | ((s: StatusState) => StatusInput))[]) {
  const actions: StatusAction[] = [];
  for (const i of inputs) {
    const [next, acts] = statusStep(s, typeof i === "function" ? i(s) : i, ctx);
    s = next;
    actions.push(...acts);
  }
  return { s, actions };
}

const fetched =
  (statuses: GatewayApiStatus[], etag = '"e1"') =>
  (s: StatusState): StatusInput => ({
    type: "fetched",
    op: s.op,
    answer: { status: 200, statuses, etag },
  });
const notModified = (s: StatusState): StatusInput => ({ type: "fetched", op: s.op, answer: { status: 304 } });
const read =
  (o: Record<string, unknown>) =>
  (s: StatusState): StatusInput => ({ type: "read", op: s.op, answer: { status: 200, object: o } });
const wrote =
  (status: number) =>
  (s: StatusState): StatusInput => ({ type: "wrote", op: s.op, answer: { status } });
const tick: StatusInput = { type: "tick" };
const kinds = (actions: StatusAction[]) =>
  actions.filter((a) => a.do !== "log").map((a) => (a.do === "count" ? `count ${a.outcome}` : a.do));

describe("status machine", () => {
  it("a round: fetch, read, write what differs; the next 304 round reads nothing", () => {
    const first = run(initialStatusState(), [tick, fetched([route("a")]), read(object("a")), wrote(200)]);
    expect(kinds(first.actions)).toEqual(["fetch", "read", "write", "count written"]);
    const write = first.actions.find((a) => a.do === "write");
    expect(write?.do === "write" && write.object.status).toMatchObject({
      parents: [
        {
          controllerName: "istio.io/gateway-controller",
          conditions: [{ lastTransitionTime: "2024-05-02T12:30:00Z" }],
        },
      ],
    });
    expect(first.s.phase).toBe("idle");
    const second = run(first.s, [tick, notModified]);
    expect(second.actions).toEqual([{ do: "fetch", op: first.s.op + 1, etag: '"e1"' }]);
    expect(second.s.phase).toBe("idle");
  });

  it("a live status equal to the merge is settled without a write", () => {
    const { s: written } = run(initialStatusState(), [
      tick,
      fetched([route("a")]),
      read(object("a")),
      wrote(200),
    ]);
    // A new control plane answer for the same object with the same status: not read again.
    const again = run(written, [tick, fetched([route("a")], '"e2"')]);
    expect(kinds(again.actions)).toEqual(["fetch"]);
    // A restarted relay reads it once and finds it equal.
    const live = {
      parents: [
        {
          parentRef: { name: "gw" },
          controllerName: "istio.io/gateway-controller",
          conditions: [
            {
              type: "Accepted",
              status: "True",
              observedGeneration: 1,
              lastTransitionTime: "2024-05-01T10:00:00Z",
              reason: "Accepted",
              message: "Route was valid",
            },
          ],
        },
      ],
    };
    const fresh = run(initialStatusState(), [tick, fetched([route("a")]), read(object("a", live))]);
    expect(kinds(fresh.actions)).toEqual(["fetch", "read", "count unchanged"]);
    expect(fresh.s.targets.values().next().value?.settled).toBe(true);
  });

  it("a 409 leaves the object to the next round (no loop); a changed status is read again", () => {
    const conflict = run(initialStatusState(), [
      tick,
      fetched([route("a"), route("b")]),
      read(object("a")),
      wrote(409),
      read(object("b")),
      wrote(200),
    ]);
    expect(kinds(conflict.actions)).toEqual([
      "fetch",
      "read",
      "write",
      "count conflict",
      "read",
      "write",
      "count written",
    ]);
    expect(conflict.s.phase).toBe("idle");
    const retry = run(conflict.s, [tick, notModified, read(object("a")), wrote(200)]);
    expect(kinds(retry.actions)).toEqual(["fetch", "read", "write", "count written"]);
    const changed = run(retry.s, [tick, fetched([route("a", "changed"), route("b")], '"e3"')]);
    expect(
      changed.actions.filter((a) => a.do === "read").map((a) => a.do === "read" && a.target.name),
    ).toEqual(["a"]);
  });

  it("5xx backs off and ends the round; the timer starts the next; a stale answer is ignored", () => {
    const failed = run(initialStatusState(), [
      tick,
      fetched([route("a")]),
      (s) => ({ type: "read", op: s.op, answer: { status: 503 } }),
    ]);
    expect(failed.s.phase).toBe("waiting");
    const waitAction = failed.actions.find((a) => a.do === "wait");
    expect(waitAction).toEqual({ do: "wait", op: failed.s.op, ms: 100 });
    // A tick while waiting changes nothing; a late answer of the read is stale.
    const stale = run(failed.s, [
      tick,
      { type: "read", op: failed.s.op - 1, answer: { status: 200, object: object("a") } },
    ]);
    expect(stale.actions).toEqual([]);
    const resumed = run(failed.s, [
      (s) => ({ type: "timer", op: s.op }),
      notModified,
      read(object("a")),
      wrote(200),
    ]);
    expect(kinds(resumed.actions)).toEqual(["fetch", "read", "write", "count written"]);
    expect(resumed.s.failures).toBe(0);
  });

  it("at most maxWritesPerRound writes; the rest wait for the next round", () => {
    const many = run(initialStatusState(), [
      tick,
      fetched([route("a"), route("b"), route("c")]),
      read(object("a")),
      wrote(200),
      read(object("b")),
      wrote(200),
    ]);
    expect(many.s.phase).toBe("idle");
    expect(many.actions.filter((a) => a.do === "read")).toHaveLength(2);
    const rest = run(many.s, [tick, notModified]);
    expect(rest.actions.map((a) => a.do === "read" && a.target.name)).toEqual([false, "c"]);
  });

  it("a tick during a round runs one more round after it", () => {
    const busy = run(initialStatusState(), [tick, tick, fetched([])]);
    expect(kinds(busy.actions)).toEqual(["fetch", "fetch"]);
    expect(busy.s.phase).toBe("fetching");
  });

  it("an object gone (404) is settled; a control plane without the endpoint is said once", () => {
    const gone = run(initialStatusState(), [
      tick,
      fetched([route("a")]),
      (s) => ({ type: "read", op: s.op, answer: { status: 404 } }),
    ]);
    expect(gone.s.phase).toBe("idle");
    expect(run(gone.s, [tick, notModified]).actions.filter((a) => a.do === "read")).toEqual([]);

    const unserved = (s: StatusState): StatusInput => ({
      type: "fetched",
      op: s.op,
      answer: { status: 404 },
    });
    const twice = run(initialStatusState(), [tick, unserved, tick, unserved]);
    expect(twice.actions.filter((a) => a.do === "log")).toHaveLength(1);
  });

  it("log lines name the object escaped, never its status", () => {
    const evil = { ...route("a"), name: 'x"\ny' };
    const { actions } = run(initialStatusState(), [tick, fetched([evil]), read(object('x"\ny')), wrote(422)]);
    const lines = actions.flatMap((a) => (a.do === "log" ? [a.line] : []));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"HTTPRoute apps/x\\"\\ny"');
    expect(lines[0]).not.toContain("Route was valid");
    expect(lines[0]).not.toContain("\n");
  });

  it("a watch event: our own write's echo changes nothing; a status someone else changed is written again", () => {
    const first = run(initialStatusState(), [tick, fetched([route("a")]), read(object("a")), wrote(200)]);
    const sent = first.actions.find((a) => a.do === "write");
    const echo = sent?.do === "write" ? sent.object : {};
    const echoed = run(first.s, [{ type: "seen", object: echo }, tick, notModified]);
    expect(kinds(echoed.actions)).toEqual(["fetch"]);
    // Another writer dropped our parent: the next round reads and writes it again.
    const clobbered = run(echoed.s, [
      { type: "seen", object: object("a", { parents: [] }) },
      tick,
      notModified,
    ]);
    expect(kinds(clobbered.actions)).toEqual(["fetch", "read"]);
    // An object edgepilot reports nothing for, or of another kind, is ignored.
    const other = { ...object("a", { parents: [] }), kind: "GRPCRoute" };
    expect(run(echoed.s, [{ type: "seen", object: other }]).s).toBe(echoed.s);
  });

  it("stop: nothing more happens", () => {
    const { s } = run(initialStatusState(), [tick, { type: "stop" }]);
    expect(run(s, [tick, notModified]).actions).toEqual([]);
  });
});
