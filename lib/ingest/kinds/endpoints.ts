/**
 * discovery.k8s.io/v1 EndpointSlice and v1 Endpoints: each object is one piece of its service's
 * shard. PILOT_USE_ENDPOINT_SLICE picks which of the two kinds feeds endpoints; the other is ignored.
 */
import { mergeAll, serviceHostname } from "../../model/index.ts";
import { sliceEndpoints } from "../../registry/kube/endpoint-slice.ts";
import { endpointsObjectEndpoints } from "../../registry/kube/endpoints.ts";
import type { SlicePiece } from "../../registry/kube/records.ts";
import { serviceNameOfSlice } from "../../registry/kube/service.ts";
import type { EndpointSlice, KubeEndpoints } from "../../registry/kube/types.ts";
import type { IngestContext, Outcome } from "../context.ts";
import type { KubeObject } from "../events.ts";
import { refreshSlice } from "../shard-refresh.ts";
import type { KindHandler, ObjectRef } from "./handler.ts";

/** v1 Endpoints are stored as the piece named "~endpoints" ("~" never occurs in a slice name). */
const endpointsPieceName = "~endpoints";

function pieceOf(obj: KubeObject): SlicePiece | undefined {
  if (obj.kind === "Endpoints") {
    return {
      serviceName: obj.metadata.name,
      endpoints: endpointsObjectEndpoints(obj as unknown as KubeEndpoints),
    };
  }
  const serviceName = serviceNameOfSlice(obj as unknown as EndpointSlice);
  return serviceName === undefined
    ? undefined
    : { serviceName, endpoints: sliceEndpoints(obj as unknown as EndpointSlice) };
}

function pieceName(kind: string, name: string): string {
  return kind === "Endpoints" ? endpointsPieceName : name;
}

async function writePiece(
  ctx: IngestContext,
  namespace: string,
  piece: string,
  serviceName: string,
  next: SlicePiece | undefined,
) {
  const svc = { namespace, hostname: serviceHostname(serviceName, namespace, ctx.registry.domainSuffix) };
  // Unless the stored piece is the same, the refresh stores it with what it contributes and keeps the reverse index.
  if (ctx.slices) return { changed: await ctx.slices.note(ctx, svc, piece, next), push: undefined };
  return refreshSlice(ctx, svc, piece, next);
}

function handler(kind: "EndpointSlice" | "Endpoints"): KindHandler {
  const active = (ctx: IngestContext) => ctx.registry.useEndpointSlice === (kind === "EndpointSlice");
  const inactive = {
    kind: "ignored" as const,
    reason: `PILOT_USE_ENDPOINT_SLICE is ${kind === "Endpoints"}: endpoints come from ${kind === "Endpoints" ? "EndpointSlices" : "v1 Endpoints"}`,
  };
  return {
    async apply(ctx, obj, recorded): Promise<Outcome> {
      if (!active(ctx)) return inactive;
      const piece = pieceOf(obj);
      if (!piece) return { kind: "ignored", reason: "no kubernetes.io/service-name label" };
      const { namespace = "", name } = obj.metadata;
      const pushes = [];
      // A slice relabelled to another service leaves the old one.
      const previous = recorded?.data?.serviceName;
      if (previous !== undefined && previous !== piece.serviceName) {
        pushes.push((await writePiece(ctx, namespace, pieceName(kind, name), previous, undefined)).push);
      }
      const result = await writePiece(ctx, namespace, pieceName(kind, name), piece.serviceName, piece);
      pushes.push(result.push);
      if (!result.changed && pushes.every((p) => p === undefined)) return { kind: "unchanged" };
      return {
        kind: "applied",
        push: mergeAll(pushes.filter((p) => p !== undefined)),
        data: { serviceName: piece.serviceName },
      };
    },

    async remove(ctx, ref: ObjectRef, recorded, obj): Promise<Outcome> {
      if (!active(ctx)) return inactive;
      const serviceName = recorded?.data?.serviceName ?? (obj ? pieceOf(obj)?.serviceName : undefined);
      if (serviceName === undefined) return { kind: "unchanged" };
      const result = await writePiece(ctx, ref.namespace, pieceName(kind, ref.name), serviceName, undefined);
      return result.changed ? { kind: "applied", push: result.push } : { kind: "unchanged" };
    },
  };
}

export const endpointSliceHandler = handler("EndpointSlice");
export const endpointsHandler = handler("Endpoints");
