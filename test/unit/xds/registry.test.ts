/**
 * xdsRegistry holds every type the generators pack into an Any: Connect JSON and REST-JSON render
 * a resource only when its registry resolves each packed type (a missing one answers 500). Every
 * resource of the bookinfo sidecar set (auto-mTLS on, so TLS transport sockets are packed too) and
 * of the proxyless set of the same services renders as JSON.
 */
import { toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ListenerSchema } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { generators } from "../../../lib/resources/generators/index.ts";
import { sidecarClusters } from "../../../lib/resources/generators/sidecar/cluster.ts";
import { sidecarListeners } from "../../../lib/resources/generators/sidecar/listener.ts";
import { virtualInboundListener } from "../../../lib/resources/generators/sidecar/listener-virtual.ts";
import { sidecarRouteConfigurations } from "../../../lib/resources/generators/sidecar/route.ts";
import type { Generated } from "../../../lib/resources/types.ts";
import { xdsRegistry } from "../../../lib/xds/registry.ts";
import { envoyInboundAuthz } from "../../../lib/xds/sidecar-mesh.ts";
import { bookinfoInputs } from "./sidecar/bookinfo.ts";

const render = (list: readonly Generated[]) =>
  list.map((g) => {
    try {
      toJson(g.schema, g.message, { registry: xdsRegistry });
      return "";
    } catch (e) {
      return `${g.name}: ${(e as Error).message}`;
    }
  });

describe("xdsRegistry", () => {
  it("renders every resource of the bookinfo sidecar set as JSON", () => {
    const inputs = bookinfoInputs({ mesh: { ...bookinfoInputs().mesh, enableAutoMtls: true } });
    const all = [
      ...sidecarClusters(inputs),
      ...sidecarListeners(inputs),
      ...sidecarRouteConfigurations(inputs),
    ];
    expect(all.length).toBeGreaterThan(10);
    expect(render(all).filter((e) => e !== "")).toEqual([]);
  });

  it("renders a virtualInbound listener carrying RBAC filters (HTTP and network) as JSON", () => {
    const policies = {
      custom: [],
      audit: [],
      deny: [
        {
          name: "deny-admin",
          namespace: "default",
          action: "DENY" as const,
          rules: [{ to: [{ operation: { ports: ["9080"] } }] }],
        },
      ],
      allow: [],
    };
    const authz = envoyInboundAuthz(policies, bookinfoInputs().mesh);
    expect(authz?.http.length).toBeGreaterThan(0);
    expect(authz?.tcp.length).toBeGreaterThan(0);
    const inputs = bookinfoInputs({ ...(authz && { authz }) });
    const listener = virtualInboundListener(inputs);
    expect(render([{ name: listener.name, schema: ListenerSchema, message: listener }])).toEqual([""]);
  });

  it("renders every resource of the proxyless set as JSON", () => {
    const ctx = { domainSuffix: "cluster.local" };
    const all = bookinfoInputs().services.flatMap((v) => generators.flatMap((g) => g.generate(v, ctx)));
    expect(all.length).toBeGreaterThan(10);
    expect(render(all).filter((e) => e !== "")).toEqual([]);
  });
});
