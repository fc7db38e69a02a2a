/**
 * A mesh core's metrics in one call: istiod-named metrics fed by the core's hooks, and the
 * inventory gauges read from its store. One registry per core, so every host (Node, the MeshStore
 * Durable Object) exposes the same metrics from the one place its mesh lives.
 */
import type { MeshCore } from "../core/mesh-core.ts";
import { addInventory } from "./inventory.ts";
import { createMeshMetrics } from "./mesh-metrics.ts";
import { createRegistry, type Registry } from "./registry.ts";

export { createRegistry, exposition, type Registry } from "./registry.ts";
export { measureStore } from "./store-metrics.ts";

/** The metrics of a core: its registry (hosts may add their own) and what detaches them. */
export interface CoreMetrics {
  readonly registry: Registry;
  /** The text exposition (Prometheus text format 0.0.4). */
  expose(): Promise<string>;
  /** Stops observing the core. */
  detach(): void;
}

/**
 * Declares the metrics on `registry` (default a new one; a host that measures its store with
 * store-metrics.ts passes that store's) and observes `core` from now on.
 */
export function attachMetrics(
  core: Pick<MeshCore, "observe" | "store">,
  registry: Registry = createRegistry(),
): CoreMetrics {
  const { observer } = createMeshMetrics(registry);
  const stops = [core.observe(observer), core.observe(addInventory(registry, core.store))];
  return {
    registry,
    expose: () => registry.expose(),
    detach() {
      for (const stop of stops) stop();
    },
  };
}
