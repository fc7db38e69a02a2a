/**
 * Actions, their order and the fail-closed rule of the Envoy builder: no policy, no filter; an ALLOW
 * policy that matches nothing denies; CUSTOM (no extension providers here) ▶ DENY first; then AUDIT
 * (LOG), DENY, ALLOW; on a TCP chain an ALLOW rule with HTTP-only fields is dropped while a DENY rule
 * keeps its other fields; a value that does not parse drops an ALLOW rule and just the value of a
 * DENY rule. Every filter passes Envoy's PGV rules and round-trips through protobuf-es.
 */
import { type DescMessage, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { FilterSchema } from "../../../../lib/gen/envoy/config/listener/v3/listener_components_pb.ts";
import { HttpFilterSchema } from "../../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { buildHttpAuthzFilters, buildNetworkAuthzFilters } from "../../../../lib/resources/authz/index.ts";
import { pgvViolations } from "../../../support/pgv/index.ts";
import { json, type PolicyInput, workloadPolicies } from "./support.ts";

type Rbac = { action?: string; policies?: Record<string, { permissions: unknown[]; principals: unknown[] }> };
type Cfg = {
  typedConfig: { rules?: Rbac; shadowRules?: Rbac; statPrefix?: string; shadowRulesStatPrefix?: string };
};

const trustDomains = ["cluster.local"] as const;
const http = (inputs: PolicyInput[]) =>
  buildHttpAuthzFilters({ policies: workloadPolicies(inputs), trustDomains }).map(
    (f) => json(HttpFilterSchema, f) as Cfg,
  );
const tcp = (inputs: PolicyInput[]) =>
  buildNetworkAuthzFilters({ policies: workloadPolicies(inputs), trustDomains }).map(
    (f) => json(FilterSchema, f) as Cfg,
  );
const names = (r: Rbac | undefined) => Object.keys(r?.policies ?? {});

const p = (
  name: string,
  action: string | undefined,
  rules?: unknown[],
  extra: Partial<PolicyInput> = {},
): PolicyInput => ({
  name,
  spec: {
    ...(action && { action }),
    ...(rules && { rules }),
    ...(action === "CUSTOM" && { provider: { name: "ext" } }),
  },
  ...extra,
});
const toPath = (path: string) => ({ to: [{ operation: { paths: [path] } }] });

describe("actions and order", () => {
  it("no policy selects the workload: no filter (everything is allowed)", () => {
    expect(http([])).toEqual([]);
    expect(
      http([{ name: "other", spec: { selector: { matchLabels: { app: "other" } }, rules: [{}] } }]),
    ).toEqual([]);
  });

  it("an ALLOW policy without rules matches nothing, so its filter denies every request", () => {
    const [f] = http([p("none", "ALLOW")]);
    expect(f?.typedConfig.rules).toEqual({
      policies: {
        "ns[foo]-policy[none]-rule[0]": {
          permissions: [{ notRule: { any: true } }],
          principals: [{ notId: { any: true } }],
        },
      },
    });
  });

  it("CUSTOM (unknown provider: a DENY), then AUDIT (LOG), DENY, ALLOW — one filter each", () => {
    const filters = http([
      p("a", "ALLOW", [toPath("/a")]),
      p("d", "DENY", [toPath("/d")]),
      p("l", "AUDIT", [toPath("/l")]),
      p("c", "CUSTOM", [toPath("/c")]),
    ]);
    expect(filters.map((f) => f.typedConfig.rules?.action ?? "ALLOW")).toEqual([
      "DENY",
      "LOG",
      "DENY",
      "ALLOW",
    ]);
    expect(filters.map((f) => names(f.typedConfig.rules))).toEqual([
      ["istio-ext-authz-ext-ns[foo]-policy[c]-rule[0]-deny-due-to-bad-CUSTOM-action"],
      ["ns[foo]-policy[l]-rule[0]"],
      ["ns[foo]-policy[d]-rule[0]"],
      ["ns[foo]-policy[a]-rule[0]"],
    ]);
  });

  it("policies of one action share a filter, one RBAC policy per rule, named by namespace, policy and rule index", () => {
    const [f] = http([p("x", "DENY", [toPath("/1"), toPath("/2")]), p("y", "DENY", [toPath("/3")])]);
    expect(names(f?.typedConfig.rules)).toEqual([
      "ns[foo]-policy[x]-rule[0]",
      "ns[foo]-policy[x]-rule[1]",
      "ns[foo]-policy[y]-rule[0]",
    ]);
  });

  it("a dry-run policy is shadowed, never enforced, under istiod's stat prefix", () => {
    const [deny] = http([p("d", "DENY", [toPath("/d")], { annotations: { "istio.io/dry-run": "true" } })]);
    expect(deny?.typedConfig.rules).toBeUndefined();
    expect(names(deny?.typedConfig.shadowRules)).toEqual(["ns[foo]-policy[d]-rule[0]"]);
    expect(deny?.typedConfig.shadowRulesStatPrefix).toBe("istio_dry_run_deny_");
  });

  it("a dry-run CUSTOM policy enforces nothing", () => {
    const [f] = http([p("c", "CUSTOM", [toPath("/c")], { annotations: { "istio.io/dry-run": "true" } })]);
    expect(f?.typedConfig.rules).toEqual({ action: "DENY" });
  });

  it("a TCP chain's filters carry the tcp. stat prefix", () => {
    expect(tcp([p("d", "DENY", [{}])]).map((f) => f.typedConfig.statPrefix)).toEqual(["tcp."]);
  });
});

describe("fail closed", () => {
  const mixed = [{ to: [{ operation: { methods: ["GET"], ports: ["80"] } }] }];

  it("TCP: an ALLOW rule with an HTTP-only field is dropped, so it allows nothing", () => {
    const [f] = tcp([p("a", "ALLOW", mixed)]);
    expect(f?.typedConfig.rules).toEqual({});
  });

  it("TCP: a DENY rule keeps its other fields, so it denies more", () => {
    const [f] = tcp([p("d", "DENY", mixed)]);
    expect(f?.typedConfig.rules?.policies?.["ns[foo]-policy[d]-rule[0]"]?.permissions).toEqual([
      { andRules: { rules: [{ orRules: { rules: [{ destinationPort: 80 }] } }] } },
    ]);
  });

  it("TCP: an AUDIT rule keeps its other fields too", () => {
    const [f] = tcp([p("l", "AUDIT", mixed)]);
    expect(names(f?.typedConfig.rules)).toEqual(["ns[foo]-policy[l]-rule[0]"]);
  });

  it.each([
    ["an address", { from: [{ source: { ipBlocks: ["not-an-ip", "1.2.3.4"] } }] }],
    ["a port", { to: [{ operation: { ports: ["99999", "80"] } }] }],
  ])("a value that is not %s: ALLOW drops the rule, DENY drops the value", (_n, rule) => {
    expect(names(http([p("a", "ALLOW", [rule])])[0]?.typedConfig.rules)).toEqual([]);
    const deny = JSON.stringify(http([p("d", "DENY", [rule])])[0]?.typedConfig.rules);
    expect(deny).not.toMatch(/not-an-ip|99999/);
    expect(deny).toMatch(/1\.2\.3\.4|"destinationPort":80/);
  });

  it("a rule with a when key istiod does not know is skipped", () => {
    expect(
      names(
        http([p("d", "DENY", [{ when: [{ key: "no.such.key", values: ["x"] }] }])])[0]?.typedConfig.rules,
      ),
    ).toEqual([]);
  });
});

describe("every filter is valid and round-trips", () => {
  const all: PolicyInput[] = [
    p("a", "ALLOW", [
      {
        from: [
          {
            source: {
              principals: ["*"],
              namespaces: ["n*"],
              ipBlocks: ["10.0.0.0/8"],
              requestPrincipals: ["*"],
            },
          },
        ],
        to: [{ operation: { hosts: ["*.x"], methods: ["*"], paths: ["/p/{**}", "*"], ports: ["80"] } }],
        when: [
          { key: "request.headers[x]", values: ["*"] },
          { key: "connection.sni", values: ["*"] },
          { key: "experimental.envoy.filters.a.b[c]", values: ["[v]", "w"] },
        ],
      },
    ]),
    p("d", "DENY", [{ to: [{ operation: { notPaths: ["/admin*"] } }] }]),
    p("l", "AUDIT", [{}], { annotations: { "istio.io/dry-run": "true" } }),
    p("c", "CUSTOM", [toPath("/c")]),
    p("none", "ALLOW"),
  ];
  const check = <D extends DescMessage>(schema: D, m: MessageShape<D>) => {
    expect(pgvViolations(schema, m)).toEqual([]);
    expect(fromBinary(schema, toBinary(schema, m))).toEqual(m);
  };

  it("HTTP", () => {
    const filters = buildHttpAuthzFilters({ policies: workloadPolicies(all), trustDomains });
    expect(filters).toHaveLength(4);
    for (const f of filters) check(HttpFilterSchema, f);
  });

  it("TCP", () => {
    const filters = buildNetworkAuthzFilters({ policies: workloadPolicies(all), trustDomains });
    expect(filters).toHaveLength(4);
    for (const f of filters) check(FilterSchema, f);
  });
});
