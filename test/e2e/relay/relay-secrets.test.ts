/**
 * The relay's Secret watches against the fake API server: it reads only the Secrets a Gateway in
 * the same namespace names (and their -cacert companions), each by name in its namespace
 * (fieldSelector=metadata.name=<name>); it never lists or watches Secrets cluster-wide, and a
 * Secret nobody names (or another namespace's of the same name) never reaches ingest. A Gateway
 * changing its credentialName moves the watch.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, names, startHarness } from "./harness.ts";
import { eventually } from "./receiver.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const secret = (name: string, namespace: string) => ({
  metadata: { name, namespace },
  type: "kubernetes.io/tls",
  data: { "tls.crt": "Y2VydA==", "tls.key": "a2V5" },
});
const gateway = (credentialName: string) => ({
  metadata: { name: "gw", namespace: "ingress" },
  spec: {
    selector: { istio: "ingressgateway" },
    servers: [
      {
        port: { number: 443, name: "https", protocol: "HTTPS" },
        hosts: ["*"],
        tls: { mode: "SIMPLE", credentialName },
      },
    ],
  },
});

describe("the relay's Secret watches", () => {
  it("reads only the Secrets a Gateway names, each by name in its namespace; a new credentialName moves the watch", async () => {
    h = await startHarness({}, (api) => {
      api.serveCrds(["v1"]);
      api.apply("gateways", gateway("cert"));
      api.apply("secrets", secret("cert", "ingress"));
      api.apply("secrets", secret("unreferenced", "ingress"));
      api.apply("secrets", secret("cert", "shop"));
      api.apply("secrets", secret("new", "ingress"));
    });
    const { api, rx } = h;
    const secretEvents = () => rx.events().filter((e) => e.object?.kind === "Secret");
    await eventually("the referenced Secret delivered", () => secretEvents().length > 0);
    await eventually("both watches open (cert and cert-cacert)", () => api.openWatches("secrets") === 2);
    expect(names(secretEvents())).toEqual(["ADDED ingress/cert", "DELETED ingress/cert-cacert"]);
    const secretRequests = () => api.requests.filter((r) => r.path.endsWith("/secrets"));
    for (const r of secretRequests()) {
      expect(r.path).toBe("/api/v1/namespaces/ingress/secrets");
      expect(["metadata.name=cert", "metadata.name=cert-cacert"]).toContain(r.query.fieldSelector);
    }

    // Changes of Secrets nobody names never arrive; the named one's do.
    api.apply("secrets", {
      ...secret("unreferenced", "ingress"),
      data: { "tls.crt": "eA==", "tls.key": "eQ==" },
    });
    api.apply("secrets", { ...secret("cert", "shop"), data: { "tls.crt": "eA==", "tls.key": "eQ==" } });
    api.apply("secrets", { ...secret("cert", "ingress"), data: { "tls.crt": "eg==", "tls.key": "eQ==" } });
    await eventually("the rotation", () => secretEvents().length === 3);
    expect(names(secretEvents()).at(-1)).toBe("MODIFIED ingress/cert");

    // The Gateway names another Secret: the old watches stop, the new one's start.
    api.apply("gateways", gateway("new"));
    await eventually("the new Secret delivered", () =>
      secretEvents().some((e) => e.object.metadata.name === "new"),
    );
    await eventually("two watches again", () => api.openWatches("secrets") === 2);
    const after = secretRequests().slice(-2);
    for (const r of after)
      expect(["metadata.name=new", "metadata.name=new-cacert"]).toContain(r.query.fieldSelector);
    expect(secretEvents().some((e) => e.object.metadata.namespace === "shop")).toBe(false);
    expect(secretEvents().some((e) => e.object.metadata.name === "unreferenced")).toBe(false);
    expect(api.requests.some((r) => r.path === "/api/v1/secrets")).toBe(false);
  });
});
