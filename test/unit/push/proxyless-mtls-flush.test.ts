/**
 * Proxyless auto-mTLS through the real ingest and a real flush (memory store, manual clock): the
 * published Cluster of a service whose pods all carry tlsMode istio has an UpstreamTlsContext with
 * their service accounts, unless the PeerAuthentication of the push disables mTLS on their port;
 * pods without the label publish the cluster without TLS.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Cluster, ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/index.ts";
import { endpointSlice, event as ev, pod, service } from "../../e2e/support/kube.ts";
import { createHarness } from "../ingest/support/harness.ts";

const port = { name: "grpc", port: 9080 };
const CLUSTER = "outbound|9080||reviews.default.svc.cluster.local";

/** reviews with two pods; `labels` added to both. */
async function mesh(labels: Record<string, string>, peerMode?: string) {
  const h = createHarness();
  if (peerMode)
    await h.store.put(keys.config("PeerAuthentication", "default", "default", "east"), {
      kind: "PeerAuthentication",
      name: "default",
      namespace: "default",
      clusterId: "east",
      resourceVersion: "1",
      labels: {},
      spec: { mtls: { mode: peerMode } },
    });
  const labelled = (ip: string) => {
    const p = pod("reviews", "default", ip);
    return { ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, ...labels } } };
  };
  await h.ingest(
    ev("ADDED", service("reviews", "default", [port])),
    ev("ADDED", labelled("10.0.0.1")),
    ev("ADDED", labelled("10.0.0.2")),
    ev(
      "ADDED",
      endpointSlice("reviews-1", "reviews", "default", port, [
        { ip: "10.0.0.1", ready: true },
        { ip: "10.0.0.2", ready: true },
      ]),
    ),
  );
  await h.settle();
  const stored = await h.store.get<StoredResource>(keys.resource(TypeUrl.cluster, CLUSTER));
  if (!stored) throw new Error(`${CLUSTER} not published`);
  return fromBinary(ClusterSchema, stored.value.body) as Cluster;
}

describe("proxyless auto-mTLS through ingest and the flush", () => {
  const istio = { "security.istio.io/tlsMode": "istio" };

  it("pods labelled tlsMode istio: the cluster's TLS accepts their service account", async () => {
    const c = await mesh(istio);
    expect(c.transportSocket?.name).toBe("envoy.transport_sockets.tls");
    const bytes = c.transportSocket?.configType.value;
    expect(Buffer.from((bytes as { value: Uint8Array }).value).toString()).toContain(
      "spiffe://cluster.local/ns/default/sa/reviews",
    );
  });

  it("a namespace PeerAuthentication DISABLE (read by the flush) turns it off", async () => {
    expect((await mesh(istio, "DISABLE")).transportSocket).toBeUndefined();
    expect((await mesh(istio, "STRICT")).transportSocket?.name).toBe("envoy.transport_sockets.tls");
  });

  it("pods without the label: no transport socket", async () => {
    expect((await mesh({})).transportSocket).toBeUndefined();
  });
});
