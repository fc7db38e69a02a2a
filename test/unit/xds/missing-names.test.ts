/**
 * Answering a subscription to a name that does not exist (xDS protocol, "Knowing When a Requested
 * Resource Does Not Exist"): once synced, Delta reports it in removed_resources and a SotW LDS/CDS
 * answer (the whole subscribed set) goes out at once without it; before sync, neither tells the
 * client a name does not exist (it may just not be loaded yet), and the re-read when the gate opens
 * does. A name asked for is remembered: when it appears it is sent. No sleeps: the gate is opened by hand.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { SyncGate } from "../../../lib/resources/sync-gate.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { deltaStep } from "../../../lib/xds/poll.ts";
import { createSotwSession } from "../../../lib/xds/sotw.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { ack, harness, req, summary } from "./delta-harness.ts";

const { cluster: CDS, endpoint: EDS, listener: LDS, route: RDS } = TypeUrl;

/** A gate the test opens by hand. */
function gate(synced: boolean): SyncGate & { open(): void } {
  let open = synced;
  return {
    synced: () => open,
    open() {
      open = true;
    },
  };
}

const short = (t: string) => ({ [CDS]: "cds", [EDS]: "eds", [LDS]: "lds", [RDS]: "rds" })[t] ?? t;

describe("Delta: a subscribed name that does not exist", () => {
  const cases: { name: string; typeUrl: TypeUrl; synced: boolean; first: string[]; opened: string[] }[] = [];
  for (const typeUrl of [CDS, LDS, EDS, RDS]) {
    const t = short(typeUrl);
    cases.push(
      {
        name: `${t}, synced: removed at once`,
        typeUrl,
        synced: true,
        first: [`${t} +a@v1 -never`],
        opened: [],
      },
      {
        name: `${t}, not synced: silent until the gate opens`,
        typeUrl,
        synced: false,
        first: [`${t} +a@v1`],
        opened: [`${t} -never`],
      },
    );
  }
  for (const c of cases) {
    it(c.name, async () => {
      const g = gate(c.synced);
      const h = harness(g);
      await h.publish(c.typeUrl, "a");
      const first = await h.session.onRequest(
        req({ typeUrl: c.typeUrl, resourceNamesSubscribe: ["a", "never"] }),
      );
      expect(summary(first)).toEqual(c.first);
      await h.session.onRequest(ack(first[0]));
      // A name subscribed later is answered alike.
      const later = await h.session.onRequest(req({ typeUrl: c.typeUrl, resourceNamesSubscribe: ["late"] }));
      expect(summary(later)).toEqual(c.synced ? [`${short(c.typeUrl)} -late`] : []);
      expect(summary(await h.session.onPush())).toEqual([]);
      g.open();
      const opened = await h.session.onPush();
      expect(summary(opened)).toEqual(c.synced ? [] : [`${short(c.typeUrl)} -late -never`]);
      // Remembered: a name that appears later is sent.
      await h.publish(c.typeUrl, "never");
      expect(summary(await h.session.onPush())).toEqual([`${short(c.typeUrl)} +never@v1`]);
    });
  }
});

describe("SotW: a subscribed name that does not exist", () => {
  const sotw = (g: SyncGate) => {
    const h = harness();
    let n = 0;
    const session = createSotwSession({
      source: createStoreSource(h.store),
      nonce: () => `s${++n}`,
      gate: g,
    });
    return { ...h, session };
  };
  const names = (rs: readonly DiscoveryResponse[]) =>
    rs.map((r) => r.resources.map((a) => new TextDecoder().decode(a.value)).join(" ") || "(empty)");
  const request = (typeUrl: string, resourceNames: string[], last?: DiscoveryResponse): DiscoveryRequest =>
    create(DiscoveryRequestSchema, {
      typeUrl,
      resourceNames,
      versionInfo: last?.versionInfo ?? "",
      responseNonce: last?.nonce ?? "",
    });

  const cases: {
    name: string;
    typeUrl: TypeUrl;
    synced: boolean;
    /** Answers to: [a, never]; then [a, never, late]; then a push; the gate opening; `late` appearing. */
    want: [first: string[], later: string[], push: string[], opened: string[], appeared: string[]];
  }[] = [];
  for (const typeUrl of [CDS, LDS]) {
    const t = short(typeUrl);
    cases.push(
      {
        name: `${t}, synced: a request adding a missing name is answered at once (the whole set, without it)`,
        typeUrl,
        synced: true,
        want: [["a@v1"], ["a@v1"], [], [], ["a@v1 late@v1"]],
      },
      {
        name: `${t}, not synced: what exists is served, an answer telling only of missing names waits for sync`,
        typeUrl,
        synced: false,
        want: [["a@v1"], [], [], ["a@v1"], ["a@v1 late@v1"]],
      },
    );
  }
  for (const typeUrl of [EDS, RDS]) {
    const t = short(typeUrl);
    // Their omissions say nothing (each resource may come in its own response): the client's timer
    // decides, so they are answered as any subscription change, synced or not.
    for (const synced of [true, false])
      cases.push({
        name: `${t}, ${synced ? "synced" : "not synced"}: answered as any subscription change`,
        typeUrl,
        synced,
        want: [["a@v1"], ["a@v1"], [], [], ["late@v1"]],
      });
  }
  for (const c of cases) {
    it(c.name, async () => {
      const g = gate(c.synced);
      const h = sotw(g);
      await h.publish(c.typeUrl, "a");
      const first = await h.session.onRequest(request(c.typeUrl, ["a", "never"]));
      expect(names(first)).toEqual(c.want[0]);
      const later = await h.session.onRequest(request(c.typeUrl, ["a", "never", "late"], first.at(-1)));
      expect(names(later)).toEqual(c.want[1]);
      expect(names(await h.session.onPush())).toEqual(c.want[2]);
      g.open();
      expect(names(await h.session.onPush())).toEqual(c.want[3]);
      await h.publish(c.typeUrl, "late");
      expect(names(await h.session.onPush())).toEqual(c.want[4]);
    });
  }

  it("CDS, not synced, a first request for missing names only: held, answered empty when the gate opens", async () => {
    const g = gate(false);
    const h = sotw(g);
    expect(await h.session.onRequest(request(CDS, ["never"]))).toEqual([]);
    expect(await h.session.onPush()).toEqual([]);
    g.open();
    expect(names(await h.session.onPush())).toEqual(["(empty)"]);
  });

  it("CDS, not synced, a held answer goes out as soon as the name appears", async () => {
    const g = gate(false);
    const h = sotw(g);
    await h.publish(CDS, "a");
    const [first] = await h.session.onRequest(request(CDS, ["a"]));
    expect(await h.session.onRequest(request(CDS, ["a", "late"], first))).toEqual([]);
    await h.publish(CDS, "late");
    expect(names(await h.session.onPush())).toEqual(["a@v1 late@v1"]);
  });

  it("a wildcard CDS subscription is never held for a name (no name is asked for)", async () => {
    const h = sotw(gate(false));
    expect(names(await h.session.onRequest(request(CDS, [])))).toEqual(["(empty)"]);
  });
});

describe("Poll/Watch: a subscribed name that does not exist", () => {
  it.each([
    [true, ["never"]],
    [false, []],
  ])("synced %s: removed_resources %j, and once synced it is reported", async (synced, want) => {
    const h = harness();
    await h.publish(CDS, "a");
    const query = { typeUrl: CDS, sub: { wildcard: false, names: new Set(["a", "never"]) } };
    const step = await deltaStep(
      createStoreSource(h.store),
      query,
      { held: new Map(), absent: new Set() },
      synced,
    );
    expect(step.response.removedResources).toEqual(want);
    const after = await deltaStep(createStoreSource(h.store), query, step.view, true);
    expect(after.response.removedResources).toEqual(synced ? [] : ["never"]);
  });
});
