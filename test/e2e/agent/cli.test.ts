/**
 * `edgepilot agent` as a process: configuration errors exit 2 naming the variable; a configured
 * agent binds its ports, answers GET /ready 503 before any upstream answer, and exits 0 on SIGTERM;
 * `agent bootstrap` prints both generators' JSON (Envoy's parses as its Bootstrap).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createRegistry, fromJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { BootstrapSchema } from "../../../lib/gen/envoy/config/bootstrap/v3/bootstrap_pb.ts";
import { HttpProtocolOptionsSchema } from "../../../lib/gen/envoy/extensions/upstreams/http/v3/http_protocol_options_pb.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));

function agent(env: Record<string, string>, args: string[] = []) {
  const child = spawn(process.execPath, ["bin/edgepilot.mjs", "agent", ...args], {
    cwd: root,
    env: { ...process.env, POD_NAMESPACE: "", EDGEPILOT_AGENT_UPSTREAM: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

describe("edgepilot agent (process)", () => {
  it("exits 2 naming every variable that is missing or wrong", async () => {
    const a = agent({ EDGEPILOT_AGENT_PORT: "x" });
    expect(await a.exited).toBe(2);
    expect(a.output()).toMatch(/agent: config: EDGEPILOT_AGENT_UPSTREAM is not set/);
    expect(a.output()).toMatch(/agent: config: POD_NAMESPACE is not set/);
    expect(a.output()).toMatch(/agent: config: EDGEPILOT_AGENT_PORT="x": not a port/);
  });

  it("serves /ready (503 until an upstream answer) and stops on SIGTERM", async () => {
    const a = agent({ POD_NAMESPACE: "default", EDGEPILOT_AGENT_UPSTREAM: "http://127.0.0.1:1" }, [
      "--port",
      "0",
      "--ready-port",
      "0",
    ]);
    const deadline = Date.now() + 15_000;
    let ready: RegExpExecArray | null = null;
    while (!ready && Date.now() < deadline && a.child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 50));
      ready = /ready on (http:\/\/127\.0\.0\.1:\d+\/ready)/.exec(a.output());
    }
    expect(ready, a.output()).not.toBeNull();
    const res = await fetch(ready?.[1] as string);
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/no upstream configuration cached yet/);
    a.child.kill("SIGTERM");
    expect(await a.exited).toBe(0);
    expect(a.output()).toMatch(/agent: SIGTERM: closing local streams and the upstream/);
  });

  it("prints the bootstrap of an Envoy and of a proxyless gRPC client of this pod", async () => {
    const pod = {
      POD_IP: "10.1.0.9",
      POD_NAME: "app-0",
      POD_NAMESPACE: "shop",
      EDGEPILOT_AGENT_SOCKET: "/etc/edgepilot/agent.sock",
    };
    const envoy = agent(pod, ["bootstrap", "--generator", "envoy"]);
    const grpc = agent(pod, ["bootstrap", "--generator=grpc"]);
    expect([await envoy.exited, await grpc.exited]).toEqual([0, 0]);
    const registry = createRegistry(HttpProtocolOptionsSchema);
    const b = fromJson(BootstrapSchema, JSON.parse(envoy.output()), { registry });
    expect(b.node?.id).toBe("sidecar~10.1.0.9~app-0.shop~shop.svc.cluster.local");
    expect(JSON.parse(grpc.output()).xds_servers[0].server_uri).toBe("unix:/etc/edgepilot/agent.sock");
  });
});
