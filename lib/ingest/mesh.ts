/** The effective mesh settings as ingest applies them: read from the store once per batch's context. */
import { type EffectiveMesh, meshOverrides, readEffectiveMesh } from "../registry/mesh/effective-mesh.ts";
import type { IngestContext } from "./context.ts";

const read = new WeakMap<object, Promise<EffectiveMesh>>();

/**
 * The settings (stored MeshConfig ◀ the host's explicitly set environment) a batch builds models
 * with: the trust domain of the SPIFFE identities, the discovery selectors, the root namespace. Read
 * once per context, so one batch applies one answer.
 */
export function ingestMesh(ctx: Pick<IngestContext, "store" | "registry">): Promise<EffectiveMesh> {
  let mesh = read.get(ctx);
  if (!mesh) {
    const made = readEffectiveMesh(ctx.store, meshOverrides(ctx.registry));
    mesh = made;
    read.set(ctx, made);
    made.catch(() => read.delete(ctx));
  }
  return mesh;
}
