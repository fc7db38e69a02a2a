/**
 * infra/k8s: every YAML file parses, every Kubernetes object in it survives a round trip through
 * @kubernetes/client-node's typed models (a misspelt or unknown field is dropped there, so it fails
 * here), every kustomization names files that exist and builds with `kubectl kustomize` where kubectl
 * is installed; and the agent example matches the agent: its variables are the ones lib/agent/config.ts
 * reads, its ports the defaults, its token file the projected token's path, its bootstrap step the
 * command's real output path. js-yaml is the parser @kubernetes/client-node itself uses.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { dumpYaml, loadAllYaml } from "@kubernetes/client-node";
import { load, loadAll } from "js-yaml";
import { describe, expect, it } from "vitest";
import { parseBootstrapArgs } from "../../../lib/agent/bootstrap.ts";
import { agentSettings } from "../../../lib/agent/config.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const k8s = join(root, "infra/k8s");

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return yamlFiles(full);
    return /\.ya?ml$/.test(name) ? [full] : [];
  });
}
const files = yamlFiles(k8s);
type Obj = Record<string, unknown> & { apiVersion: string; kind: string };
const docs = (file: string) => loadAll(readFileSync(file, "utf8")) as Obj[];
const kubectlMissing = (() => {
  try {
    execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" });
    return "";
  } catch {
    return "(kubectl is not installed: kustomize builds not checked)";
  }
})();

describe("infra/k8s manifests", () => {
  it("has the relay, the webhook and the agent example", () => {
    const names = files.map((f) => relative(k8s, f));
    expect(names).toEqual(expect.arrayContaining(["kustomization.yaml", "agent/deployment.yaml"]));
  });

  it.each(
    files.map((f) => [relative(k8s, f), f]),
  )("%s parses, and its objects have only known fields", (_n, file) => {
    const objects = docs(file);
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) {
      expect(typeof o.apiVersion, `${file}: apiVersion`).toBe("string");
      expect(typeof o.kind, `${file}: kind`).toBe("string");
      if (o.kind === "Kustomization") continue;
      const typed = loadAllYaml(readFileSync(file, "utf8")).find((t) => t.kind === o.kind);
      expect(load(dumpYaml(typed)), `${file}: ${o.kind} has a field Kubernetes does not know`).toEqual(o);
    }
  });

  const kustomizations = files.filter((f) => f.endsWith("kustomization.yaml"));
  it.each(kustomizations.map((f) => [relative(k8s, f), f]))("%s names files that exist", (_n, file) => {
    const k = docs(file)[0] as { resources?: string[]; components?: string[] };
    for (const r of [...(k.resources ?? []), ...(k.components ?? [])])
      expect(existsSync(join(dirname(file), r)), `${file}: ${r}`).toBe(true);
  });

  it.skipIf(kubectlMissing !== "")(`builds with kubectl kustomize ${kubectlMissing}`, () => {
    for (const file of kustomizations) {
      const out = execFileSync("kubectl", ["kustomize", dirname(file)], { encoding: "utf8" });
      expect(loadAll(out).length).toBeGreaterThan(0);
    }
  });
});

describe("infra/k8s/agent: the agent as a native sidecar", () => {
  type Env = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };
  type Mount = { name: string; mountPath: string; readOnly?: boolean };
  type Container = {
    name: string;
    command: string[];
    restartPolicy?: string;
    env?: Env[];
    volumeMounts?: Mount[];
    readinessProbe?: { httpGet?: { path: string; port: number } };
  };
  const deployment = docs(join(k8s, "agent/deployment.yaml"))[0] as unknown as {
    spec: {
      template: {
        spec: {
          initContainers: Container[];
          containers: Container[];
          volumes: {
            name: string;
            emptyDir?: object;
            projected?: {
              sources: {
                serviceAccountToken?: { audience: string; expirationSeconds: number; path: string };
              }[];
            };
          }[];
        };
      };
    };
  };
  const pod = deployment.spec.template.spec;
  const agent = pod.initContainers.find((c) => c.command.join(" ") === "edgepilot agent") as Container;
  const init = pod.initContainers.find((c) => c.command.join(" ").includes("agent bootstrap")) as Container;
  const app = pod.containers.find((c) => c.name === "app") as Container;
  const env = (c: Container, name: string) => c.env?.find((e) => e.name === name);
  const value = (c: Container, name: string) => env(c, name)?.value;
  const mountOf = (c: Container, path: string) =>
    c.volumeMounts?.find((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`));
  const volume = (name: string | undefined) => pod.volumes.find((v) => v.name === name);
  const fallback = (name: string) => agentSettings.find((s) => s.env === name)?.fallback;

  it("runs the agent as a native sidecar after the bootstrap step", () => {
    expect(agent.restartPolicy).toBe("Always");
    expect(pod.initContainers.indexOf(init)).toBeLessThan(pod.initContainers.indexOf(agent));
  });

  it("sets only variables the agent reads, with the default ports, the probe on /ready", () => {
    const known = new Set(agentSettings.map((s) => s.env));
    for (const e of agent.env ?? []) {
      if (e.name === "POD_NAME" || e.name === "INSTANCE_IP") continue; // the bootstrap's, kept alike
      expect(known, `${e.name} is not an agent setting`).toContain(e.name);
    }
    expect(value(agent, "EDGEPILOT_AGENT_PORT")).toBe(fallback("EDGEPILOT_AGENT_PORT"));
    expect(value(agent, "EDGEPILOT_AGENT_READY_PORT")).toBe(fallback("EDGEPILOT_AGENT_READY_PORT"));
    expect(agent.readinessProbe?.httpGet).toEqual({
      path: "/ready",
      port: Number(fallback("EDGEPILOT_AGENT_READY_PORT")),
    });
    expect(value(agent, "EDGEPILOT_AGENT_READY_HOST")).toBe("0.0.0.0");
  });

  it("takes the namespace, name and IP from the downward API", () => {
    for (const c of [agent, init]) {
      expect(env(c, "POD_NAMESPACE")?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.namespace");
      expect(env(c, "POD_NAME")?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.name");
      expect(env(c, "INSTANCE_IP")?.valueFrom?.fieldRef?.fieldPath).toBe("status.podIP");
    }
  });

  it("reads the token from the projected service-account token (audience, expiry)", () => {
    const file = value(agent, "EDGEPILOT_AGENT_TOKEN_FILE") as string;
    const mount = mountOf(agent, file) as Mount;
    const token = volume(mount.name)?.projected?.sources[0]?.serviceAccountToken;
    expect(`${mount.mountPath}/${token?.path}`).toBe(file);
    expect(token?.audience).toBe("edgepilot");
    expect(token?.expirationSeconds).toBeGreaterThanOrEqual(600); // the API server's minimum
  });

  it("shares the socket and the bootstrap through an emptyDir, and caches in another", () => {
    const socket = value(agent, "EDGEPILOT_AGENT_SOCKET") as string;
    expect(value(init, "EDGEPILOT_AGENT_SOCKET")).toBe(socket);
    const bootstrapFile = value(app, "GRPC_XDS_BOOTSTRAP") as string;
    expect(init.command.join(" ")).toMatch(new RegExp(`--generator grpc > ${bootstrapFile}$`));
    for (const [c, path] of [
      [agent, socket],
      [init, bootstrapFile],
      [app, bootstrapFile],
      [app, socket],
    ] as const)
      expect(volume(mountOf(c, path)?.name)?.emptyDir, `${c.name}: ${path}`).toBeDefined();
    expect(mountOf(agent, socket)?.name).toBe(mountOf(app, bootstrapFile)?.name);
    const cache = value(agent, "EDGEPILOT_AGENT_CACHE_DIR") as string;
    expect(volume(mountOf(agent, cache)?.name)?.emptyDir).toBeDefined();
  });

  it("makes the workload certificate with the istio-ca token and shares its files with the application", () => {
    expect(env(agent, "SERVICE_ACCOUNT")?.valueFrom?.fieldRef?.fieldPath).toBe("spec.serviceAccountName");
    const file = value(agent, "EDGEPILOT_CA_TOKEN_FILE") as string;
    const mount = mountOf(agent, file) as Mount;
    const token = volume(mount.name)?.projected?.sources[0]?.serviceAccountToken;
    expect(`${mount.mountPath}/${token?.path}`).toBe(file);
    expect(token?.audience).toBe("istio-ca");
    const certs = value(agent, "OUTPUT_CERTS") as string;
    expect(value(init, "OUTPUT_CERTS")).toBe(certs);
    expect(mountOf(app, certs)?.name).toBe(mountOf(agent, certs)?.name);
    expect(mountOf(app, certs)?.readOnly).toBe(true);
    expect(volume(mountOf(agent, certs)?.name)?.emptyDir).toBeDefined();
    const sds = value(agent, "EDGEPILOT_AGENT_SDS_SOCKET") as string;
    expect(volume(mountOf(agent, sds)?.name)?.emptyDir).toBeDefined();
  });

  it("has a bootstrap step that works with what the pod gives it", () => {
    const downward: Record<string, string> = {
      "metadata.namespace": "shop",
      "metadata.name": "reviews-client-0",
      "status.podIP": "10.1.0.9",
    };
    const podEnv = Object.fromEntries(
      (init.env ?? []).map((e) => [
        e.name,
        e.value ?? downward[e.valueFrom?.fieldRef?.fieldPath ?? ""] ?? "",
      ]),
    );
    const argv = (init.command.at(-1) as string).split(">")[0]?.trim().split(/\s+/).slice(3) ?? [];
    const args = parseBootstrapArgs(podEnv, argv);
    expect(args).toMatchObject({
      ok: true,
      input: {
        podIp: "10.1.0.9",
        namespace: "shop",
        serverUri: `unix:${value(agent, "EDGEPILOT_AGENT_SOCKET")}`,
        certDir: value(agent, "OUTPUT_CERTS"),
      },
    });
  });
});
