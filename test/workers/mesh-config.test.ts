/**
 * The mesh ConfigMap on the Worker (workerd, the real MeshStore): posted to /v1/events like any
 * config, stored by the object's ingest, shown by /debug/mesh (behind XDS_AUTH); an invalid one is
 * answered as rejected naming its field and leaves the stored records as they were.
 */
import { describe, expect, it } from "vitest";
import { event } from "../e2e/support/kube.ts";
import { ingest, runAlarmsUntilIdle, worker, xdsAuth } from "./support.ts";

const configMap = (resourceVersion: string, data: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "istio", namespace: "istio-system", resourceVersion },
  data,
});

const meshDebug = async () => {
  const r = await worker("/debug/mesh", { headers: xdsAuth });
  expect(r.status).toBe(200);
  return r.json();
};

describe("the mesh ConfigMap on the Worker", () => {
  it("is stored through ingest and shown by /debug/mesh; an invalid one is rejected and changes nothing", async () => {
    expect((await worker("/debug/mesh")).status).toBe(401);
    expect(await meshDebug()).toEqual({ meshConfig: null, meshNetworks: null });

    const r = await ingest([
      event(
        "ADDED",
        configMap("5", {
          mesh: "trustDomain: worker.org\nrootNamespace: istio-config\n",
          meshNetworks: "networks:\n  n1:\n    gateways:\n    - address: 192.0.2.1\n      port: 15443\n",
        }),
      ),
    ]);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ applied: 1, rejected: [], push: { full: true, configs: 2 } });
    await runAlarmsUntilIdle();
    const stored = {
      meshConfig: {
        model: { trustDomain: "worker.org", rootNamespace: "istio-config" },
        unsupported: [],
        source: "configmap:Kubernetes/istio-system/istio@5",
      },
      meshNetworks: {
        model: { networks: { n1: { endpoints: [], gateways: [{ port: 15443, address: "192.0.2.1" }] } } },
        source: "configmap:Kubernetes/istio-system/istio@5",
      },
    };
    expect(await meshDebug()).toEqual(stored);

    const bad = await ingest([
      event("MODIFIED", configMap("6", { mesh: "outboundTrafficPolicy: {mode: SOMETIMES}\n" })),
    ]);
    expect(bad.status).toBe(200);
    expect(await bad.json()).toMatchObject({
      applied: 0,
      rejected: [
        {
          kind: "ConfigMap",
          name: "istio",
          field: "data.mesh",
          message: expect.stringContaining("outboundTrafficPolicy.mode"),
        },
      ],
    });
    expect(await meshDebug()).toEqual(stored);
  });
});
