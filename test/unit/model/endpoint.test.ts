import { describe, expect, it } from "vitest";
import { type Endpoint, endpointEquals } from "../../../lib/model/index.ts";

const base: Endpoint = {
  address: "10.0.0.1",
  port: 80,
  servicePortName: "http",
  labels: { app: "a" },
  locality: { region: "r", zone: "z", subzone: "" },
  serviceAccount: "",
  health: "HEALTHY",
};

describe("endpointEquals", () => {
  it.each<[string, Partial<Endpoint>, boolean]>([
    ["the same endpoint", {}, true],
    ["a new weight", { weight: 2 }, false],
    ["a new network", { network: "n1" }, false],
    ["new labels", { labels: { app: "b" } }, false],
    ["another health", { health: "DRAINING" }, false],
  ])("%s ▶ %s", (_name, change, equal) => {
    expect(endpointEquals(base, { ...base, ...change })).toBe(equal);
    expect(endpointEquals({ ...base, ...change }, base)).toBe(equal);
  });
});
