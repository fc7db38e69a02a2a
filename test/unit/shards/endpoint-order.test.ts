import { describe, expect, it } from "vitest";
import type { Endpoint } from "../../../lib/model/index.ts";
import { endpointListsEqual, sortUniqueEndpoints } from "../../../lib/shards/endpoint-order.ts";
import { ep } from "./builders.ts";

describe("sortUniqueEndpoints", () => {
  const cases: { name: string; in: Endpoint[]; want: Endpoint[] }[] = [
    { name: "empty", in: [], want: [] },
    {
      name: "by address, then port, then port name",
      in: [
        ep({ address: "10.0.0.2" }),
        ep({ port: 8080, servicePortName: "web" }),
        ep({ servicePortName: "alt" }),
        ep(),
      ],
      want: [
        ep({ port: 8080, servicePortName: "web" }),
        ep({ servicePortName: "alt" }),
        ep(),
        ep({ address: "10.0.0.2" }),
      ],
    },
    {
      name: "one per endpointKey, the healthy one wins",
      in: [ep({ health: "UNHEALTHY" }), ep({ health: "DRAINING" }), ep()],
      want: [ep()],
    },
    {
      name: "equal health: the same winner whatever the order",
      in: [
        ep({ locality: { region: "b", zone: "", subzone: "" } }),
        ep({ locality: { region: "a", zone: "", subzone: "" } }),
      ],
      want: [ep({ locality: { region: "a", zone: "", subzone: "" } })],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(sortUniqueEndpoints(c.in)).toEqual(c.want);
      expect(sortUniqueEndpoints([...c.in].reverse())).toEqual(c.want);
    });
  }

  it("does not mutate its input", () => {
    const input = [ep({ address: "10.0.0.2" }), ep()];
    sortUniqueEndpoints(input);
    expect(input.map((e) => e.address)).toEqual(["10.0.0.2", "10.0.0.1"]);
  });
});

describe("endpointListsEqual", () => {
  it("equal lists", () => expect(endpointListsEqual([ep()], [ep()])).toBe(true));
  it("a field differs", () => expect(endpointListsEqual([ep()], [ep({ labels: {} })])).toBe(false));
  it("lengths differ", () =>
    expect(endpointListsEqual([ep()], [ep(), ep({ address: "10.0.0.2" })])).toBe(false));
});
