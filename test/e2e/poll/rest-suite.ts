/**
 * REST-JSON xDS's case suite, run against every runtime: test/e2e/poll/rest.test.ts (Node, PORT)
 * and test/workers/rest.test.ts (the Worker). 200 with canonical proto JSON, 304 when current,
 * 400 naming the problem, 404 for another /v3 path; versions checked against the parity fixture.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { setVersion } from "../../../lib/resources/version.ts";
import { checkRestJson } from "../../support/xds-check.ts";
import { events, initial, names, type ServedType, TypeUrl } from "./scenario.ts";

/** What a runtime gives the suite. */
export interface RestHarness {
  /** POSTs `body` (sent as is) to `path` on the port that serves REST. */
  post(path: string, body: string): Promise<Response>;
  /** Ingests events and resolves once the push they cause is published. */
  apply(events: unknown[]): Promise<void>;
}

const versionOf = (type: ServedType) =>
  setVersion(Object.entries(initial[type]).map(([name, version]) => ({ name, version })));

/** Registers the suite; `harness` is called once the runtime is up (in beforeAll). */
export function describeRestSuite(runtime: string, harness: () => RestHarness) {
  let h: RestHarness;
  beforeAll(async () => {
    h = harness();
    await h.apply(events);
  });

  describe(`REST-JSON xDS on ${runtime}`, () => {
    it("200: every resource of the type, in canonical proto JSON with @type", async () => {
      const res = await h.post("/v3/discovery:clusters", "{}");
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      const body = (await res.json()) as {
        versionInfo: string;
        typeUrl: string;
        nonce: string;
        resources: { "@type": string; name: string }[];
      };
      checkRestJson(body);
      expect(body.typeUrl).toBe(TypeUrl.cluster);
      expect(body.versionInfo).toBe(await versionOf(TypeUrl.cluster));
      expect(body.nonce).toBe(body.versionInfo);
      expect(body.resources.map((r) => r["@type"])).toEqual(Array(3).fill(TypeUrl.cluster));
      expect(body.resources.map((r) => r.name).sort()).toEqual(Object.keys(initial[TypeUrl.cluster]).sort());
    });

    it("200 for named resources, with Envoy's snake_case field names", async () => {
      const res = await h.post(
        "/v3/discovery:endpoints",
        JSON.stringify({ type_url: TypeUrl.endpoint, resource_names: [names.ratings, names.missing] }),
      );
      expect(res.status).toBe(200);
      const body = (await res.json()) as { resources: { "@type": string; clusterName: string }[] };
      checkRestJson(body);
      expect(body.resources).toHaveLength(1);
      expect(body.resources[0]).toMatchObject({ "@type": TypeUrl.endpoint, clusterName: names.ratings });
    });

    it("304 with no body when version_info is current; 200 when it is not", async () => {
      for (const path of ["listeners", "routes"] as const) {
        const type = path === "listeners" ? TypeUrl.listener : TypeUrl.route;
        const current = await versionOf(type);
        const same = await h.post(`/v3/discovery:${path}`, JSON.stringify({ versionInfo: current }));
        expect(same.status).toBe(304);
        expect(await same.text()).toBe("");
        const stale = await h.post(`/v3/discovery:${path}`, JSON.stringify({ version_info: "0123" }));
        expect(stale.status).toBe(200);
        expect(((await stale.json()) as { versionInfo: string }).versionInfo).toBe(current);
      }
    });

    const bad: { name: string; path: string; body: string; status: number; error: RegExp }[] = [
      {
        name: "malformed JSON",
        path: "clusters",
        body: '{"resourceNames": [',
        status: 400,
        error: /^malformed JSON/,
      },
      { name: "not an object", path: "clusters", body: "[]", status: 400, error: /must be a JSON object/ },
      {
        name: "an unknown field",
        path: "clusters",
        body: '{"resourceNamez": []}',
        status: 400,
        error: /^not a DiscoveryRequest: .*resourceNamez/,
      },
      {
        name: "a field of the wrong type",
        path: "clusters",
        body: '{"resourceNames": "x"}',
        status: 400,
        error: /^not a DiscoveryRequest/,
      },
      {
        name: "another type's type_url",
        path: "clusters",
        body: JSON.stringify({ typeUrl: TypeUrl.route }),
        status: 400,
        error: /does not match this method's type\.googleapis\.com\/envoy\.config\.cluster\.v3\.Cluster/,
      },
      {
        name: "a type we do not serve",
        path: "runtime",
        body: "{}",
        status: 404,
        error: /no REST xDS at \/v3\/discovery:runtime: POST one of \/v3\/discovery:clusters/,
      },
    ];
    for (const c of bad) {
      it(`${c.status}: ${c.name}`, async () => {
        const res = await h.post(`/v3/discovery:${c.path}`, c.body);
        expect(res.status).toBe(c.status);
        expect(((await res.json()) as { error: string }).error).toMatch(c.error);
      });
    }
  });
}
