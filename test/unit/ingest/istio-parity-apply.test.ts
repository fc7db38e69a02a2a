/**
 * Every config of the Istio validation parity table that Istio accepts (and edgepilot with it) is
 * applied and pushed without an error, and what is published (and what an Envoy sidecar of the
 * namespace is served) passes Envoy's own rules: accepting a value means the registry and the
 * generators can take it, not only validation. Each case beside a ServiceEntry for the hosts the
 * table routes to, so routes and policies have services to apply to.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { createSidecarSnapshots } from "../../../lib/xds/sidecar-snapshots.ts";
import { loadParityCases } from "../../fixtures/istio-validation/load.ts";
import { assertEnvoyValid, assertStoreValid } from "../../support/xds-check.ts";
import { createHarness } from "./support/harness.ts";

const dir = fileURLToPath(new URL("../../fixtures/istio-validation/", import.meta.url));
const accepted = loadParityCases(dir).filter((c) => c.valid && !c.differs);

const services = {
  apiVersion: "networking.istio.io/v1",
  kind: "ServiceEntry",
  metadata: { name: "parity-hosts", namespace: "bar" },
  spec: {
    hosts: ["foo.bar", "foo.baz", "foo.baz.south", "foo.baz.east", "reviews.bar.svc.cluster.local"],
    ports: [{ number: 80, name: "http", protocol: "HTTP" }],
    resolution: "STATIC",
    endpoints: [{ address: "10.0.0.1" }],
  },
};

describe.each([...new Set(accepted.map((c) => c.file))])("%s", (file) => {
  it.each(
    accepted.filter((c) => c.file === file).map((c) => [`${c.source}: ${c.name}`, c] as const),
  )("%s", async (_, c) => {
    const h = createHarness();
    await h.ingest({ type: "ADDED", object: services }, { type: "ADDED", object: c.object });
    expect((await h.settle()).length).toBeGreaterThan(0);
    expect(await assertStoreValid(h.store)).toBeGreaterThan(0);
    const sidecars = createSidecarSnapshots({ store: h.store, cache: false });
    const node = { id: "sidecar~10.0.9.1~app-1.bar~bar.svc.cluster.local", metadata: { NAMESPACE: "bar" } };
    const binding = sidecars.bind(node, "bar");
    if (!binding) throw new Error("the node is not bound as a sidecar");
    for (const typeUrl of [TypeUrl.cluster, TypeUrl.listener, TypeUrl.route]) {
      const served = await sidecars.resources(binding, typeUrl);
      assertEnvoyValid(
        served.map((r) => ({ typeUrl, name: r.name, value: r.body })),
        `sidecar ${typeUrl}`,
      );
    }
  });
});
