/**
 * infra/k8s against lib/kinds/descriptors.ts: the relay's ClusterRole lists and watches exactly the
 * kinds the relay may watch (by group; v1 Endpoints only in the commented rule that goes with
 * RELAY_WATCH_ENDPOINTS), gets and writes status exactly where the table says, and the admission webhooks hear exactly each kind's operations, versions
 * and subresources by its `webhook` role: "validate" kinds' CREATE and UPDATE in a webhook that
 * fails closed, everything else (deletes included) in one that fails open. Any missing or extra
 * resource, group, version, operation or failure policy is named.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { load, loadAll } from "js-yaml";
import { describe, expect, it } from "vitest";
import { type KindDescriptor, kindTable } from "../../../lib/kinds/descriptors.ts";

const k8s = fileURLToPath(new URL("../../../infra/k8s/", import.meta.url));
const clusterRoleFile = join(k8s, "base/relay/clusterrole.yaml");
const meshRoleDir = join(k8s, "relay-mesh-config");
const webhookFile = join(k8s, "webhook/validating-webhook.yaml");

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface Rule {
  apiGroups: string[];
  apiVersions: string[];
  operations: string[];
  resources: string[];
  scope?: string;
}
interface Webhook {
  name: string;
  failurePolicy: string;
  sideEffects: string;
  matchPolicy: string;
  admissionReviewVersions: string[];
  clientConfig: { url: string };
  rules: Rule[];
}

/** "group/resource" pairs of policy rules, each with its verbs. */
function grants(rules: readonly PolicyRule[]): string[] {
  return rules.flatMap((r) =>
    r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res} ${[...r.verbs].sort().join(",")}`)),
  );
}

/**
 * What the ClusterRole must grant: list and watch on every kind the relay watches unasked or once
 * served, cluster-wide, and update on the status subresource of a kind whose status it writes
 * (`writesStatus`), nothing else of it; list and watch on a kind it reads by name while referenced
 * (Secrets: their namespaces are not known ahead); a kind it reads one object of (`watchOnly`) is
 * granted by a Role instead.
 */
const relayGrants = (relay: (d: KindDescriptor) => boolean) =>
  kindTable
    .filter((d) => relay(d) && !d.watchOnly)
    .flatMap((d) => [
      `${d.group}/${d.resource} list,watch`,
      ...(d.writesStatus ? [`${d.group}/${d.resource}/status update`] : []),
    ]);

/** The rules commented out after the line naming RELAY_WATCH_ENDPOINTS, uncommented. */
function commentedRules(text: string): PolicyRule[] {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.includes("RELAY_WATCH_ENDPOINTS"));
  const block = lines.slice(at + 1).filter((l) => /^\s*# {1,3}[- ]/.test(l));
  return (load(block.map((l) => l.replace(/^(\s*)# /, "$1")).join("\n")) as PolicyRule[] | null) ?? [];
}

const sortedDiff = (got: readonly string[], want: readonly string[]) => ({
  missing: want.filter((w) => !got.includes(w)).sort(),
  extra: got.filter((g) => !want.includes(g)).sort(),
});

/** Every (webhook, group/version/resource, operation) a configuration hears. */
function heard(hooks: readonly Webhook[]): string[] {
  return hooks.flatMap((h) =>
    h.rules.flatMap((r) =>
      r.apiGroups.flatMap((g) =>
        r.apiVersions.flatMap((v) =>
          r.resources.flatMap((res) => r.operations.map((op) => `${h.failurePolicy} ${g}/${v}/${res} ${op}`)),
        ),
      ),
    ),
  );
}

/** What the table says the webhooks must hear: by role, which policy hears which operation. */
function wanted(): string[] {
  return kindTable.flatMap((d) => {
    if (d.webhook === "none") return [];
    const resources = [d.resource, ...(d.webhookSubresources ?? []).map((s) => `${d.resource}/${s}`)];
    const ops: [string, string][] =
      d.webhook === "validate"
        ? [
            ["Fail", "CREATE"],
            ["Fail", "UPDATE"],
            ["Ignore", "DELETE"],
          ]
        : [
            ["Ignore", "CREATE"],
            ["Ignore", "UPDATE"],
            ["Ignore", "DELETE"],
          ];
    return d.versions.flatMap((v) =>
      resources.flatMap((res) => ops.map(([policy, op]) => `${policy} ${d.group}/${v}/${res} ${op}`)),
    );
  });
}

/** A rule's scope must be Namespaced when every resource in it is namespaced, else "*". */
function scopeProblems(hooks: readonly Webhook[]): string[] {
  return hooks.flatMap((h) =>
    h.rules.flatMap((r) => {
      const kinds = kindTable.filter(
        (d) => r.apiGroups.includes(d.group) && r.resources.some((res) => res.split("/")[0] === d.resource),
      );
      const want = kinds.every((d) => d.namespaced) ? "Namespaced" : "*";
      return r.scope === want ? [] : [`${h.name} ${r.resources.join(",")}: scope ${r.scope}, want ${want}`];
    }),
  );
}

const clusterRoleText = readFileSync(clusterRoleFile, "utf8");
const clusterRole = load(clusterRoleText) as { kind: string; rules: PolicyRule[] };
const webhooks = (loadAll(readFileSync(webhookFile, "utf8")) as { kind: string; webhooks: Webhook[] }[]).find(
  (o) => o.kind === "ValidatingWebhookConfiguration",
)?.webhooks as Webhook[];

describe("the relay's ClusterRole follows the kind table", () => {
  it("list and watch on exactly the kinds the relay watches always or once served, WorkloadEntry included; Secrets too", () => {
    const want = relayGrants((d) => d.relay === "always" || d.relay === "crd" || d.relay === "referenced");
    expect(want).toContain("networking.istio.io/workloadentries list,watch");
    // The two Gateways, by group: the Gateway API's is read and reported on, Istio's only watched.
    expect(want).toContain("networking.istio.io/gateways list,watch");
    expect(want).toContain("gateway.networking.k8s.io/gateways list,watch");
    expect(want).toContain("gateway.networking.k8s.io/gateways/status update");
    expect(want).toContain("gateway.networking.k8s.io/referencegrants list,watch");
    expect(want).not.toContain("gateway.networking.k8s.io/referencegrants/status update");
    expect(want).toContain("/secrets list,watch");
    expect(sortedDiff(grants(clusterRole.rules), want)).toEqual({ missing: [], extra: [] });
  });

  it("v1 Endpoints (RELAY_WATCH_ENDPOINTS) only in the commented rule that goes with the setting", () => {
    const want = relayGrants((d) => d.relay === "endpoints");
    expect(want).toEqual(["/endpoints list,watch"]);
    expect(sortedDiff(grants(commentedRules(clusterRoleText)), want)).toEqual({ missing: [], extra: [] });
  });

  it("the check catches a kind left out and one too many", () => {
    const rules = structuredClone(clusterRole.rules);
    const istio = rules.find((r) => r.apiGroups.includes("networking.istio.io")) as PolicyRule;
    istio.resources = istio.resources.filter((r) => r !== "workloadentries");
    rules.push({ apiGroups: [""], resources: ["serviceaccounts"], verbs: ["list", "watch"] });
    // A status write the table does not ask for (ReferenceGrant reports nothing).
    rules.push({
      apiGroups: ["gateway.networking.k8s.io"],
      resources: ["referencegrants/status"],
      verbs: ["update"],
    });
    const want = relayGrants((d) => d.relay !== "endpoints");
    expect(sortedDiff(grants(rules), want)).toEqual({
      missing: ["networking.istio.io/workloadentries list,watch"],
      extra: ["/serviceaccounts list,watch", "gateway.networking.k8s.io/referencegrants/status update"],
    });
  });
});

describe("the relay's Role in ISTIO_NAMESPACE follows the kind table", () => {
  const role = load(readFileSync(join(meshRoleDir, "role.yaml"), "utf8")) as {
    kind: string;
    metadata: { name: string; namespace: string };
    rules: (PolicyRule & { resourceNames?: string[] })[];
  };
  const binding = load(readFileSync(join(meshRoleDir, "rolebinding.yaml"), "utf8")) as {
    kind: string;
    metadata: { namespace: string };
    roleRef: { kind: string; name: string };
    subjects: { kind: string; name: string; namespace: string }[];
  };

  it("get, list and watch on exactly the named objects of the watchOnly kinds, in istio-system only", () => {
    const only = kindTable.filter((d) => d.watchOnly);
    expect(only.map((d) => d.kind)).toEqual(["ConfigMap"]);
    expect(role.kind).toBe("Role");
    expect(role.metadata.namespace).toBe("istio-system");
    const got = role.rules.flatMap((r) =>
      r.apiGroups.flatMap((g) =>
        r.resources.map(
          (res) => `${g}/${res} ${[...r.verbs].sort().join(",")} ${(r.resourceNames ?? ["*"]).join(",")}`,
        ),
      ),
    );
    expect(got).toEqual(only.map((d) => `${d.group}/${d.resource} get,list,watch ${d.watchOnly?.name}`));
  });

  it("is bound to the relay's ServiceAccount, in the same namespace, and no ClusterRole grants ConfigMaps", () => {
    expect(binding).toMatchObject({
      kind: "RoleBinding",
      metadata: { namespace: "istio-system" },
      roleRef: { kind: "Role", name: role.metadata.name },
      subjects: [{ kind: "ServiceAccount", name: "edgepilot-relay", namespace: "edgepilot" }],
    });
    expect(grants(clusterRole.rules).filter((g) => g.startsWith("/configmaps"))).toEqual([]);
  });
});

describe("the admission webhooks follow the kind table", () => {
  it("two webhooks: validate.edgepilot.io fails closed, observe.edgepilot.io fails open", () => {
    expect(webhooks.map((w) => [w.name, w.failurePolicy])).toEqual([
      ["validate.edgepilot.io", "Fail"],
      ["observe.edgepilot.io", "Ignore"],
    ]);
  });

  it("each kind's operations, versions and subresources, under the failure policy of its role", () => {
    const want = wanted();
    // The validated Istio kinds at every version, WorkloadEntry included.
    for (const v of ["v1", "v1beta1", "v1alpha3"])
      expect(want).toContain(`Fail networking.istio.io/${v}/workloadentries CREATE`);
    // The Gateway API is observed (the API server's CEL rules validate it), at Istio's versions.
    expect(want).toContain("Ignore gateway.networking.k8s.io/v1alpha2/grpcroutes UPDATE");
    expect(want).not.toContain("Ignore gateway.networking.k8s.io/v1/referencegrants CREATE");
    expect(sortedDiff(heard(webhooks), want)).toEqual({ missing: [], extra: [] });
    expect(scopeProblems(webhooks)).toEqual([]);
  });

  it("both: sideEffects NoneOnDryRun, matchPolicy Equivalent, AdmissionReview v1, the same /v1/admission/<cluster> URL", () => {
    for (const w of webhooks) {
      expect(w, w.name).toMatchObject({
        sideEffects: "NoneOnDryRun",
        matchPolicy: "Equivalent",
        admissionReviewVersions: ["v1"],
      });
      expect(new URL(w.clientConfig.url).pathname).toMatch(/^\/v1\/admission\/[^/]+$/);
    }
    expect(new Set(webhooks.map((w) => w.clientConfig.url)).size).toBe(1);
  });

  it("the check catches a missing version, a kind under the wrong policy, and a wrong scope", () => {
    const hooks = structuredClone(webhooks);
    const [validate, observe] = hooks as [Webhook, Webhook];
    (validate.rules[0] as Rule).apiVersions = ["v1", "v1beta1"];
    observe.rules.push({
      apiGroups: ["networking.istio.io"],
      apiVersions: ["v1"],
      operations: ["CREATE"],
      resources: ["sidecars"],
      scope: "*",
    });
    const { missing, extra } = sortedDiff(heard(hooks), wanted());
    expect(missing).toContain("Fail networking.istio.io/v1alpha3/workloadentries UPDATE");
    expect(extra).toEqual(["Ignore networking.istio.io/v1/sidecars CREATE"]);
    expect(scopeProblems(hooks)).toEqual(["observe.edgepilot.io sidecars: scope *, want Namespaced"]);
  });
});
