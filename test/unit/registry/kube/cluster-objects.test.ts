import { describe, expect, it } from "vitest";
import type { Locality } from "../../../../lib/model/index.ts";
import { convertNamespace } from "../../../../lib/registry/kube/namespace.ts";
import { convertNode, parseLocality, podLocality } from "../../../../lib/registry/kube/node.ts";
import { convertPod } from "../../../../lib/registry/kube/pod.ts";
import type { NodeInfo, PodInfo } from "../../../../lib/registry/kube/records.ts";
import type { KubeNamespace, KubePod } from "../../../../lib/registry/kube/types.ts";
import { loadKubeFixture } from "../../../fixtures/kube/load.ts";
import { kubeNode, kubePod } from "./builders.ts";

describe("convertPod", () => {
  it("the API server fixture", () => {
    expect(convertPod(loadKubeFixture<KubePod>("pod.json"))).toEqual<PodInfo>({
      namespace: "bookinfo",
      name: "reviews-v1-7d9f8c6b5-x2k4p",
      ips: ["10.244.1.12", "fd00:10:244:1::c"],
      labels: {
        app: "reviews",
        "pod-template-hash": "7d9f8c6b5",
        "security.istio.io/tlsMode": "istio",
        "service.istio.io/canonical-name": "reviews",
        "service.istio.io/canonical-revision": "v1",
        version: "v1",
      },
      serviceAccount: "bookinfo-reviews",
      nodeName: "worker-a",
      terminating: false,
      ready: true,
    });
  });

  const cases: { name: string; in: KubePod; want: Partial<PodInfo> }[] = [
    {
      name: "podIP alone",
      in: kubePod({ status: { podIP: "10.0.0.7", podIPs: undefined } }),
      want: { ips: ["10.0.0.7"] },
    },
    {
      name: "no IP yet (just scheduled)",
      in: kubePod({ status: { phase: "Pending", podIP: undefined, podIPs: undefined } }),
      want: { ips: [] },
    },
    {
      name: "Succeeded pod serves no IP",
      in: kubePod({ status: { phase: "Succeeded" } }),
      want: { ips: [] },
    },
    { name: "Failed pod serves no IP", in: kubePod({ status: { phase: "Failed" } }), want: { ips: [] } },
    {
      name: "Pending pod with an IP serves it",
      in: kubePod({ status: { phase: "Pending", podIP: "10.0.0.8", podIPs: [{ ip: "10.0.0.8" }] } }),
      want: { ips: ["10.0.0.8"] },
    },
    {
      name: "no serviceAccountName ▶ the deprecated serviceAccount",
      in: kubePod({ spec: { serviceAccountName: undefined, serviceAccount: "legacy" } }),
      want: { serviceAccount: "legacy" },
    },
    {
      name: "no service account at all ▶ default",
      in: kubePod({ spec: { serviceAccountName: undefined, serviceAccount: undefined } }),
      want: { serviceAccount: "default" },
    },
    {
      name: "not scheduled ▶ nodeName ''",
      in: kubePod({ spec: { nodeName: undefined } }),
      want: { nodeName: "" },
    },
    {
      name: "deletionTimestamp ▶ terminating",
      in: kubePod({ metadata: { deletionTimestamp: "2025-03-14T11:00:00Z" } }),
      want: { terminating: true },
    },
    { name: "no labels ▶ {}", in: kubePod({ metadata: { labels: undefined } }), want: { labels: {} } },
    {
      name: "Ready condition True ▶ ready",
      in: kubePod({ status: { conditions: [{ type: "Ready", status: "True" }] } }),
      want: { ready: true },
    },
    {
      name: "Ready condition False ▶ not ready",
      in: kubePod({ status: { conditions: [{ type: "Ready", status: "False" }] } }),
      want: { ready: false },
    },
    {
      name: "Ready condition Unknown ▶ not ready",
      in: kubePod({ status: { conditions: [{ type: "Ready", status: "Unknown" }] } }),
      want: { ready: false },
    },
    {
      name: "no Ready condition (only ContainersReady) ▶ not ready, as Istio IsPodReady",
      in: kubePod({ status: { conditions: [{ type: "ContainersReady", status: "True" }] } }),
      want: { ready: false },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(convertPod(c.in)).toMatchObject(c.want);
    });
  }

  it("labels come out sorted whatever the input order", () => {
    const got = convertPod(kubePod({ metadata: { labels: { z: "1", a: "2", m: "3" } } }));
    expect(Object.keys(got.labels)).toEqual(["a", "m", "z"]);
  });
});

describe("convertNode", () => {
  it("the API server fixture: GA topology labels and Istio's subzone", () => {
    expect(convertNode(kubeNode())).toEqual<NodeInfo>({
      name: "worker-a",
      region: "us-east-1",
      zone: "us-east-1a",
      subzone: "rack-7",
    });
  });

  const cases: { name: string; labels: Record<string, string>; want: Omit<NodeInfo, "name"> }[] = [
    { name: "no labels", labels: {}, want: { region: "", zone: "", subzone: "" } },
    {
      name: "only the deprecated failure-domain labels",
      labels: {
        "failure-domain.beta.kubernetes.io/region": "eu-west-1",
        "failure-domain.beta.kubernetes.io/zone": "eu-west-1b",
      },
      want: { region: "eu-west-1", zone: "eu-west-1b", subzone: "" },
    },
    {
      name: "GA labels win over the deprecated ones",
      labels: {
        "failure-domain.beta.kubernetes.io/region": "old",
        "failure-domain.beta.kubernetes.io/zone": "old-a",
        "topology.kubernetes.io/region": "new",
        "topology.kubernetes.io/zone": "new-a",
      },
      want: { region: "new", zone: "new-a", subzone: "" },
    },
    {
      name: "an empty GA label falls back to the deprecated one",
      labels: { "topology.kubernetes.io/zone": "", "failure-domain.beta.kubernetes.io/zone": "old-a" },
      want: { region: "", zone: "old-a", subzone: "" },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(convertNode(kubeNode(c.labels))).toEqual({ name: "worker-a", ...c.want });
    });
  }
});

describe("convertNamespace", () => {
  it("the API server fixture: name and sorted labels", () => {
    const got = convertNamespace(loadKubeFixture<KubeNamespace>("namespace.json"));
    expect(got).toEqual({
      name: "bookinfo",
      labels: { "istio-injection": "enabled", "kubernetes.io/metadata.name": "bookinfo", team: "storefront" },
    });
    expect(Object.keys(got.labels)).toEqual(["istio-injection", "kubernetes.io/metadata.name", "team"]);
  });

  it("a namespace without labels", () => {
    expect(convertNamespace({ apiVersion: "v1", kind: "Namespace", metadata: { name: "bare" } })).toEqual({
      name: "bare",
      labels: {},
    });
  });
});

describe("pod locality labels", () => {
  const loc = (region: string, zone = "", subzone = ""): Locality => ({ region, zone, subzone });
  const cases: { name: string; labels: Record<string, string>; want: Locality | undefined }[] = [
    { name: "none", labels: { app: "x" }, want: undefined },
    {
      name: "istio-locality with dots",
      labels: { "istio-locality": "us-west.zone1.sub1" },
      want: loc("us-west", "zone1", "sub1"),
    },
    { name: "region only", labels: { "istio-locality": "us-west" }, want: loc("us-west") },
    { name: "region and zone", labels: { "istio-locality": "us-west.zone1" }, want: loc("us-west", "zone1") },
    {
      name: "slashes are kept as separators",
      labels: { "istio-locality": "r/z.1/s" },
      want: loc("r", "z.1", "s"),
    },
    {
      name: "topology.istio.io/locality wins over istio-locality",
      labels: { "topology.istio.io/locality": "a.b.c", "istio-locality": "x.y.z" },
      want: loc("a", "b", "c"),
    },
    {
      name: "topology.istio.io/locality present but empty hides istio-locality (as Istio)",
      labels: { "topology.istio.io/locality": "", "istio-locality": "x.y.z" },
      want: undefined,
    },
    { name: "empty istio-locality pins nothing", labels: { "istio-locality": "" }, want: undefined },
    {
      name: "parts past the third are dropped",
      labels: { "istio-locality": "a.b.c.d" },
      want: loc("a", "b", "c"),
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(podLocality(c.labels)).toEqual(c.want);
    });
  }

  it("parseLocality splits on '/'", () => {
    expect(parseLocality("r/z/s")).toEqual(loc("r", "z", "s"));
    expect(parseLocality("")).toEqual(loc(""));
  });
});
