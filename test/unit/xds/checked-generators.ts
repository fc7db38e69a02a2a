/**
 * lib/resources/generators as the generator tests use them, with every resource each generator returns
 * checked against Envoy's PGV rules (test/support/pgv): a generator producing what Envoy would NACK
 * fails whichever test ran it. Same names and shapes as lib/resources/generators/index.ts.
 */
import * as lib from "../../../lib/resources/generators/index.ts";
import type { GenerateContext, Generated, Generator, ServiceView } from "../../../lib/resources/types.ts";
import { pushOrder, TypeUrl } from "../../../lib/resources/xds-types.ts";
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

/** One checked generator per served type URL: lib's registry wrapped, so a new type needs no line here. */
export const generatorsByType = Object.fromEntries(
  Object.entries(lib.generatorsByType).map(([t, g]) => [t, checked(g)]),
) as Readonly<Record<TypeUrl, Generator>>;

export const clusterGenerator = generatorsByType[TypeUrl.cluster];
export const endpointGenerator = generatorsByType[TypeUrl.endpoint];
export const listenerGenerator = generatorsByType[TypeUrl.listener];
export const routeGenerator = generatorsByType[TypeUrl.route];

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
