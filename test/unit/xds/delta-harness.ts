/** A Delta session over an in-memory store, with counting nonces, recorded statuses and request builders. */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { StatusSchema } from "../../../lib/gen/google/rpc/status_pb.ts";
import type { SyncGate } from "../../../lib/resources/sync-gate.ts";
import type { ProxyStatus, StoredResource } from "../../../lib/resources/types.ts";
import type { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createDeltaSession } from "../../../lib/xds/delta.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";

/** A fresh session; `publish` and `remove` change what the store serves. `gate`: start-up sync; `budget`: EDGEPILOT_MAX_RESPONSE_BYTES. */
export function harness(
  gate?: SyncGate,
  budget?: { maxResponseBytes: number; log?: (line: string) => void },
) {
  const store = createMemoryStore();
  const statuses: ProxyStatus[] = [];
  let n = 0;
  const session = createDeltaSession({
    source: createStoreSource(store),
    nonce: () => `n${++n}`,
    onStatus: (s) => statuses.push(typeof s === "function" ? s() : s),
    gate,
    ...budget,
  });
  const publish = async (typeUrl: TypeUrl, name: string, version = "v1") => {
    const r: StoredResource = {
      typeUrl,
      name,
      version,
      body: new TextEncoder().encode(`${name}@${version}`),
      service: "ns/h",
    };
    await store.put(keys.resource(typeUrl, name), r);
  };
  const remove = (typeUrl: TypeUrl, name: string) => store.delete(keys.resource(typeUrl, name));
  return { session, store, statuses, publish, remove };
}

type RequestInit = MessageInitShape<typeof DeltaDiscoveryRequestSchema> & { typeUrl: string };

/** A DeltaDiscoveryRequest. */
export const req = (o: RequestInit) => create(DeltaDiscoveryRequestSchema, o);

/** An ACK of `r`, optionally carrying subscription changes. */
export const ack = (
  r: DeltaDiscoveryResponse | undefined,
  o: { resourceNamesSubscribe?: string[]; resourceNamesUnsubscribe?: string[] } = {},
) => req({ typeUrl: r?.typeUrl ?? "", responseNonce: r?.nonce ?? "", ...o });

/** A NACK of `r`. */
export const nack = (r: DeltaDiscoveryResponse | undefined, message = "rejected by test") =>
  req({
    typeUrl: r?.typeUrl ?? "",
    responseNonce: r?.nonce ?? "",
    errorDetail: create(StatusSchema, { code: 3, message }),
  });

/** `name@version` of every resource in a response, checking the Any and the body agree with it. */
export function sent(r: DeltaDiscoveryResponse | undefined): string[] {
  return (r?.resources ?? []).map((res) => {
    const body = new TextDecoder().decode(res.resource?.value);
    if (body !== `${res.name}@${res.version}`) throw new Error(`resource ${res.name} carries ${body}`);
    if (res.resource?.typeUrl !== r?.typeUrl)
      throw new Error(`resource ${res.name} is a ${res.resource?.typeUrl}`);
    return body;
  });
}

/** One line per response: `<type> +a@v1 -b` (type as cds/eds/lds/rds). */
export function summary(responses: readonly (DeltaDiscoveryResponse | undefined)[]): string[] {
  const short = (t: string) =>
    t.endsWith("Cluster")
      ? "cds"
      : t.endsWith("ClusterLoadAssignment")
        ? "eds"
        : t.endsWith("Listener")
          ? "lds"
          : t.endsWith("RouteConfiguration")
            ? "rds"
            : t;
  return responses.map((r) =>
    [
      short(r?.typeUrl ?? "none"),
      ...sent(r).map((s) => `+${s}`),
      ...(r?.removedResources ?? []).map((n) => `-${n}`),
    ].join(" "),
  );
}
