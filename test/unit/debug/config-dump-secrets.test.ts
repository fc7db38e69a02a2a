/**
 * /debug/config_dump of a gateway that holds credentials: its SecretsConfigDump lists each secret
 * it was sent by name and version only; no certificate or key reaches the page (istiod redacts the
 * key; edgepilot shows neither).
 */
import { describe, expect, it } from "vitest";
import { readConfigDump } from "../../../lib/debug/config-dump.ts";
import type { StoredSecret } from "../../../lib/registry/kube/secret-store.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { readGatewaySecrets } from "../../../lib/xds/gateway-secrets.ts";
import { createViews } from "../../../lib/xds/view-source.ts";
import { b64 } from "../registry/kube/secret-builders.ts";
import { NOW, record, recordType } from "./builders.ts";

const ROUTER = "router~10.1.0.5~ingressgateway-1.ingress~ingress.svc.cluster.local";

describe("config_dump of a gateway's secrets", () => {
  it("names and versions only", async () => {
    const store = createMemoryStore();
    const secret: StoredSecret = {
      cluster: "east",
      namespace: "ingress",
      name: "cert",
      resourceVersion: "1",
      material: { certKey: { cert: b64("CHAIN-TEXT"), key: b64("KEY-TEXT"), from: ["tls.crt", "tls.key"] } },
      hash: "h",
    };
    await store.put(keys.secret("east", "ingress", "cert"), secret);
    const [served] = await readGatewaySecrets(
      store,
      { nodeId: ROUTER, namespace: "ingress" },
      ["kubernetes://cert"],
      () => {},
    );
    const version = served?.version as string;
    await store.put(
      keys.proxy(ROUTER),
      record({ nodeId: ROUTER }, [
        recordType({
          typeUrl: TypeUrl.secret,
          wildcard: false,
          subscribed: ["kubernetes://cert"],
          subscribedCount: 1,
          sent: { versionInfo: "s1", nonce: "n", versions: { "kubernetes://cert": version } },
          sentCount: 1,
        }),
      ]),
    );
    const r = await readConfigDump(store, createViews({ store }), { proxyID: ROUTER, now: NOW });
    if (!r.ok) throw new Error(r.error);
    expect(r.dump.configs).toEqual([
      {
        "@type": "type.googleapis.com/envoy.admin.v3.SecretsConfigDump",
        version_info: "s1",
        dynamic_active_secrets: [{ name: "kubernetes://cert", version_info: version }],
      },
    ]);
    const page = JSON.stringify(r.dump);
    for (const text of ["CHAIN-TEXT", "KEY-TEXT", b64("KEY-TEXT"), b64("CHAIN-TEXT")])
      expect(page).not.toContain(text);
  });
});
