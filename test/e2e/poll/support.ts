/** The Node control plane for the poll suites: Connect transports on both ports, ingest that waits for its push. */
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { StatusService } from "../../../lib/gen/edgepilot/v1/status_pb.ts";
import { xdsRegistry } from "../../../lib/xds/registry.ts";
import type { RunningControlPlane } from "../support/runtime.ts";

/** Connect over h2c on XDS_PORT and over HTTP/1.1 on PORT, each in JSON and binary. */
export function transports(cp: RunningControlPlane): Record<string, Transport> {
  const make = (port: number, httpVersion: "1.1" | "2", useBinaryFormat: boolean) =>
    createConnectTransport({
      baseUrl: `http://127.0.0.1:${port}`,
      httpVersion,
      useBinaryFormat,
      jsonOptions: { registry: xdsRegistry },
    });
  return {
    "h2c binary": make(cp.xdsPort, "2", true),
    "h2c JSON": make(cp.xdsPort, "2", false),
    "HTTP/1.1 JSON": make(cp.port, "1.1", false),
    "HTTP/1.1 binary": make(cp.port, "1.1", true),
  };
}

/** Posts events and resolves once the push they cause is published (GetStatus's push version moves). */
export function applier(cp: RunningControlPlane): (events: unknown[]) => Promise<void> {
  const status = createClient(StatusService, transports(cp)["h2c binary"]!);
  return async (events) => {
    const before = (await status.getStatus({})).pushVersion;
    const res = await cp.post(events);
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
    for (let i = 0; i < 500; i++) {
      if ((await status.getStatus({})).pushVersion > before) return;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`no push after ingest; control plane output:\n${cp.output()}`);
  };
}
