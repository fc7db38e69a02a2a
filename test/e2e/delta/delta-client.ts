/**
 * A raw Delta ADS client over real gRPC (connect-node, h2c): send requests, read responses one by
 * one, see how the stream ended, and track what a proxy would hold (name ─▶ version per type).
 * Every resource received is checked against Envoy's PGV rules (test/support/xds-check.ts): `next()`
 * throws on a response Envoy would NACK; `dangling()` checks what is held when the subscription is complete.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "../../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { checkDeltaResponse, createHeldSet } from "../../support/xds-check.ts";
import { requestQueue } from "../support/request-queue.ts";

export type DeltaRequestInit = MessageInitShape<typeof DeltaDiscoveryRequestSchema>;

export interface DeltaStream {
  send(req: DeltaRequestInit): void;
  /** The next response, or undefined if none arrives within `ms`. */
  next(ms?: number): Promise<DeltaDiscoveryResponse | undefined>;
  /** Every response until none arrives for `quietMs` (at most 300ms; bounded by `maxMs` overall). */
  drain(quietMs?: number, maxMs?: number): Promise<DeltaDiscoveryResponse[]>;
  /** How the stream ended, once it did (within `ms`): its error, or null for a clean end; undefined if still open. */
  ended(ms?: number): Promise<ConnectError | null | undefined>;
  /** What a proxy applying every response would hold, per type URL. */
  holds(typeUrl: string): Map<string, string>;
  /** The dangling cross-references among what is held (a complete, whole-mesh subscription). */
  dangling(): string[];
  close(): void;
}

/** Opens a Delta ADS stream to `127.0.0.1:xdsPort`. */
export function openDelta(xdsPort: number): DeltaStream {
  const client = createClient(
    AggregatedDiscoveryService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${xdsPort}` }),
  );
  const queue = requestQueue<DeltaDiscoveryRequest>();
  const responses: DeltaDiscoveryResponse[] = [];
  const held = new Map<string, Map<string, string>>();
  const bodies = createHeldSet();
  const invalid = new WeakMap<DeltaDiscoveryResponse, Error>();
  let arrived: (() => void) | undefined;
  let end: ConnectError | null | undefined;
  const abort = new AbortController();
  const done = (async () => {
    try {
      for await (const r of client.deltaAggregatedResources(queue.requests, { signal: abort.signal })) {
        const h = held.get(r.typeUrl) ?? new Map<string, string>();
        held.set(r.typeUrl, h);
        for (const res of r.resources) h.set(res.name, res.version);
        for (const name of r.removedResources) h.delete(name);
        try {
          checkDeltaResponse(r);
          bodies.applyDelta(r);
        } catch (e) {
          invalid.set(r, e as Error);
        }
        responses.push(r);
        arrived?.();
      }
      end = null;
    } catch (err) {
      end = ConnectError.from(err);
    }
    arrived?.();
  })();
  const waitFor = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      arrived = () => {
        clearTimeout(t);
        resolve();
      };
    });
  return {
    send(req) {
      queue.push(create(DeltaDiscoveryRequestSchema, req));
    },
    async next(ms = 2000) {
      if (responses.length === 0 && end === undefined) await waitFor(ms);
      const r = responses.shift();
      const bad = r && invalid.get(r);
      if (bad) throw bad;
      return r;
    },
    async drain(quietMs = 300, maxMs = 5000) {
      const out: DeltaDiscoveryResponse[] = [];
      const until = Date.now() + maxMs;
      for (let r = await this.next(quietMs); r; r = await this.next(quietMs)) {
        out.push(r);
        if (Date.now() > until) break;
      }
      return out;
    },
    async ended(ms = 2000) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise((r) => {
        timer = setTimeout(r, ms);
      });
      await Promise.race([done, timeout]);
      clearTimeout(timer);
      return end;
    },
    holds: (typeUrl) => new Map(held.get(typeUrl)),
    dangling: () => bodies.dangling(),
    close() {
      queue.close();
      abort.abort();
    },
  };
}
