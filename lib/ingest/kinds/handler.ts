/** The contract of a kind handler: apply an object, or undo one from what was recorded of it. */

import type { Problem } from "../../registry/check.ts";
import type { IngestContext, Outcome } from "../context.ts";
import type { KubeObject } from "../events.ts";
import type { ObjectRecord } from "../objects.ts";

/** An object's identity within its kind and cluster. */
export interface ObjectRef {
  namespace: string;
  name: string;
}

export interface KindHandler {
  /**
   * Refuses an ADDED or MODIFIED object its kind's check cannot judge alone because the answer
   * depends on the registry options (the mesh ConfigMap outside ISTIO_NAMESPACE): it is then
   * skipped and reported as rejected, as a refused object is, and never applied.
   */
  refuse?(ctx: IngestContext, obj: KubeObject): Problem | undefined;
  /** Applies an ADDED or MODIFIED object; `recorded` is what ingest remembers of it, if anything. */
  apply(ctx: IngestContext, obj: KubeObject, recorded: ObjectRecord | undefined): Promise<Outcome>;
  /**
   * Undoes an object: a DELETED event (with its last state in `obj`) or a resync that found it
   * gone (no `obj`; `recorded.data` holds what the handler saved to undo it).
   */
  remove(
    ctx: IngestContext,
    ref: ObjectRef,
    recorded: ObjectRecord | undefined,
    obj?: KubeObject,
  ): Promise<Outcome>;
}
