/** The proxyless gRPC generators, registered by type URL. */
import type { GenerateContext, Generated, Generator, ServiceView } from "../types.ts";
import type { TypeUrl } from "../xds-types.ts";
import { pushOrder } from "../xds-types.ts";
import { clusterGenerator } from "./cluster.ts";
import { endpointGenerator } from "./endpoint.ts";
import { listenerGenerator } from "./listener.ts";
import { routeGenerator } from "./route.ts";
import { secretGenerator } from "./secret.ts";

export { clusterGenerator } from "./cluster.ts";
export { endpointGenerator } from "./endpoint.ts";
export { listenerGenerator, ROUTER_FILTER_NAME } from "./listener.ts";
export { routeGenerator, virtualHostDomains } from "./route.ts";
export { clusterName, listenerName, mergedPorts } from "./shared.ts";

/** One generator per served type URL; every TypeUrl has exactly one. */
export const generatorsByType: Readonly<Record<TypeUrl, Generator>> = {
  [clusterGenerator.typeUrl]: clusterGenerator,
  [endpointGenerator.typeUrl]: endpointGenerator,
  [listenerGenerator.typeUrl]: listenerGenerator,
  [routeGenerator.typeUrl]: routeGenerator,
  [secretGenerator.typeUrl]: secretGenerator,
} as Record<TypeUrl, Generator>;

/** Every generator, in make-before-break push order: CDS, EDS, LDS, RDS. */
export const generators: readonly Generator[] = pushOrder.map((t) => generatorsByType[t]);

/** The generator for a type URL, or undefined for a type we do not serve. */
export function generatorFor(typeUrl: string): Generator | undefined {
  return Object.hasOwn(generatorsByType, typeUrl) ? generatorsByType[typeUrl as TypeUrl] : undefined;
}

/**
 * Runs every generator on one service view, in push order (CDS, EDS, LDS, RDS). A view without
 * service records yields an empty list for every type, which tells the caller to remove what the
 * service generated before.
 */
export function generateAll(
  view: ServiceView,
  ctx: GenerateContext,
): { typeUrl: TypeUrl; resources: Generated[] }[] {
  return pushOrder.map((typeUrl) => ({ typeUrl, resources: generatorsByType[typeUrl].generate(view, ctx) }));
}
