/** Delta ADS under a small byte budget: answers cut into pieces, a nonce each, ACK/NACK per piece. */
import { toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { setVersion } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { deltaResourceBytes, envelopeBytes } from "../../../lib/xds/budget.ts";
import { ack, harness, nack, req, summary } from "./delta-harness.ts";

const { cluster: CDS, endpoint: EDS } = TypeUrl;

/** Names of equal length, so every resource takes the same bytes. */
const names = ["e1", "e2", "e3", "e4", "e5"];
const bytesOf = (typeUrl: TypeUrl, name: string): number =>
  deltaResourceBytes({
    typeUrl,
    name,
    version: "v1",
    body: new TextEncoder().encode(`${name}@v1`),
    service: "ns/h",
  } satisfies StoredResource);
/** Room for exactly two EDS resources per response. */
const budget = envelopeBytes + 2 * bytesOf(EDS, "e1");

async function setup(log?: (line: string) => void) {
  const h = harness(undefined, { maxResponseBytes: budget, ...(log && { log }) });
  for (const n of names) await h.publish(EDS, n);
  return h;
}
const encoded = (r: DeltaDiscoveryResponse) => toBinary(DeltaDiscoveryResponseSchema, r).length;

describe("Delta: an answer over the budget", () => {
  it("goes out as pieces under the budget, in name order, each with its own nonce", async () => {
    const h = await setup();
    const out = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: names }));
    expect(summary(out)).toEqual(["eds +e1@v1 +e2@v1", "eds +e3@v1 +e4@v1", "eds +e5@v1"]);
    expect(out.map((r) => r.nonce)).toEqual(["n1", "n2", "n3"]);
    for (const r of out) expect(encoded(r)).toBeLessThanOrEqual(budget);
  });

  it("each piece's system_version_info is what the client holds once it applied it and those before", async () => {
    const h = await setup();
    const out = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: names }));
    const held = (n: number) => setVersion(names.slice(0, n).map((name) => ({ name, version: "v1" })));
    expect(out.map((r) => r.systemVersionInfo)).toEqual([await held(2), await held(4), await held(5)]);
  });

  const ackCases: { name: string; answer: ("ack" | "nack" | "none")[]; acked?: number; nacked: boolean }[] = [
    {
      name: "every piece ACKed: the whole answer is held",
      answer: ["ack", "ack", "ack"],
      acked: 5,
      nacked: false,
    },
    {
      name: "only the last ACKed: earlier pieces count as applied",
      answer: ["none", "none", "ack"],
      acked: 5,
      nacked: false,
    },
    {
      name: "the first ACKed only: that piece is held",
      answer: ["ack", "none", "none"],
      acked: 2,
      nacked: false,
    },
    {
      name: "the middle NACKed: the first is held, the NACK is recorded",
      answer: ["ack", "nack", "none"],
      acked: 2,
      nacked: true,
    },
  ];
  for (const c of ackCases)
    it(`ACK/NACK per piece: ${c.name}`, async () => {
      const h = await setup();
      const out = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: names }));
      for (const [i, a] of c.answer.entries()) {
        if (a === "ack") expect(await h.session.onRequest(ack(out[i]))).toEqual([]);
        if (a === "nack") expect(await h.session.onRequest(nack(out[i], "bad piece"))).toEqual([]);
      }
      const eds = h.session.status().types[0];
      const want = await setVersion(names.slice(0, c.acked).map((name) => ({ name, version: "v1" })));
      expect(eds?.ackedVersion).toBe(want);
      expect(eds?.nack?.nonce).toBe(c.nacked ? "n2" : undefined);
    });

  it("a NACKed piece is not resent until its resources change; the pieces around it stay held", async () => {
    const h = await setup();
    const out = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: names }));
    await h.session.onRequest(ack(out[0]));
    await h.session.onRequest(nack(out[1]));
    await h.session.onRequest(ack(out[2]));
    expect(await h.session.onPush()).toEqual([]);
    await h.publish(EDS, "e3", "v2");
    expect(summary(await h.session.onPush())).toEqual(["eds +e3@v2"]);
  });

  it("removals ride with the last piece when they fit", async () => {
    const h = await setup();
    const held = Object.fromEntries(["e1", "gone"].map((n) => [n, "v0"]));
    const out = await h.session.onRequest(
      req({ typeUrl: EDS, resourceNamesSubscribe: [...names, "gone"], initialResourceVersions: held }),
    );
    expect(summary(out)).toEqual(["eds +e1@v1 +e2@v1", "eds +e3@v1 +e4@v1", "eds +e5@v1 -gone"]);
  });

  it("a push: every type's additions, in pieces, before any removal (make before break)", async () => {
    const h = await setup();
    await h.publish(CDS, "c1");
    await h.publish(CDS, "c2");
    await h.publish(CDS, "c3");
    const eds = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: names }));
    const cds = await h.session.onRequest(req({ typeUrl: CDS }));
    for (const r of [...eds, ...cds]) await h.session.onRequest(ack(r));
    for (const n of ["c1", "c2", "c3"]) await h.publish(CDS, n, "v2");
    for (const n of names) await h.publish(EDS, n, "v2");
    await h.remove(CDS, "c3");
    await h.remove(EDS, "e5");
    const out = await h.session.onPush();
    expect(summary(out)).toEqual([
      "cds +c1@v2 +c2@v2",
      "eds +e1@v2 +e2@v2",
      "eds +e3@v2 +e4@v2",
      "cds -c3",
      "eds -e5",
    ]);
    expect(new Set(out.map((r) => r.nonce)).size).toBe(out.length);
  });

  it("a resource larger than the budget alone is sent alone, and logged", async () => {
    const lines: string[] = [];
    const h = await setup((line) => lines.push(line));
    await h.publish(EDS, "e3", "v".repeat(budget));
    const out = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: names }));
    expect(summary(out)).toEqual(["eds +e1@v1 +e2@v1", `eds +e3@${"v".repeat(budget)}`, "eds +e4@v1 +e5@v1"]);
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^xds: delta ClusterLoadAssignment "e3" is \\d+ bytes, over EDGEPILOT_MAX_RESPONSE_BYTES=${budget}; sent alone`,
        ),
      ),
    ]);
  });
});
