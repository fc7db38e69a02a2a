/** Builds SotW DiscoveryResponses from stored resources: one place decides version_info and packing. */
import { create } from "@bufbuild/protobuf";
import {
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../resources/types.ts";
import { createVersionMap, setVersion, type VersionMap } from "../resources/version.ts";
import { envelopeBytes, ResponseTooLargeError, sotwResourceBytes, splitByBudget } from "./budget.ts";
import { sharedAny } from "./response-bytes.ts";

/** The resources to send, one per name, with their name─▶version map. */
export function uniqueByName(resources: readonly StoredResource[]): {
  unique: StoredResource[];
  versions: Map<string, string>;
} {
  const versions = new Map<string, string>();
  const unique: StoredResource[] = [];
  for (const r of resources) {
    if (versions.has(r.name)) continue;
    versions.set(r.name, r.version);
    unique.push(r);
  }
  return { unique, versions };
}

/**
 * A response whose version_info is the set version of exactly these resources, so the same
 * resources give the same version_info on every instance and runtime. `only`, when given, limits
 * the resources carried (not the version): RDS and EDS responses need not repeat unchanged
 * resources, since for those types an omission means nothing (xDS protocol, SotW).
 */
export async function sotwResponse(
  typeUrl: string,
  resources: readonly StoredResource[],
  nonce: string | ((versionInfo: string) => string),
  only?: ReadonlySet<string>,
): Promise<{ response: DiscoveryResponse; versions: Map<string, string> }> {
  const { unique, versions } = uniqueByName(resources);
  const versionInfo = await setVersion([...versions].map(([name, version]) => ({ name, version })));
  const carried = only ? unique.filter((r) => only.has(r.name)) : unique;
  const response = create(DiscoveryResponseSchema, {
    versionInfo,
    typeUrl,
    nonce: typeof nonce === "string" ? nonce : nonce(versionInfo),
    resources: carried.map(sharedAny),
  });
  return { response, versions };
}

/** A SotW answer as the responses that carry it, and the name─▶version map it stands for. */
export interface SotwAnswer {
  responses: DiscoveryResponse[];
  versionInfo: string;
  versions: VersionMap;
}

/**
 * The answer of `resources` under the byte budget. Every response carries the version_info of the
 * whole answer (what the client holds once it applied them all) and a nonce of its own.
 * `splittable` (RDS, EDS: an omission means nothing) cuts the resources carried (`only`, else all)
 * into pieces under the budget; otherwise (CDS, LDS: state of the world) one response, and over
 * the budget a ResponseTooLargeError: a partial answer would tell the client to drop the rest.
 */
export async function sotwAnswer(
  typeUrl: string,
  resources: readonly StoredResource[],
  nonce: () => string,
  options: { budget: number; splittable: boolean; only?: ReadonlySet<string> | undefined },
): Promise<SotwAnswer> {
  const { unique, versions } = uniqueByName(resources);
  const held = createVersionMap(versions);
  const versionInfo = await held.version();
  const { only, budget, splittable } = options;
  const carried = only ? unique.filter((r) => only.has(r.name)) : unique;
  const responses = sotwPieces(typeUrl, carried, versionInfo, nonce, { budget, splittable });
  return { responses, versionInfo, versions: held };
}

/**
 * The responses carrying `carried` with `versionInfo` (the set version of the whole answer), a
 * nonce each: cut under the budget when `splittable`, else one response or ResponseTooLargeError.
 * Always at least one response (an empty one says the set changed by removals alone).
 */
export function sotwPieces(
  typeUrl: string,
  carried: readonly StoredResource[],
  versionInfo: string,
  nonce: () => string,
  options: { budget: number; splittable: boolean },
): DiscoveryResponse[] {
  const { budget, splittable } = options;
  let pieces: (readonly StoredResource[])[];
  if (splittable) {
    pieces = splitByBudget(carried, sotwResourceBytes, budget);
  } else {
    const bytes = carried.reduce((n, r) => n + sotwResourceBytes(r), envelopeBytes);
    if (bytes > budget) throw new ResponseTooLargeError(typeUrl, bytes, budget);
    pieces = [carried];
  }
  if (pieces.length === 0) pieces = [[]];
  // The message create() would make, as a literal: no reflection over the schema per response.
  return pieces.map(
    (piece): DiscoveryResponse => ({
      $typeName: DiscoveryResponseSchema.typeName,
      versionInfo,
      resources: piece.map(sharedAny),
      canary: false,
      typeUrl,
      nonce: nonce(),
    }),
  );
}
