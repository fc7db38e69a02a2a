/**
 * The ingest summary's `dangling`: route destinations naming a host, port or subset nobody defines,
 * judged against the stored services and rules once the batch is applied (real ingest, memory store).
 */
import { describe, expect, it } from "vitest";
import { event as ev, service } from "../../e2e/support/kube.ts";
import { createHarness } from "./support/harness.ts";
import { destinationRule, serviceEntry, virtualService } from "./support/istio.ts";

const REVIEWS = "reviews.default.svc.cluster.local";
const subsets = [
  { name: "v1", labels: { version: "v1" } },
  { name: "v2", labels: { version: "v2" } },
];
const to = (destinations: Record<string, unknown>[], rv = "10") =>
  virtualService(
    "reviews",
    { http: [{ route: destinations.map((destination) => ({ destination, weight: 1 })) }] },
    { resourceVersion: rv },
  );
const line = (what: string, reason: string, i = 0) =>
  `VirtualService default/reviews: spec.http[${i}]: ${what}: ${reason}`;

/** reviews (9080, 9081) and ratings (7000) in default. */
async function mesh() {
  const h = createHarness();
  await h.ingest(
    ev(
      "ADDED",
      service("reviews", "default", [
        { name: "grpc", port: 9080 },
        { name: "b", port: 9081 },
      ]),
    ),
    ev("ADDED", service("ratings", "default", [{ name: "grpc", port: 7000 }])),
  );
  return h;
}

const cases: { name: string; batch: unknown[]; want: string[] }[] = [
  {
    name: "a subset with no DestinationRule",
    batch: [ev("ADDED", to([{ host: "reviews", subset: "v1" }]))],
    want: [line(`${REVIEWS} subset v1`, `no DestinationRule for ${REVIEWS} defines subset v1`)],
  },
  {
    name: "subsets the rule defines, the rule after the VirtualService in the same batch: nothing",
    batch: [
      ev(
        "ADDED",
        to([
          { host: "reviews", subset: "v1" },
          { host: "reviews", subset: "v2" },
        ]),
      ),
      ev("ADDED", destinationRule("reviews", subsets)),
    ],
    want: [],
  },
  {
    name: "a subset the rule lacks, beside one it has",
    batch: [
      ev("ADDED", destinationRule("reviews", subsets)),
      ev(
        "ADDED",
        to([
          { host: "reviews", subset: "v1" },
          { host: "reviews", subset: "v9" },
        ]),
      ),
    ],
    want: [line(`${REVIEWS} subset v9`, `no DestinationRule for ${REVIEWS} defines subset v9`)],
  },
  {
    name: "a host with no service",
    batch: [ev("ADDED", to([{ host: "ghost" }]))],
    want: [line("ghost.default.svc.cluster.local", "no service has host ghost.default.svc.cluster.local")],
  },
  {
    name: "a port the destination does not have",
    batch: [ev("ADDED", to([{ host: "ratings", port: { number: 7001 } }]))],
    want: [
      line(
        "ratings.default.svc.cluster.local port 7001",
        "service ratings.default.svc.cluster.local has no port 7001",
      ),
    ],
  },
  {
    name: "no port, a multi-port destination: the listener's port (the VirtualService host's ports) decides",
    batch: [
      ev(
        "ADDED",
        virtualService(
          "ratings",
          { http: [{ route: [{ destination: { host: "reviews" } }] }] },
          { resourceVersion: "10" },
        ),
      ),
    ],
    want: [`VirtualService default/ratings: spec.http[0]: ${REVIEWS}: service ${REVIEWS} has no port 7000`],
  },
  {
    name: "a host outside Kubernetes no ServiceEntry declares",
    batch: [ev("ADDED", to([{ host: "api.example.com", port: { number: 443 } }]))],
    want: [line("api.example.com port 443", "no service has host api.example.com")],
  },
  {
    name: "a ServiceEntry host, declared in the same batch after the VirtualService: nothing",
    batch: [ev("ADDED", to([{ host: "api.example.com" }])), ev("ADDED", serviceEntry("api"))],
    want: [],
  },
  {
    name: "a ServiceEntry host of another namespace, a port it does not declare",
    batch: [
      ev("ADDED", serviceEntry("api", {}, { namespace: "ext" })),
      ev("ADDED", to([{ host: "api.example.com", port: { number: 443 } }])),
    ],
    want: [line("api.example.com port 443", "service api.example.com has no port 443")],
  },
  {
    name: "a ServiceEntry host's subset no DestinationRule defines, beside one its rule defines",
    batch: [
      ev("ADDED", serviceEntry("api", {}, { namespace: "ext" })),
      ev("ADDED", destinationRule("api.example.com", subsets, { namespace: "ext", name: "api" })),
      ev(
        "ADDED",
        to([
          { host: "api.example.com", subset: "v1" },
          { host: "api.example.com", subset: "v9" },
        ]),
      ),
    ],
    want: [line("api.example.com subset v9", "no DestinationRule for api.example.com defines subset v9")],
  },
  {
    name: "a host only a wildcard ServiceEntry matches is not judged",
    batch: [
      ev("ADDED", serviceEntry("wild", { hosts: ["*.example.com"], resolution: "NONE" })),
      ev("ADDED", to([{ host: "api.example.com", subset: "v9" }])),
    ],
    want: [],
  },
  {
    name: "a route whose only match a shared route cannot express (sourceLabels) is not generated: not judged",
    batch: [
      ev(
        "ADDED",
        virtualService(
          "reviews",
          {
            http: [
              { match: [{ sourceLabels: { app: "x" } }], route: [{ destination: { host: "ghost" } }] },
              { route: [{ destination: { host: "reviews" } }] },
            ],
          },
          { resourceVersion: "10" },
        ),
      ),
    ],
    want: [],
  },
  {
    name: "a batch of services alone reports nothing",
    batch: [ev("ADDED", service("details", "default", [{ name: "grpc", port: 80 }]))],
    want: [],
  },
];

describe("ingest summary: dangling route destinations", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const h = await mesh();
      const s = await h.ingest(...c.batch);
      expect(s.dangling).toEqual(c.want);
    });
  }

  it("a rule that loses a subset (or is deleted) reports the VirtualServices routing to it", async () => {
    const h = await mesh();
    const first = await h.ingest(
      ev("ADDED", destinationRule("reviews", subsets, { resourceVersion: "5" })),
      ev("ADDED", to([{ host: "reviews", subset: "v2" }])),
    );
    expect(first.dangling).toEqual([]);
    const want = [line(`${REVIEWS} subset v2`, `no DestinationRule for ${REVIEWS} defines subset v2`)];
    const shrunk = await h.ingest(
      ev("MODIFIED", destinationRule("reviews", subsets.slice(0, 1), { resourceVersion: "6" })),
    );
    expect(shrunk.dangling).toEqual(want);
    await h.ingest(ev("MODIFIED", destinationRule("reviews", subsets, { resourceVersion: "7" })));
    const deleted = await h.ingest(
      ev("DELETED", destinationRule("reviews", subsets, { resourceVersion: "8" })),
    );
    expect(deleted.dangling).toEqual(want);
  });

  it("deleting the Service, the ServiceEntry or the subset a route names reports the route at that POST", async () => {
    const h = await mesh();
    const dr = (list: typeof subsets, rv: string) =>
      destinationRule("api.example.com", list, { namespace: "ext", name: "api", resourceVersion: rv });
    const first = await h.ingest(
      ev("ADDED", serviceEntry("api", {}, { namespace: "ext", resourceVersion: "3" })),
      ev("ADDED", dr(subsets, "4")),
      ev(
        "ADDED",
        to([
          { host: "ratings", port: { number: 7000 } },
          { host: "api.example.com", subset: "v2" },
        ]),
      ),
    );
    expect(first.dangling).toEqual([]);
    const steps: { name: string; event: unknown; want: string[] }[] = [
      {
        name: "subset v2 dropped from the rule",
        event: ev("MODIFIED", dr(subsets.slice(0, 1), "5")),
        want: [line("api.example.com subset v2", "no DestinationRule for api.example.com defines subset v2")],
      },
      {
        name: "the ServiceEntry deleted",
        event: ev("DELETED", serviceEntry("api", {}, { namespace: "ext", resourceVersion: "6" })),
        want: [line("api.example.com subset v2", "no service has host api.example.com")],
      },
      {
        name: "the Service deleted: only the destination it affects",
        event: ev("DELETED", service("ratings", "default", [{ name: "grpc", port: 7000 }])),
        want: [
          line(
            "ratings.default.svc.cluster.local port 7000",
            "no service has host ratings.default.svc.cluster.local",
          ),
        ],
      },
    ];
    for (const step of steps) expect((await h.ingest(step.event)).dangling, step.name).toEqual(step.want);
  });

  it("an unchanged VirtualService is not reported again; a resync reports what it applies", async () => {
    const h = await mesh();
    expect((await h.ingest(ev("ADDED", to([{ host: "ghost" }], "10")))).dangling).toHaveLength(1);
    expect((await h.ingest(ev("MODIFIED", to([{ host: "ghost" }], "11")))).dangling).toEqual([]);
    const r = await h.resync("VirtualService", [to([{ host: "ghost2" }], "12")], "12");
    expect(r.dangling).toEqual([
      line("ghost2.default.svc.cluster.local", "no service has host ghost2.default.svc.cluster.local"),
    ]);
  });

  it("a VirtualService bound to gateways only is not judged (it routes no mesh call)", async () => {
    const h = await mesh();
    const gw = virtualService(
      "reviews",
      { gateways: ["istio-system/gw"], http: [{ route: [{ destination: { host: "ghost" } }] }] },
      { resourceVersion: "10" },
    );
    expect((await h.ingest(ev("ADDED", gw))).dangling).toEqual([]);
  });
});
