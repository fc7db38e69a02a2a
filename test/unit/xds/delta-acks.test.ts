/** Delta session: nonces, ACK/NACK, initial_resource_versions, pushes, ordering, system_version_info. */
import { describe, expect, it } from "vitest";
import { setVersion } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { ack, harness, nack, req, sent, summary } from "./delta-harness.ts";

const { listener: LDS, route: RDS, cluster: CDS, endpoint: EDS } = TypeUrl;

describe("Delta session: ACK and NACK", () => {
  it("answers nothing to an ACK and records it in the status", async () => {
    const h = harness();
    await h.publish(CDS, "c");
    const [r] = await h.session.onRequest(req({ typeUrl: CDS }));
    expect(await h.session.onRequest(ack(r))).toEqual([]);
    const acked = await setVersion([{ name: "c", version: "v1" }]);
    expect(h.statuses).toHaveLength(1);
    expect(h.statuses[0]?.types[0]).toMatchObject({
      typeUrl: CDS,
      wildcard: true,
      ackedVersion: acked,
      sent: { nonce: "n1", versionInfo: r?.systemVersionInfo, versions: { c: "v1" } },
    });
  });

  it("records a NACK, keeps the client's last good version, and resends nothing until it changes", async () => {
    const h = harness();
    await h.publish(LDS, "l", "v1");
    const [first] = await h.session.onRequest(req({ typeUrl: LDS }));
    await h.session.onRequest(ack(first));
    await h.publish(LDS, "l", "v2");
    const [bad] = await h.session.onPush();
    expect(sent(bad)).toEqual(["l@v2"]);
    expect(await h.session.onRequest(nack(bad, "listener l is broken"))).toEqual([]);
    const kept = await setVersion([{ name: "l", version: "v1" }]);
    expect(h.statuses.at(-1)?.types[0]).toMatchObject({
      ackedVersion: kept,
      nack: { versionInfo: kept, nonce: bad?.nonce, message: "listener l is broken" },
      sent: { versions: { l: "v1" } }, // not assumed to hold what it NACKed
    });
    expect(await h.session.onPush()).toEqual([]);
    await h.publish(LDS, "l", "v1"); // back to what the client holds: nothing to send
    expect(await h.session.onPush()).toEqual([]);
    await h.publish(LDS, "l", "v3");
    const [fixed] = await h.session.onPush();
    expect(sent(fixed)).toEqual(["l@v3"]);
    await h.session.onRequest(ack(fixed));
    expect(h.statuses.at(-1)?.types[0]?.nack).toBeUndefined();
  });

  it("after a NACKed removal, the client still holds the resource: the removal is sent again", async () => {
    const h = harness();
    await h.publish(CDS, "a");
    await h.publish(CDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: CDS }));
    await h.session.onRequest(ack(r1));
    await h.remove(CDS, "b");
    const [rm] = await h.session.onPush();
    await h.session.onRequest(nack(rm));
    expect(h.session.status().types[0]?.sent?.versions).toEqual({ a: "v1", b: "v1" });
    await h.publish(CDS, "a", "v2");
    expect(summary(await h.session.onPush())).toEqual(["cds +a@v2", "cds -b"]);
  });

  it("a NACKed new resource is not held: the client held nothing before, and is told so if it disappears", async () => {
    const h = harness();
    const [r1] = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["e"] }));
    expect(summary([r1])).toEqual(["eds -e"]);
    await h.publish(EDS, "e");
    const [r2] = await h.session.onPush();
    await h.session.onRequest(nack(r2));
    expect(h.statuses.at(-1)?.types[0]?.nack?.versionInfo).toBe("");
    expect(await h.session.onPush()).toEqual([]);
    await h.remove(EDS, "e");
    expect(summary(await h.session.onPush())).toEqual(["eds -e"]);
  });

  it("honours subscription changes on a request with a stale or unknown nonce, without ACKing", async () => {
    const h = harness();
    await h.publish(EDS, "a");
    await h.publish(EDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["a"] }));
    await h.publish(EDS, "a", "v2");
    const [r2] = await h.session.onPush();
    await h.session.onRequest(ack(r1));
    await h.session.onRequest(ack(r2));
    const [r3] = await h.session.onRequest(ack(r1, { resourceNamesSubscribe: ["b"] })); // r1: stale
    expect(sent(r3)).toEqual(["b@v1"]);
    const [r4] = await h.session.onRequest(
      req({ typeUrl: EDS, responseNonce: "from-another-stream", resourceNamesUnsubscribe: ["a"] }),
    );
    expect(r4).toBeUndefined();
    expect(h.session.status().types[0]?.subscribed).toEqual(["b"]);
    expect(h.statuses).toHaveLength(2); // only the two real ACKs were recorded
  });
});

describe("Delta session: initial_resource_versions", () => {
  it("resends only what changed and removes what the client holds that no longer exists", async () => {
    const h = harness();
    await h.publish(CDS, "same", "v1");
    await h.publish(CDS, "changed", "v2");
    await h.publish(CDS, "new", "v1");
    const [r] = await h.session.onRequest(
      req({
        typeUrl: CDS,
        resourceNamesSubscribe: ["*"],
        initialResourceVersions: { same: "v1", changed: "v1", gone: "v1" },
      }),
    );
    expect(summary([r])).toEqual(["cds +changed@v2 +new@v1 -gone"]);
    expect(h.session.status().types[0]?.ackedVersion).toBe(
      await setVersion([
        { name: "same", version: "v1" },
        { name: "changed", version: "v1" },
        { name: "gone", version: "v1" },
      ]),
    );
  });

  it("answers nothing when the client already holds everything it subscribes to", async () => {
    const h = harness();
    await h.publish(CDS, "a", "v1");
    await h.publish(EDS, "a", "v1");
    const initialResourceVersions = { a: "v1" };
    expect(await h.session.onRequest(req({ typeUrl: CDS, initialResourceVersions }))).toEqual([]);
    expect(
      await h.session.onRequest(
        req({ typeUrl: EDS, resourceNamesSubscribe: ["a"], initialResourceVersions }),
      ),
    ).toEqual([]);
    await h.publish(EDS, "a", "v2");
    expect(summary(await h.session.onPush())).toEqual(["eds +a@v2"]);
  });

  it("ignores held names the client does not subscribe to", async () => {
    const h = harness();
    await h.publish(EDS, "a");
    const [r] = await h.session.onRequest(
      req({ typeUrl: EDS, resourceNamesSubscribe: ["a"], initialResourceVersions: { a: "v0", other: "v1" } }),
    );
    expect(summary([r])).toEqual(["eds +a@v1"]);
  });
});

describe("Delta session: pushes", () => {
  it("sends only the changed resource", async () => {
    const h = harness();
    for (const n of ["a", "b", "c"]) await h.publish(EDS, n);
    const [r1] = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["a", "b", "c"] }));
    await h.session.onRequest(ack(r1));
    expect(await h.session.onPush()).toEqual([]);
    await h.publish(EDS, "b", "v2");
    const out = await h.session.onPush();
    expect(out).toHaveLength(1);
    expect(sent(out[0])).toEqual(["b@v2"]);
    expect(out[0]?.removedResources).toEqual([]);
  });

  it("sends additions in push order (CDS, EDS, LDS, RDS), then removals referrers first (LDS, RDS, CDS, EDS)", async () => {
    const h = harness();
    const types = [RDS, LDS, EDS, CDS];
    for (const t of types) await h.publish(t, "old");
    for (const t of types) {
      const [r] = await h.session.onRequest(req({ typeUrl: t, resourceNamesSubscribe: ["old", "new"] }));
      await h.session.onRequest(ack(r));
    }
    for (const t of types) {
      await h.remove(t, "old");
      await h.publish(t, "new");
    }
    expect(summary(await h.session.onPush())).toEqual([
      "cds +new@v1",
      "eds +new@v1",
      "lds +new@v1",
      "rds +new@v1",
      "lds -old",
      "rds -old",
      "cds -old",
      "eds -old",
    ]);
    expect(summary(await h.session.onPush([EDS]))).toEqual([]);
  });

  it("serializes concurrent calls: responses resolve in call order with increasing nonces", async () => {
    const h = harness();
    await h.publish(CDS, "c");
    await h.publish(EDS, "e");
    const order: string[] = [];
    const calls = [
      Promise.resolve(h.session.onRequest(req({ typeUrl: CDS }))).then((r) =>
        order.push(...r.map((x) => x.nonce)),
      ),
      Promise.resolve(h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["e"] }))).then((r) =>
        order.push(...r.map((x) => x.nonce)),
      ),
      Promise.resolve(h.session.onPush()).then((r) => order.push(...r.map((x) => x.nonce))),
    ];
    await Promise.all(calls);
    expect(order).toEqual(["n1", "n2"]);
  });
});

describe("Delta session: system_version_info", () => {
  it("is the set version of what the client holds once the response is applied, on any session", async () => {
    const h = harness();
    await h.publish(CDS, "a", "va");
    await h.publish(CDS, "b", "vb");
    const [r1] = await h.session.onRequest(req({ typeUrl: CDS }));
    const both = await setVersion([
      { name: "a", version: "va" },
      { name: "b", version: "vb" },
    ]);
    expect(r1?.systemVersionInfo).toBe(both);
    await h.remove(CDS, "b");
    const [r2] = await h.session.onPush();
    expect(r2?.systemVersionInfo).toBe(await setVersion([{ name: "a", version: "va" }]));
    // Another instance, a client reconnecting with what it holds: the same state, the same string.
    const other = harness();
    await other.publish(CDS, "a", "va");
    await other.publish(CDS, "c", "vc");
    const [o] = await other.session.onRequest(req({ typeUrl: CDS, initialResourceVersions: { a: "va" } }));
    expect(o?.systemVersionInfo).toBe(
      await setVersion([
        { name: "a", version: "va" },
        { name: "c", version: "vc" },
      ]),
    );
  });
});

describe("Delta session: a client that never answers", () => {
  it("keeps a bounded number of responses in flight, counting the oldest as applied", async () => {
    const h = harness();
    await h.publish(EDS, "e", "v0");
    await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["e"] }));
    const pushed = [];
    for (let i = 1; i <= 100; i++) {
      await h.publish(EDS, "e", `v${i}`);
      pushed.push(...(await h.session.onPush()));
    }
    expect(summary(pushed.slice(-1))).toEqual(["eds +e@v100"]);
    // The first push is long settled: its NACK is for an unknown nonce and records nothing.
    await h.session.onRequest(nack(pushed[0]));
    expect(h.statuses).toEqual([]);
    // A recent one is still in flight: its NACK is recorded.
    await h.session.onRequest(nack(pushed[90]));
    expect(h.statuses.at(-1)?.types[0]?.nack?.nonce).toBe(pushed[90]?.nonce);
  });
});
