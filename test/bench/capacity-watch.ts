/**
 * One whole-mesh Watch (DeltaPollService/Watch of every ClusterLoadAssignment by name: EDS has no
 * wildcard) held open against the Worker during a
 * capacity run (do-capacity.ts): a real Connect client over HTTP/1.1, authenticated like a proxy,
 * reading every delta the MeshStore pushes. Counts what arrived so the bench can wait for it.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { DeltaPollService } from "../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";

/** A running Watch: messages and resources received so far; close() ends it. */
export interface BenchWatch {
  readonly messages: number;
  readonly resources: number;
  /** The error that ended it early, if any. */
  readonly error: unknown;
  close(): void;
}

/** Opens the Watch at `baseUrl` with the xDS token `token`, subscribed to the ClusterLoadAssignments `names`. */
export function openWholeMeshWatch(baseUrl: string, token: string, names: string[]): BenchWatch {
  const transport = createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    useBinaryFormat: true,
    interceptors: [
      (next) => (req) => {
        req.header.set("authorization", `Bearer ${token}`);
        return next(req);
      },
    ],
  });
  const client = createClient(DeltaPollService, transport);
  const abort = new AbortController();
  const state = { messages: 0, resources: 0, error: undefined as unknown };
  void (async () => {
    try {
      const stream = client.watch(
        { request: { typeUrl: TypeUrl.endpoint, resourceNamesSubscribe: names } },
        { signal: abort.signal },
      );
      for await (const r of stream) {
        state.messages++;
        state.resources += r.resources.length;
      }
    } catch (err) {
      if (!abort.signal.aborted) state.error = err;
    }
  })();
  return {
    get messages() {
      return state.messages;
    },
    get resources() {
      return state.resources;
    },
    get error() {
      return state.error;
    },
    close: () => abort.abort(),
  };
}
