/**
 * refChanges (slice-refs.ts): the reverse-index changes between two pieces. A new piece's
 * additions come from a walk without sets; they must be exactly what the set-based diff lists,
 * in its order, whatever the piece holds (pods, repeated and unordered IPs, nodes).
 */
import { describe, expect, it } from "vitest";
import { refChanges } from "../../../lib/ingest/slice-refs.ts";
import type { RawEndpoint, SlicePiece } from "../../../lib/registry/kube/records.ts";

const raw = (address: string, over: Partial<RawEndpoint> = {}): RawEndpoint => ({
  address,
  port: 9080,
  servicePortName: "grpc",
  conditions: { ready: true, serving: true, terminating: false },
  nodeName: "",
  zone: "",
  zoneHints: [],
  ...over,
});
const piece = (endpoints: RawEndpoint[], nodes?: string[]): SlicePiece => ({
  serviceName: "reviews",
  endpoints,
  ...(nodes && { nodes }),
});
const pod = (name: string) => ({ pod: { namespace: "default", name } });
const adds = (on: "pod" | "ip" | "node", ...ids: string[]) => ids.map((id) => ({ on, id, add: true }));

describe("refChanges of a new piece", () => {
  it.each([
    {
      name: "IPs in order",
      p: piece([raw("10.0.0.1"), raw("10.0.0.10"), raw("10.0.0.2")]),
      want: adds("ip", "10.0.0.1", "10.0.0.10", "10.0.0.2"),
    },
    {
      name: "one IP on two ports",
      p: piece([raw("10.0.0.1"), raw("10.0.0.1", { port: 9090 }), raw("10.0.0.2")]),
      want: adds("ip", "10.0.0.1", "10.0.0.2"),
    },
    {
      name: "IPs out of order, one repeated apart",
      p: piece([raw("10.0.0.2"), raw("10.0.0.1"), raw("10.0.0.2", { port: 9090 })]),
      want: adds("ip", "10.0.0.2", "10.0.0.1"),
    },
    {
      name: "pods first, then IPs without a pod, then nodes",
      p: piece([
        raw("10.0.0.1", { ...pod("r-1"), nodeName: "n2" }),
        raw("10.0.0.2", { nodeName: "n1" }),
        raw("10.0.0.3", { ...pod("r-1"), nodeName: "n2" }),
        raw("10.0.0.4", pod("r-2")),
      ]),
      want: [
        ...adds("pod", "default/r-1", "default/r-2"),
        ...adds("ip", "10.0.0.2"),
        ...adds("node", "n2", "n1"),
      ],
    },
    {
      name: "a joined piece: its nodes, not its endpoints' node names",
      p: piece([raw("10.0.0.1", { nodeName: "n9" })], ["n1", "n2"]),
      want: [...adds("ip", "10.0.0.1"), ...adds("node", "n1", "n2")],
    },
    { name: "no endpoints", p: piece([]), want: [] },
  ])("$name", ({ p, want }) => {
    expect(refChanges(undefined, p)).toEqual(want);
  });
});

describe("refChanges between two pieces", () => {
  it("drops what the new piece lost, then adds what it gained, kind by kind", () => {
    const before = piece([raw("10.0.0.1", pod("r-1")), raw("10.0.0.2")], ["n1"]);
    const after = piece([raw("10.0.0.3", pod("r-3")), raw("10.0.0.2"), raw("10.0.0.4")], ["n2"]);
    expect(refChanges(before, after)).toEqual([
      { on: "pod", id: "default/r-1", add: false },
      { on: "pod", id: "default/r-3", add: true },
      { on: "ip", id: "10.0.0.4", add: true },
      { on: "node", id: "n1", add: false },
      { on: "node", id: "n2", add: true },
    ]);
  });

  it("a piece gone drops everything it had", () => {
    expect(refChanges(piece([raw("10.0.0.1")], ["n1"]), undefined)).toEqual([
      { on: "ip", id: "10.0.0.1", add: false },
      { on: "node", id: "n1", add: false },
    ]);
  });
});
