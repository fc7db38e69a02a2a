/** Which services a push regenerates, table-driven over a memory store with three services. */
import { describe, expect, it } from "vitest";
import { pushRequest } from "../../../lib/model/index.ts";
import { servicesInScope } from "../../../lib/push/scope.ts";
import { keys } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

const reviews = "reviews.default.svc.cluster.local";
const ratings = "ratings.shop.svc.cluster.local";
const details = "details.default.svc.cluster.local";

async function store() {
  const s = createMemoryStore();
  for (const [ns, host] of [
    ["default", reviews],
    ["shop", ratings],
    ["default", details],
  ] as const)
    await s.put(keys.service(ns, host, "east"), {
      hostname: host,
      namespace: ns,
      clusterId: "east",
      ports: [],
    });
  return s;
}

describe("servicesInScope", () => {
  const cases: { name: string; configs: string[] | null; want: string[] }[] = [
    {
      name: "service keys name their services",
      configs: [`ServiceEntry/default/${reviews}`],
      want: [reviews],
    },
    {
      name: "a VirtualService key with the service keys of its hosts: only those",
      configs: [
        "VirtualService/default/reviews",
        `ServiceEntry/default/${reviews}`,
        `ServiceEntry/shop/${ratings}`,
      ],
      want: [ratings, reviews],
    },
    {
      name: "a DestinationRule key whose host has no service: nothing",
      configs: ["DestinationRule/default/ghost"],
      want: [],
    },
    {
      name: "a Sidecar key: no service (it changes the view table only)",
      configs: ["Sidecar/default/default"],
      want: [],
    },
    { name: "unknown scope: every service", configs: null, want: [details, ratings, reviews] },
  ];
  it.each(cases)("$name", async ({ configs, want }) => {
    const refs = await servicesInScope(
      await store(),
      pushRequest({ full: true, configs, reason: "config", start: 0 }),
    );
    expect(refs.map((r) => r.hostname).sort()).toEqual(want);
  });
});
