/**
 * endpointUpdateRequiresPush (Istio's endpointUpdateRequiresPush): the same answer whether the
 * lists are canonical (the ordered walk) or not (the keyed comparison).
 */
import { describe, expect, it } from "vitest";
import type { Endpoint } from "../../../lib/model/index.ts";
import { sortUniqueEndpoints } from "../../../lib/shards/endpoint-order.ts";
import { endpointUpdateRequiresPush } from "../../../lib/shards/endpoint-shards.ts";
import { ep } from "./builders.ts";

const a = ep({ address: "10.0.0.1" });
const b = ep({ address: "10.0.0.2" });
const c = ep({ address: "10.0.0.3" });
const bOtherPort = ep({ address: "10.0.0.2", port: 9090 });
const bOtherName = ep({ address: "10.0.0.2", servicePortName: "http" });
const bUnhealthy = ep({ address: "10.0.0.2", health: "UNHEALTHY" });
const bOtherZone = ep({ address: "10.0.0.2", locality: { region: "us-east-1", zone: "b", subzone: "" } });
const dUnhealthy = ep({ address: "10.0.0.4", health: "UNHEALTHY" });

interface Case {
  name: string;
  old: Endpoint[] | undefined;
  incoming: Endpoint[];
  sendUnhealthy?: boolean;
  push: boolean;
}

const cases: Case[] = [
  { name: "no old shard", old: undefined, incoming: [a], push: true },
  { name: "identical", old: [a, b, c], incoming: [a, b, c], push: false },
  { name: "both empty", old: [], incoming: [], push: false },
  { name: "one removed (first)", old: [a, b, c], incoming: [b, c], push: true },
  { name: "one removed (middle)", old: [a, b, c], incoming: [a, c], push: true },
  { name: "one removed (last)", old: [a, b, c], incoming: [a, b], push: true },
  { name: "all removed", old: [a, b], incoming: [], push: true },
  { name: "healthy one added (first)", old: [b, c], incoming: [a, b, c], push: true },
  { name: "healthy one added (last)", old: [a, b], incoming: [a, b, c], push: true },
  { name: "unhealthy one added", old: [a, c], incoming: [a, c, dUnhealthy], push: false },
  {
    name: "unhealthy one added, sent",
    old: [a, c],
    incoming: [a, c, dUnhealthy],
    sendUnhealthy: true,
    push: true,
  },
  { name: "unhealthy one added in the middle", old: [a, c], incoming: [a, bUnhealthy, c], push: false },
  { name: "one turned unhealthy", old: [a, b, c], incoming: [a, bUnhealthy, c], push: true },
  { name: "one changed locality", old: [a, b], incoming: [a, bOtherZone], push: true },
  { name: "same address, other port", old: [a, b], incoming: [a, bOtherPort], push: true },
  { name: "same address, other port name", old: [a, b], incoming: [a, bOtherName], push: true },
  { name: "one swapped for an unhealthy new one", old: [a, b], incoming: [a, dUnhealthy], push: true },
];

describe("endpointUpdateRequiresPush", () => {
  it.each(cases)("$name", ({ old, incoming, sendUnhealthy = false, push }) => {
    const canonical = (l: Endpoint[]) => sortUniqueEndpoints(l);
    // Canonical lists take the ordered walk; reversed ones (out of order) the keyed comparison.
    expect(endpointUpdateRequiresPush(old && canonical(old), canonical(incoming), sendUnhealthy)).toBe(push);
    expect(
      endpointUpdateRequiresPush(
        old && [...canonical(old)].reverse(),
        [...canonical(incoming)].reverse(),
        sendUnhealthy,
      ),
    ).toBe(push);
  });
});
