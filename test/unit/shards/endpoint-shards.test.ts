import { describe, expect, it } from "vitest";
import type { Endpoint, ShardKey } from "../../../lib/model/index.ts";
import {
  applyShardUpdate,
  deleteShard,
  type PushType,
  pushForShardUpdate,
  type ShardUpdateOptions,
} from "../../../lib/shards/endpoint-shards.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import { east, ep, HOST, NS, record, west } from "./builders.ts";

const E = "Kubernetes/east";
const W = "Kubernetes/west";
const sa = (name: string) => `spiffe://cluster.local/ns/bookinfo/sa/${name}`;

describe("applyShardUpdate", () => {
  const cases: {
    name: string;
    current: EndpointShardsRecord | undefined;
    shard?: ShardKey;
    endpoints: Endpoint[];
    options?: ShardUpdateOptions;
    pushType: PushType;
    changed: boolean;
    want: EndpointShardsRecord | undefined;
  }[] = [
    {
      name: "a service never seen ▶ full",
      current: undefined,
      endpoints: [ep()],
      pushType: "full",
      changed: true,
      want: record({ [E]: [ep()] }),
    },
    {
      name: "same endpoints ▶ none",
      current: record({ [E]: [ep()] }),
      endpoints: [ep()],
      pushType: "none",
      changed: false,
      want: record({ [E]: [ep()] }),
    },
    {
      name: "same endpoints in another order, with a duplicate ▶ none",
      current: record({ [E]: [ep(), ep({ address: "10.0.0.2" })] }),
      endpoints: [ep({ address: "10.0.0.2" }), ep(), ep()],
      pushType: "none",
      changed: false,
      want: record({ [E]: [ep(), ep({ address: "10.0.0.2" })] }),
    },
    {
      name: "a new healthy endpoint ▶ incremental",
      current: record({ [E]: [ep()] }),
      endpoints: [ep(), ep({ address: "10.0.0.2" })],
      pushType: "incremental",
      changed: true,
      want: record({ [E]: [ep(), ep({ address: "10.0.0.2" })] }),
    },
    {
      name: "an endpoint changed (labels) ▶ incremental",
      current: record({ [E]: [ep()] }),
      endpoints: [ep({ labels: { app: "reviews", version: "v2" } })],
      pushType: "incremental",
      changed: true,
      want: record({ [E]: [ep({ labels: { app: "reviews", version: "v2" } })] }),
    },
    {
      name: "an endpoint turned unhealthy ▶ incremental",
      current: record({ [E]: [ep()] }),
      endpoints: [ep({ health: "UNHEALTHY" })],
      pushType: "incremental",
      changed: true,
      want: record({ [E]: [ep({ health: "UNHEALTHY" })] }),
    },
    {
      name: "a new unhealthy endpoint alone ▶ none, but it is stored",
      current: record({ [E]: [ep()] }),
      endpoints: [ep(), ep({ address: "10.0.0.2", health: "UNHEALTHY" })],
      pushType: "none",
      changed: true,
      want: record({ [E]: [ep(), ep({ address: "10.0.0.2", health: "UNHEALTHY" })] }),
    },
    {
      name: "a new unhealthy endpoint with sendUnhealthy ▶ incremental",
      current: record({ [E]: [ep()] }),
      endpoints: [ep(), ep({ address: "10.0.0.2", health: "UNHEALTHY" })],
      options: { sendUnhealthy: true },
      pushType: "incremental",
      changed: true,
      want: record({ [E]: [ep(), ep({ address: "10.0.0.2", health: "UNHEALTHY" })] }),
    },
    {
      name: "a new draining endpoint is not 'unhealthy' ▶ incremental",
      current: record({ [E]: [ep()] }),
      endpoints: [ep(), ep({ address: "10.0.0.2", health: "DRAINING" })],
      pushType: "incremental",
      changed: true,
      want: record({ [E]: [ep(), ep({ address: "10.0.0.2", health: "DRAINING" })] }),
    },
    {
      name: "an endpoint removed ▶ incremental",
      current: record({ [E]: [ep(), ep({ address: "10.0.0.2" })] }),
      endpoints: [ep()],
      pushType: "incremental",
      changed: true,
      want: record({ [E]: [ep()] }),
    },
    {
      name: "removed plus a new unhealthy one ▶ incremental (the removal)",
      current: record({ [E]: [ep(), ep({ address: "10.0.0.2" })] }),
      endpoints: [ep(), ep({ address: "10.0.0.3", health: "UNHEALTHY" })],
      pushType: "incremental",
      changed: true,
      want: record({ [E]: [ep(), ep({ address: "10.0.0.3", health: "UNHEALTHY" })] }),
    },
    {
      name: "zero endpoints ▶ shard dropped, record and service accounts kept, incremental",
      current: record({ [E]: [ep({ serviceAccount: sa("reviews") })], [W]: [ep({ address: "10.1.0.1" })] }, [
        sa("reviews"),
      ]),
      endpoints: [],
      pushType: "incremental",
      changed: true,
      want: record({ [W]: [ep({ address: "10.1.0.1" })] }, [sa("reviews")]),
    },
    {
      name: "zero endpoints for a shard already gone ▶ incremental, nothing changes",
      current: record({ [W]: [ep()] }),
      endpoints: [],
      pushType: "incremental",
      changed: false,
      want: record({ [W]: [ep()] }),
    },
    {
      name: "zero endpoints for a service never seen ▶ incremental, no record created",
      current: undefined,
      endpoints: [],
      pushType: "incremental",
      changed: false,
      want: undefined,
    },
    {
      name: "first endpoints into a record kept empty ▶ incremental, not full",
      current: record({}),
      endpoints: [ep()],
      pushType: "incremental",
      changed: true,
      want: record({ [E]: [ep()] }),
    },
    {
      name: "a new service account ▶ full",
      current: record({ [E]: [ep()] }),
      endpoints: [ep({ serviceAccount: sa("reviews") })],
      pushType: "full",
      changed: true,
      want: record({ [E]: [ep({ serviceAccount: sa("reviews") })] }, [sa("reviews")]),
    },
    {
      name: "a service account gone ▶ full",
      current: record(
        { [E]: [ep({ serviceAccount: sa("a") }), ep({ address: "10.0.0.2", serviceAccount: sa("b") })] },
        [sa("a"), sa("b")],
      ),
      endpoints: [ep({ serviceAccount: sa("a") })],
      pushType: "full",
      changed: true,
      want: record({ [E]: [ep({ serviceAccount: sa("a") })] }, [sa("a")]),
    },
    {
      name: "a service account still held by another shard ▶ no full push",
      current: record(
        {
          [E]: [ep({ serviceAccount: sa("a") })],
          [W]: [ep({ address: "10.1.0.1", serviceAccount: sa("a") })],
        },
        [sa("a")],
      ),
      endpoints: [ep({ address: "10.0.0.9", serviceAccount: sa("a") })],
      pushType: "incremental",
      changed: true,
      want: record(
        {
          [E]: [ep({ address: "10.0.0.9", serviceAccount: sa("a") })],
          [W]: [ep({ address: "10.1.0.1", serviceAccount: sa("a") })],
        },
        [sa("a")],
      ),
    },
    {
      name: "a second shard (cluster) is independent: the first stays as it was",
      current: record({ [E]: [ep()] }),
      shard: west,
      endpoints: [ep({ address: "10.1.0.1" })],
      pushType: "incremental",
      changed: true,
      want: record({ [E]: [ep()], [W]: [ep({ address: "10.1.0.1" })] }),
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = applyShardUpdate(c.current, c.shard ?? east, HOST, NS, c.endpoints, c.options);
      expect(got.pushType).toBe(c.pushType);
      expect(got.changed).toBe(c.changed);
      expect(got.record).toEqual(c.want);
    });
  }

  it("does not mutate the current record or the endpoints it is given", () => {
    const current = record({ [E]: [ep()] });
    const snapshot = structuredClone(current);
    const endpoints = [ep({ address: "10.0.0.3" }), ep()];
    applyShardUpdate(current, east, HOST, NS, endpoints);
    applyShardUpdate(current, east, HOST, NS, []);
    expect(current).toEqual(snapshot);
    expect(endpoints.map((e) => e.address)).toEqual(["10.0.0.3", "10.0.0.1"]);
  });

  it("a crash-looping pod: up, down, up again is full once, then incremental only", () => {
    const withSa = [ep({ serviceAccount: sa("reviews") })];
    const up = applyShardUpdate(undefined, east, HOST, NS, withSa);
    const down = applyShardUpdate(up.record, east, HOST, NS, []);
    const again = applyShardUpdate(down.record, east, HOST, NS, withSa);
    const downAgain = applyShardUpdate(again.record, east, HOST, NS, []);
    expect([up.pushType, down.pushType, again.pushType, downAgain.pushType]).toEqual([
      "full",
      "incremental",
      "incremental",
      "incremental",
    ]);
    expect(down.record?.shards).toEqual({});
    expect(again.record).toEqual(up.record);
  });

  it("shard keys are stored in sorted order, so equal records serialize equally", () => {
    const a = applyShardUpdate(applyShardUpdate(undefined, west, HOST, NS, [ep()]).record, east, HOST, NS, [
      ep(),
    ]);
    const b = applyShardUpdate(applyShardUpdate(undefined, east, HOST, NS, [ep()]).record, west, HOST, NS, [
      ep(),
    ]);
    expect(Object.keys(a.record?.shards ?? {})).toEqual([E, W]);
    expect(JSON.stringify(a.record)).toBe(JSON.stringify(b.record));
  });
});

describe("deleteShard", () => {
  const both = record({ [E]: [ep({ serviceAccount: sa("a") })], [W]: [ep({ serviceAccount: sa("b") })] }, [
    sa("a"),
    sa("b"),
  ]);
  const cases: {
    name: string;
    current: EndpointShardsRecord | undefined;
    shard: ShardKey;
    keepKey: boolean;
    want: EndpointShardsRecord | null;
  }[] = [
    {
      name: "removes the shard and its service accounts",
      current: both,
      shard: east,
      keepKey: false,
      want: record({ [W]: [ep({ serviceAccount: sa("b") })] }, [sa("b")]),
    },
    {
      name: "the last shard with keepKey false ▶ record gone",
      current: record({ [E]: [ep()] }),
      shard: east,
      keepKey: false,
      want: null,
    },
    {
      name: "the last shard with keepKey true ▶ empty record kept",
      current: record({ [E]: [ep({ serviceAccount: sa("a") })] }, [sa("a")]),
      shard: east,
      keepKey: true,
      want: record({}, []),
    },
    {
      name: "a record kept empty, keepKey false ▶ gone",
      current: record({}, [sa("a")]),
      shard: east,
      keepKey: false,
      want: null,
    },
    {
      name: "stale service accounts are cleaned even when the shard is already gone",
      current: record({ [W]: [ep()] }, [sa("a")]),
      shard: east,
      keepKey: false,
      want: record({ [W]: [ep()] }, []),
    },
    { name: "no record ▶ null", current: undefined, shard: east, keepKey: false, want: null },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(deleteShard(c.current, c.shard, { keepKey: c.keepKey })).toEqual(c.want);
    });
  }

  it("returns the same record when nothing changes", () => {
    const current = record({ [W]: [ep()] });
    expect(deleteShard(current, east, { keepKey: false })).toBe(current);
  });
});

describe("pushForShardUpdate", () => {
  const configs = [`ServiceEntry/${NS}/${HOST}`];
  it("none ▶ no push", () => {
    expect(pushForShardUpdate("none", HOST, NS, 1000)).toBeUndefined();
  });
  it("incremental ▶ an EDS push for the service", () => {
    expect(pushForShardUpdate("incremental", HOST, NS, 1000)).toEqual({
      full: false,
      configsUpdated: configs,
      reasons: { endpoint: 1 },
      start: 1000,
    });
  });
  it("full ▶ a full push for the service", () => {
    expect(pushForShardUpdate("full", HOST, NS, 2000)).toEqual({
      full: true,
      configsUpdated: configs,
      reasons: { endpoint: 1 },
      start: 2000,
    });
  });
});
