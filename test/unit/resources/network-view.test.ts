/** A proxy's network view from its node (lib/resources/network-view.ts): parsing and view keys. */
import { describe, expect, it } from "vitest";
import {
  inNetwork,
  ipFamilyOf,
  networkViewKey,
  networkViewOf,
  requestedNetworks,
  visibleIn,
} from "../../../lib/resources/network-view.ts";

describe("REQUESTED_NETWORK_VIEW", () => {
  it.each([
    { value: undefined, want: undefined, why: "unset: every network" },
    { value: "", want: undefined, why: "empty: every network (istiod's len == 0)" },
    { value: [], want: undefined, why: "an empty list" },
    { value: "b,a", want: ["a", "b"], why: "comma separated (ISTIO_META_), sorted" },
    { value: "a,a", want: ["a"], why: "unique" },
    { value: ["b", "a", 3], want: ["a", "b"], why: "a list; entries that are no string ignored" },
    { value: " a", want: [" a"], why: "not trimmed (Go's strings.Split)" },
    { value: 7, want: undefined, why: "neither string nor list" },
  ])("$value ▶ $want ($why)", ({ value, want }) => {
    expect(requestedNetworks(value)).toEqual(want);
  });
});

describe("IP family", () => {
  it.each([
    { ips: ["10.0.0.1"], want: "IPv4" },
    { ips: ["2001:db8::1"], want: "IPv6" },
    { ips: ["10.0.0.1", "2001:db8::1"], want: "" },
    { ips: [], want: "" },
    { ips: ["not-an-ip", "2001:db8::1"], want: "IPv6" },
  ])("$ips ▶ '$want'", ({ ips, want }) => {
    expect(ipFamilyOf(ips)).toBe(want);
  });
});

describe("view keys", () => {
  const key = (metadata: Record<string, unknown>, ips: string[] = ["10.0.0.1"]) =>
    networkViewKey(networkViewOf(metadata as never, ips));

  it("equal views, equal keys: the requested networks' order and form do not matter", () => {
    expect(key({ NETWORK: "A", REQUESTED_NETWORK_VIEW: "B,A" })).toBe(
      key({ NETWORK: "A", REQUESTED_NETWORK_VIEW: ["A", "B", "A"] }),
    );
    expect(key({ NETWORK: "A" })).toBe(key({ NETWORK: "A", REQUESTED_NETWORK_VIEW: "" }));
  });

  it("the network, the requested networks and the IP family each tell views apart", () => {
    const keys = new Set([
      key({ NETWORK: "A" }),
      key({ NETWORK: "B" }),
      key({}),
      key({ NETWORK: "A", REQUESTED_NETWORK_VIEW: "A" }),
      key({ NETWORK: "A" }, ["2001:db8::1"]),
      key({ NETWORK: "A" }, ["10.0.0.1", "2001:db8::1"]),
    ]);
    expect(keys.size).toBe(6);
  });

  it("a NETWORK that is no string is no network", () => {
    expect(networkViewOf({ NETWORK: 3 } as never, []).network).toBe("");
  });
});

describe("visibility and reach", () => {
  const v = { network: "A", requested: ["B"], family: "" as const };
  it.each([
    { network: "", visible: true, in: true },
    { network: "A", visible: false, in: true },
    { network: "B", visible: true, in: false },
  ])("endpoint on '$network'", ({ network, visible, in: inside }) => {
    expect(visibleIn(v, network)).toBe(visible);
    expect(inNetwork(v, network)).toBe(inside);
  });
  it("a proxy without network is in every network (InNetwork)", () => {
    expect(inNetwork({ network: "", requested: undefined, family: "" }, "B")).toBe(true);
  });
});
