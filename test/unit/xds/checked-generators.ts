/**
 * lib/resources/generators as the generator tests use them, with every resource each generator returns
 * checked against Envoy's PGV rules (test/support/pgv): a generator producing what Envoy would NACK
 * fails whichever test ran it. Same names and shapes as lib/resources/generators/index.ts.
 */
import * as lib from "../../../lib/resources/generators/index.ts";
import type { GenerateContext, Generated, Generator, ServiceView } from "../../../lib/resources/types.ts";
import type { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { pushOrder } from "../../../lib/resources/xds-types.ts";
import { pgvViolations } from "../../support/pgv/index.ts";

export {
  clusterName,
  listenerName,
  mergedPorts,
  ROUTER_FILTER_NAME,
  virtualHostDomains,
} from "../../../lib/resources/generators/index.ts";

/** Throws, listing them, when a generated resource breaks a PGV rule. */
export function assertGeneratedValid(resources: readonly Generated[]): void {
  const bad = resources.flatMap((g) => pgvViolations(g.schema, g.message).map((v) => `${g.name}: ${v}`));
  if (bad.length > 0)
    throw new Error(`generated resources Envoy would NACK:\n${bad.slice(0, 40).join("\n")}`);
}

function checked(g: Generator): Generator {
  return {
    typeUrl: g.typeUrl,
    generate(view: ServiceView, ctx: GenerateContext) {
      const out = g.generate(view, ctx);
      assertGeneratedValid(out);
      return out;
    },
  };
}

export const clusterGenerator = checked(lib.clusterGenerator);
export const endpointGenerator = checked(lib.endpointGenerator);
export const listenerGenerator = checked(lib.listenerGenerator);
export const routeGenerator = checked(lib.routeGenerator);

/** One checked generator per served type URL. */
export const generatorsByType: Readonly<Record<TypeUrl, Generator>> = {
  [clusterGenerator.typeUrl]: clusterGenerator,
  [endpointGenerator.typeUrl]: endpointGenerator,
  [listenerGenerator.typeUrl]: listenerGenerator,
  [routeGenerator.typeUrl]: routeGenerator,
} as Record<TypeUrl, Generator>;

/** Every checked generator, in push order. */
export const generators: readonly Generator[] = pushOrder.map((t) => generatorsByType[t]);

/** The checked generator for a type URL, or undefined. */
export function generatorFor(typeUrl: string): Generator | undefined {
  return Object.hasOwn(generatorsByType, typeUrl) ? generatorsByType[typeUrl as TypeUrl] : undefined;
}

/** lib's generateAll, every resource checked. */
export function generateAll(
  view: ServiceView,
  ctx: GenerateContext,
): { typeUrl: TypeUrl; resources: Generated[] }[] {
  const out = lib.generateAll(view, ctx);
  for (const t of out) assertGeneratedValid(t.resources);
  return out;
}
