/**
 * The transport floor of the fan-out bench (fanout.ts): fanout-floor-server.mjs, a bare node:http2
 * server with no control-plane logic, started with npm start's environment and node flags and the
 * same probe as the server (fanout-probe.mjs: CPU, profiles), and fed, for each change, the bytes
 * the server would write to a stream for it: this process ingests the change into its own mesh of
 * the same services (mesh.ts, the project's ingest, flush and generators), takes the
 * ClusterLoadAssignment the push published, and encodes a DeltaDiscoveryResponse carrying it as
 * the server's ADS path does (deltaResponse, encodeDeltaResponse, gRPC's 5-byte prefix), with a
 * nonce and a system version of the server's lengths.
 */
import { spawn } from "node:child_process";
import { setVersion } from "../../lib/resources/version.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";
import { publishedBy } from "../../lib/xds/change-source.ts";
import { deltaResponse } from "../../lib/xds/delta-response.ts";
import { createNonces } from "../../lib/xds/nonce.ts";
import { encodeDeltaResponse } from "../../lib/xds/response-bytes.ts";
import { clusterOf } from "./fanout-clients.ts";
import { buildMesh } from "./mesh.ts";
import { ask, type StartedServer, serving, startCommand } from "./npm-start.ts";

const root = new URL("../../", import.meta.url);
const prefixBytes = 5;

/** A started floor: the server's shape, plus `prepare`, which makes `event`'s push the bytes written next. */
export interface StartedFloor extends StartedServer {
  prepare(event: unknown): Promise<void>;
}

/** Starts the floor for a mesh of `services` services; resolves once it serves. */
export async function startFloor(services: number): Promise<StartedFloor> {
  const mesh = await buildMesh(services);
  const nonce = createNonces();
  const { line, env, nodeArgs } = startCommand();
  // npm start's node flags, without its entry: the floor server takes its place.
  const flags = nodeArgs.slice(0, -1);
  const child = spawn(
    process.execPath,
    [
      ...flags,
      "--import",
      new URL("test/bench/fanout-probe.mjs", root).href,
      new URL("test/bench/fanout-floor-server.mjs", root).pathname,
    ],
    { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit", "ipc"] },
  );
  const { ports, exited } = await serving(child, "the floor");
  const target = clusterOf(0);
  return {
    child,
    line: `${line} (entry replaced by test/bench/fanout-floor-server.mjs)`,
    ...ports,
    async prepare(event) {
      const { flushes } = await mesh.ingestAndPush([event]);
      const change = flushes
        .flatMap((f) => f.changes)
        .find((c) => c.typeUrl === TypeUrl.endpoint && c.name === target);
      const resource = change && publishedBy(change);
      if (!resource) throw new Error(`the change did not publish ${target}`);
      const version = await setVersion([resource]);
      const bytes = encodeDeltaResponse(
        deltaResponse(TypeUrl.endpoint, [resource], [], nonce(), version),
        prefixBytes,
      );
      new DataView(bytes.buffer, bytes.byteOffset, prefixBytes).setUint32(1, bytes.length - prefixBytes);
      await ask(child, { kind: "bytes", bytes: Buffer.from(bytes).toString("base64") });
    },
    async stop() {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}
