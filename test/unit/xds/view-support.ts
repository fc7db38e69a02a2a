/** A mesh of three namespaces' routes over a real memory store, with a view table, for the view tests. */
import { toSidecar } from "../../../lib/registry/istio/sidecar.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { saveViewTable } from "../../../lib/resources/view-store.ts";
import { emptyViewTable, type ViewTable } from "../../../lib/resources/view-table.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { createViews } from "../../../lib/xds/view-source.ts";

export const RDS = TypeUrl.route;
export const host = (ns: string) => `r.${ns}.svc.cluster.local`;
export const route = (ns: string) => `${host(ns)}:80`;
export const resource = (ns: string, version: string): StoredResource => ({
  typeUrl: RDS,
  name: route(ns),
  version,
  body: new TextEncoder().encode(`${route(ns)}@${version}`),
  service: `${ns}/${host(ns)}`,
});
export const node = (ns: string) => ({
  id: `sidecar~10.0.0.1~p.${ns}~${ns}.svc.cluster.local`,
  // A proxyless client (CONTRACT: GENERATOR=grpc): the views serve it the published set.
  metadata: { GENERATOR: "grpc" },
});

/**
 * Shared routes of namespaces a, b and c; namespace a overlays its own route (a VirtualService
 * exported to "." only) and hides c's (a shared name its view lacks); b's Sidecar sees "./*" only.
 */
export async function mesh() {
  const store = createMemoryStore();
  for (const ns of ["a", "b", "c"]) await store.put(keys.resource(RDS, route(ns)), resource(ns, "shared"));
  await store.put(keys.viewResource("a", RDS, route("a")), resource("a", "own"));
  const table: ViewTable = {
    ...emptyViewTable(),
    sidecars: [toSidecar({ name: "default", namespace: "b" }, { egress: [{ hosts: ["./*"] }] })],
    overlays: {
      a: { [`a/${host("a")}`]: { [RDS]: { names: [route("a")], versions: ["own"], hidden: [route("c")] } } },
    },
  };
  await saveViewTable(store, table, undefined);
  const base = createStoreSource(store);
  const views = createViews({ store });
  return { store, base, views };
}
