/**
 * Every kustomization under infra/k8s, rendered (`kubectl kustomize` where installed, else
 * kustomize-lite.ts; where kubectl is installed both must agree), and every rendered object validated
 * against the Kubernetes schemas of kubernetes-models (its class's validate(): required fields,
 * types, formats). Then what makes the manifests deployable: the control plane's probes on /ready,
 * ports, resources, PodDisruptionBudget and non-root security; the relay's own health probes on
 * RELAY_HEALTH_PORT; tokens only from the Secret docs/tasks/kubernetes.md tells how to create; no placeholder
 * image; per-cluster CLUSTER_ID in the overlay; the webhook's cluster id in its URL's path.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { loadAll } from "js-yaml";
import { describe, expect, it } from "vitest";
import { isClusterId, parseConfig } from "../../../lib/config.ts";
import { parseRelayConfig, relaySettings } from "../../../lib/relay/config.ts";
import { containers, type K8sObject, renderKustomization } from "./kustomize-lite.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const k8s = join(root, "infra/k8s");

function kustomizationDirs(dir: string): string[] {
  const here = existsSync(join(dir, "kustomization.yaml")) ? [dir] : [];
  return [
    ...here,
    ...readdirSync(dir)
      .filter((n) => statSync(join(dir, n)).isDirectory())
      .flatMap((n) => kustomizationDirs(join(dir, n))),
  ];
}
const dirs = kustomizationDirs(k8s);
const kubectl = (() => {
  try {
    execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
const renderers: { lite: (dir: string) => K8sObject[]; kubectl?: (dir: string) => K8sObject[] } = {
  lite: renderKustomization,
  ...(kubectl && {
    kubectl: (dir: string) =>
      loadAll(execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" })) as K8sObject[],
  }),
};
const rendered = new Map(
  dirs.map((d) => [relative(k8s, d) || ".", (renderers.kubectl ?? renderers.lite)(d)]),
);
const key = (o: K8sObject) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;

/** The kubernetes-models class of an object's apiVersion and kind. */
async function modelOf(o: K8sObject): Promise<new (data: unknown) => { validate(): void }> {
  const group = o.apiVersion.includes("/") ? o.apiVersion : `v1`;
  const mod = await import(/* @vite-ignore */ `kubernetes-models/${group}/${o.kind}`);
  return mod[o.kind];
}

describe("infra/k8s renders", () => {
  it("has the base, the overlay, the webhook and the agent example", () => {
    expect([...rendered.keys()].sort()).toEqual(
      expect.arrayContaining([
        ".",
        "base",
        "base/control-plane",
        "base/relay",
        "overlays/cluster-a",
        "webhook",
        "agent",
      ]),
    );
  });

  it.skipIf(!kubectl)("kustomize-lite renders what kubectl kustomize renders", () => {
    for (const d of dirs) {
      const byKey = (objects: K8sObject[]) => Object.fromEntries(objects.map((o) => [key(o), o]));
      expect(byKey(renderers.lite?.(d) ?? []), relative(k8s, d)).toEqual(byKey(renderers.kubectl?.(d) ?? []));
    }
  });

  for (const [dir, objects] of rendered)
    it(`${dir}: every object is valid against its Kubernetes schema`, async () => {
      expect(objects.length).toBeGreaterThan(0);
      for (const o of objects) {
        const Model = await modelOf(o);
        expect(() => new Model(o).validate(), key(o)).not.toThrow();
      }
    });

  it("the schema check catches a wrong manifest (a port as text, a Deployment without a selector)", async () => {
    const d = structuredClone(rendered.get("base")?.find((o) => o.kind === "Deployment")) as K8sObject;
    const Model = await modelOf(d);
    (d.spec as { selector?: unknown }).selector = undefined;
    (containers(d)[0] as unknown as { ports: { containerPort: unknown }[] }).ports[0] = {
      containerPort: "http",
    };
    expect(() => new Model(d).validate()).toThrow(
      /selector[\s\S]*containerPort must be integer|containerPort must be integer[\s\S]*selector/,
    );
  });
});

const objectsOf = (dir: string) => rendered.get(dir) as K8sObject[];
const find = (dir: string, kind: string, name: string) =>
  objectsOf(dir).find((o) => o.kind === kind && o.metadata.name === name) as K8sObject;
type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
type Probe = { httpGet: { path: string; port: string | number } };
type Container = {
  name: string;
  image: string;
  imagePullPolicy?: string;
  env?: Env[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean };
};
const podOf = (o: K8sObject) =>
  (o.spec as { template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> } })
    .template;
const main = (o: K8sObject) => containers(o)[0] as unknown as Container;
const envValue = (c: Container, name: string) => c.env?.find((e) => e.name === name)?.value;
const portOf = (c: Container, p: string | number) =>
  typeof p === "number" ? p : c.ports?.find((x) => x.name === p)?.containerPort;
/** The container's environment with each Secret reference standing in as a value of the right shape. */
const envWithSecrets = (c: Container) =>
  Object.fromEntries(
    (c.env ?? []).map((e) => [
      e.name,
      e.value ?? `secret-${e.valueFrom?.secretKeyRef?.key}-0123456789abcdef`,
    ]),
  );

describe("the control plane and the relay (base)", () => {
  const cp = find("base", "Deployment", "edgepilot");
  const relay = find("base", "Deployment", "edgepilot-relay");

  it("control plane: PORT 8080 and XDS_PORT 15010, a configuration serve accepts, probes on /ready", () => {
    const c = main(cp);
    expect(envValue(c, "PORT")).toBe("8080");
    expect(envValue(c, "XDS_PORT")).toBe("15010");
    expect(parseConfig(envWithSecrets(c))).toMatchObject({ ok: true });
    for (const probe of [c.readinessProbe, c.livenessProbe]) {
      expect(probe?.httpGet.path).toBe("/ready");
      expect(portOf(c, probe?.httpGet.port as string)).toBe(8080);
    }
    expect(c.resources?.requests?.cpu).toBeDefined();
    expect(c.resources?.requests?.memory).toBeDefined();
    expect(c.resources?.limits?.memory).toBeDefined();
  });

  it("the Service reaches both ports; the PodDisruptionBudget selects the control plane's pods", () => {
    const svc = find("base", "Service", "edgepilot");
    const spec = svc.spec as {
      selector: Record<string, string>;
      ports: { port: number; targetPort: string }[];
    };
    const labels = podOf(cp).metadata.labels;
    for (const [k, v] of Object.entries(spec.selector)) expect(labels[k]).toBe(v);
    expect(spec.ports.map((p) => [p.port, portOf(main(cp), p.targetPort)])).toEqual([
      [8080, 8080],
      [15010, 15010],
    ]);
    const pdb = find("base", "PodDisruptionBudget", "edgepilot");
    const sel = (pdb.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
    for (const [k, v] of Object.entries(sel)) expect(labels[k]).toBe(v);
    // The relay's URL is this Service.
    expect(envValue(main(relay), "EDGEPILOT_URL")).toBe(`http://edgepilot.${cp.metadata.namespace}.svc:8080`);
  });

  it("relay: a configuration the relay accepts, probes on its own health port (/healthz, /ready)", () => {
    const c = main(relay);
    const known = new Set(relaySettings.map((s) => s.env));
    for (const e of c.env ?? []) expect(known, e.name).toContain(e.name);
    const parsed = parseRelayConfig(envWithSecrets(c), []);
    expect(parsed).toMatchObject({ ok: true, config: { healthHost: "0.0.0.0" } });
    const healthPort = parsed.ok === true ? parsed.config.healthPort : undefined;
    expect(portOf(c, c.livenessProbe?.httpGet.port as string)).toBe(healthPort);
    expect(portOf(c, c.readinessProbe?.httpGet.port as string)).toBe(healthPort);
    expect([c.livenessProbe?.httpGet.path, c.readinessProbe?.httpGet.path]).toEqual(["/healthz", "/ready"]);
  });

  it("runs as non-root, read-only, no privilege escalation, the `edgepilot` image", () => {
    for (const d of [cp, relay]) {
      const pod = podOf(d).spec as { securityContext: { runAsNonRoot: boolean; runAsUser: number } };
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      const c = main(d);
      expect(c.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
      });
      expect(c.image).toBe("edgepilot");
      expect(c.imagePullPolicy).toBe("IfNotPresent");
    }
  });
});

describe("nothing that cannot work", () => {
  const all = [...rendered.values()].flat();

  it("no placeholder image, no Secret in the manifests: tokens come from edgepilot-token, which docs/tasks/kubernetes.md creates", () => {
    for (const o of all)
      for (const c of containers(o)) if (c.name !== "app") expect(c.image, key(o)).toBe("edgepilot");
    expect(all.filter((o) => o.kind === "Secret")).toEqual([]);
    const refs = all.flatMap((o) =>
      containers(o).flatMap((c) =>
        ((c as unknown as Container).env ?? []).flatMap((e) => e.valueFrom?.secretKeyRef ?? []),
      ),
    );
    expect(new Set(refs.map((r) => r.name))).toEqual(new Set(["edgepilot-token"]));
    const doc = readFileSync(join(root, "docs", "tasks", "kubernetes.md"), "utf8");
    const at = doc.indexOf("kubectl -n edgepilot create secret generic edgepilot-token");
    expect(
      at,
      "docs/tasks/kubernetes.md: kubectl -n edgepilot create secret generic edgepilot-token",
    ).toBeGreaterThan(0);
    const create = doc.slice(at, doc.indexOf("```", at));
    for (const k of new Set(refs.map((r) => r.key)))
      expect(create, `docs/tasks/kubernetes.md creates ${k}`).toContain(`--from-literal=${k}=`);
  });

  it("overlays/cluster-a sets CLUSTER_ID on the control plane and the relay", () => {
    for (const name of ["edgepilot", "edgepilot-relay"]) {
      const id = envValue(main(find("overlays/cluster-a", "Deployment", name)), "CLUSTER_ID");
      expect(id, name).toBe("cluster-a");
      expect(isClusterId(id as string)).toBe(true);
    }
    // The base keeps the default.
    expect(envValue(main(find("base", "Deployment", "edgepilot")), "CLUSTER_ID")).toBe("Kubernetes");
  });

  it("the webhook's URL has no query (the API forbids one) and names the cluster in the path", () => {
    const hook = find("webhook", "ValidatingWebhookConfiguration", "edgepilot");
    for (const w of hook.webhooks as { clientConfig: { url: string; caBundle?: string } }[]) {
      const url = new URL(w.clientConfig.url);
      expect(url.protocol).toBe("https:");
      expect(url.search).toBe("");
      const m = /^\/v1\/admission\/([^/]+)$/.exec(url.pathname);
      expect(m, url.pathname).not.toBeNull();
      expect(isClusterId(m?.[1] as string)).toBe(true);
    }
    const text = readFileSync(join(k8s, "webhook/validating-webhook.yaml"), "utf8");
    expect(text).toMatch(/caBundle: <base64 PEM CA/);
  });
});
