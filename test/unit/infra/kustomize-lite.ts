/**
 * A small kustomize for the features infra/k8s uses, to render its kustomizations where kubectl is
 * not installed: resources (files, and directories with a kustomization.yaml), namespace, labels
 * (pairs on metadata.labels), images (newName/newTag) and patches in JSON 6902 form (test, replace,
 * add, remove) with a kind/name target. Anything else in a kustomization throws, so a new feature
 * cannot be silently skipped; where kubectl is installed, k8s-render.test.ts checks both agree.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { load, loadAll } from "js-yaml";

/** A Kubernetes object as rendered. */
export type K8sObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  namespace?: string;
  labels?: { pairs: Record<string, string> }[];
  images?: { name: string; newName?: string; newTag?: string }[];
  patches?: { target: { kind: string; name: string }; patch: string }[];
}
const known = new Set(["apiVersion", "kind", "resources", "namespace", "labels", "images", "patches"]);

/** Kinds with no namespace (the ones infra/k8s has, and their kin). */
const clusterScoped = new Set([
  "Namespace",
  "ClusterRole",
  "ClusterRoleBinding",
  "ValidatingWebhookConfiguration",
  "MutatingWebhookConfiguration",
  "CustomResourceDefinition",
  "PriorityClass",
]);

/** Renders the kustomization in `dir`, as `kubectl kustomize dir` would (objects in resource order). */
export function renderKustomization(dir: string): K8sObject[] {
  const k = load(readFileSync(join(dir, "kustomization.yaml"), "utf8")) as Kustomization;
  for (const key of Object.keys(k))
    if (!known.has(key))
      throw new Error(`${dir}/kustomization.yaml: ${key} is not supported by kustomize-lite`);
  let objects: K8sObject[] = (k.resources ?? []).flatMap((r) => {
    const path = join(dir, r);
    if (statSync(path).isDirectory()) return renderKustomization(path);
    return (loadAll(readFileSync(path, "utf8")) as K8sObject[]).filter((o) => o !== null);
  });
  objects = structuredClone(objects);
  for (const p of k.patches ?? []) {
    const hits = objects.filter((o) => o.kind === p.target.kind && o.metadata.name === p.target.name);
    if (hits.length !== 1)
      throw new Error(`${dir}: patch target ${p.target.kind}/${p.target.name} matches ${hits.length}`);
    applyJsonPatch(hits[0] as K8sObject, load(p.patch) as JsonOp[], dir);
  }
  for (const o of objects) {
    if (k.namespace && !clusterScoped.has(o.kind)) o.metadata.namespace = k.namespace;
    if (k.namespace && o.kind === "ClusterRoleBinding")
      for (const s of (o.subjects ?? []) as { kind: string; namespace?: string }[])
        if (s.kind === "ServiceAccount") s.namespace = k.namespace;
    for (const l of k.labels ?? []) o.metadata.labels = { ...o.metadata.labels, ...l.pairs };
    for (const image of k.images ?? []) for (const c of containers(o)) c.image = retag(c.image, image);
  }
  return objects;
}

/** Every container of a workload (init containers too). */
export function containers(o: K8sObject): { name: string; image: string }[] {
  const spec = (o.spec as { template?: { spec?: Record<string, unknown> } } | undefined)?.template?.spec;
  return [...((spec?.initContainers ?? []) as []), ...((spec?.containers ?? []) as [])];
}

function retag(image: string, rule: { name: string; newName?: string; newTag?: string }): string {
  const m = /^([^:@]+(?::\d+)?(?:\/[^:@]+)*)(?::([^@]+))?$/.exec(image);
  if (!m || m[1] !== rule.name) return image;
  const tag = rule.newTag ?? m[2];
  return `${rule.newName ?? rule.name}${tag ? `:${tag}` : ""}`;
}

type JsonOp = { op: "test" | "replace" | "add" | "remove"; path: string; value?: unknown };

function applyJsonPatch(target: K8sObject, ops: JsonOp[], where: string): void {
  for (const op of ops) {
    const keys = op.path
      .split("/")
      .slice(1)
      .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
    const last = keys.pop() as string;
    let parent: unknown = target;
    for (const key of keys) parent = (parent as Record<string, unknown>)?.[key];
    if (parent === null || typeof parent !== "object")
      throw new Error(`${where}: ${op.path}: no such parent`);
    const box = parent as Record<string, unknown> & unknown[];
    const index = Array.isArray(box) ? (last === "-" ? box.length : Number(last)) : last;
    switch (op.op) {
      case "test":
        if (JSON.stringify(box[index as never]) !== JSON.stringify(op.value))
          throw new Error(`${where}: test ${op.path} failed: ${JSON.stringify(box[index as never])}`);
        break;
      case "replace":
        if (!(index in box)) throw new Error(`${where}: replace ${op.path}: nothing there`);
        box[index as never] = op.value as never;
        break;
      case "add":
        if (Array.isArray(box)) box.splice(index as number, 0, op.value);
        else box[index as never] = op.value as never;
        break;
      case "remove":
        if (Array.isArray(box)) box.splice(index as number, 1);
        else delete box[index as never];
        break;
      default:
        throw new Error(`${where}: op ${(op as JsonOp).op} is not supported by kustomize-lite`);
    }
  }
}
