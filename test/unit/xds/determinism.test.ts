import { describe, expect, it } from "vitest";
import type { ServiceView } from "../../../lib/resources/types.ts";
import { serviceRef, toStored } from "../../../lib/resources/version.ts";
import { ctx, endpoint, port, service, shards, view } from "./builders.ts";
import { generateAll } from "./checked-generators.ts";

const zone = (z: string) => ({ region: "r1", zone: z, subzone: "sz" });

/** A view with several clusters, ports, shards, localities and labels, in the given input order. */
function richView(reversed: boolean): ServiceView {
  const order = <T>(xs: T[]) => (reversed ? [...xs].reverse() : xs);
  const labels = reversed ? { version: "v1", app: "reviews" } : { app: "reviews", version: "v1" };
  const ports = order([
    port(),
    port({ name: "http", port: 8080, protocol: "HTTP" }),
    port({ name: "", port: 7070 }),
  ]);
  const east = order([
    endpoint({ address: "10.0.0.3", locality: zone("b"), labels }),
    endpoint({ address: "10.0.0.1", locality: zone("a"), labels }),
    endpoint({ address: "10.0.0.2", locality: zone("b"), health: "UNHEALTHY", labels }),
    endpoint({ address: "10.0.0.1", port: 8080, servicePortName: "http", locality: zone("a"), labels }),
  ]);
  const west = order([
    endpoint({ address: "10.0.1.1", locality: zone("c") }),
    endpoint({ address: "10.0.0.1", locality: zone("c") }),
  ]);
  const shardEntries = order<[string, typeof east]>([
    ["Kubernetes/east", east],
    ["Kubernetes/west", west],
  ]);
  return view({
    services: order([
      service({ clusterId: "east", ports, addresses: order(["10.96.0.2", "10.96.0.1"]), labels }),
      service({
        clusterId: "west",
        ports: order([...ports, port({ name: "extra", port: 9999 })]),
        addresses: ["10.97.0.1"],
      }),
    ]),
    shards: shards(Object.fromEntries(shardEntries)),
  });
}

async function publish(v: ServiceView) {
  const out = [];
  for (const { typeUrl, resources } of generateAll(v, ctx)) {
    for (const g of resources) {
      const s = await toStored(g, serviceRef(v));
      out.push({ typeUrl, name: s.name, version: s.version, body: Buffer.from(s.body).toString("hex") });
    }
  }
  return out;
}

describe("determinism", () => {
  it("differently ordered inputs give identical bytes and versions", async () => {
    const a = await publish(richView(false));
    const b = await publish(richView(true));
    expect(a.length).toBe(16); // 4 ports × 4 types
    expect(b).toEqual(a);
  });

  it("a real change changes the version of exactly the resources it touches", async () => {
    const before = await publish(richView(false));
    const changed = richView(false);
    const west = changed.shards?.shards["Kubernetes/west"];
    west?.push(endpoint({ address: "10.0.1.2", locality: zone("c") }));
    const after = await publish(changed);
    const differs = after.filter((r, i) => r.version !== before[i]?.version).map((r) => r.name);
    expect(differs).toEqual(["outbound|9080||reviews.default.svc.cluster.local"]);
  });
});
