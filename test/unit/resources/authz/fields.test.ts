/**
 * Each AuthorizationPolicy field ▶ the RBAC match istiod's builder writes for it (generator.go,
 * matcher/*.go), one row per field: the rule `{from|to|when: ...}` of an ALLOW policy on an HTTP
 * chain, and the single principal or permission it yields inside the rule's AND.
 */
import { describe, expect, it } from "vitest";
import { HttpFilterSchema } from "../../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { buildHttpAuthzFilters, type TrustDomains } from "../../../../lib/resources/authz/index.ts";
import { json, only } from "./support.ts";

type Json = Record<string, unknown>;

/** The ALLOW filter's only policy for one rule, as JSON. */
function policyOf(rule: unknown, trustDomains: TrustDomains = ["cluster.local"]): Json {
  const filters = buildHttpAuthzFilters({
    policies: only({ name: "p", spec: { rules: [rule] } }),
    trustDomains,
  });
  expect(filters).toHaveLength(1);
  const cfg = json(HttpFilterSchema, filters[0] as never) as {
    typedConfig: { rules: { policies: Record<string, Json> } };
  };
  return cfg.typedConfig.rules.policies["ns[foo]-policy[p]-rule[0]"] as Json;
}
const principalOf = (rule: unknown, td?: TrustDomains) =>
  (policyOf(rule, td).principals as { andIds: { ids: Json[] } }[])[0]?.andIds.ids;
const permissionOf = (rule: unknown) =>
  (policyOf(rule).permissions as { andRules: { rules: Json[] } }[])[0]?.andRules.rules;

const authenticated = (m: Json) => ({ authenticated: { principalName: m } });
const orIds = (...ids: Json[]) => ({ orIds: { ids } });
const orRules = (...rules: Json[]) => ({ orRules: { rules } });
const header = (name: string, m: Json) => ({ header: { name, ...m } });
const jwt = (claim: string[], value: Json) => ({
  metadata: {
    filter: "envoy.filters.http.jwt_authn",
    path: ["payload", ...claim].map((key) => ({ key })),
    value: { orMatch: { valueMatchers: [{ listMatch: { oneOf: value } }, value] } },
  },
});

describe("source fields ▶ principals", () => {
  it.each([
    [
      "principals exact",
      { principals: ["cluster.local/ns/a/sa/b"] },
      [orIds(authenticated({ exact: "spiffe://cluster.local/ns/a/sa/b" }))],
    ],
    ["principals *", { principals: ["*"] }, [orIds(authenticated({ safeRegex: { regex: ".+" } }))]],
    [
      "principals prefix",
      { principals: ["cluster.local/ns/a/*"] },
      [orIds(authenticated({ prefix: "spiffe://cluster.local/ns/a/" }))],
    ],
    [
      "principals suffix",
      { principals: ["*/sa/b"] },
      [orIds(authenticated({ safeRegex: { regex: "spiffe://.*/sa/b" } }))],
    ],
    [
      "notPrincipals",
      { notPrincipals: ["cluster.local/ns/a/sa/b"] },
      [{ notId: orIds(authenticated({ exact: "spiffe://cluster.local/ns/a/sa/b" })) }],
    ],
    [
      "namespaces",
      { namespaces: ["ns-1", "ns.*"] },
      [
        orIds(
          authenticated({ safeRegex: { regex: ".*/ns/ns-1/.*" } }),
          authenticated({ safeRegex: { regex: ".*/ns/ns\\..*/.*" } }),
        ),
      ],
    ],
    [
      "notNamespaces",
      { notNamespaces: ["x"] },
      [{ notId: orIds(authenticated({ safeRegex: { regex: ".*/ns/x/.*" } })) }],
    ],
    [
      "serviceAccounts",
      { serviceAccounts: ["sa", "other/sa2"] },
      [
        orIds(
          authenticated({ safeRegex: { regex: "spiffe://.+/ns/foo/(.+/|)sa/sa(/.+)?" } }),
          authenticated({ safeRegex: { regex: "spiffe://.+/ns/other/(.+/|)sa/sa2(/.+)?" } }),
        ),
      ],
    ],
    [
      "trustDomains",
      { trustDomains: ["td", "*", "t*d"] },
      [
        orIds(
          authenticated({ prefix: "spiffe://td/" }),
          authenticated({ prefix: "spiffe://" }),
          authenticated({ safeRegex: { regex: "spiffe://t[^/]*d/.*" } }),
        ),
      ],
    ],
    [
      "ipBlocks",
      { ipBlocks: ["10.1.2.3", "10.0.0.0/8"] },
      [
        orIds(
          { directRemoteIp: { addressPrefix: "10.1.2.3", prefixLen: 32 } },
          { directRemoteIp: { addressPrefix: "10.0.0.0", prefixLen: 8 } },
        ),
      ],
    ],
    [
      "ipBlocks IPv6 canonical",
      { ipBlocks: ["2001:DB8:0:0::1", "fe80::/10"] },
      [
        orIds(
          { directRemoteIp: { addressPrefix: "2001:db8::1", prefixLen: 128 } },
          { directRemoteIp: { addressPrefix: "fe80::", prefixLen: 10 } },
        ),
      ],
    ],
    [
      "notIpBlocks",
      { notIpBlocks: ["1.2.3.4"] },
      [{ notId: orIds({ directRemoteIp: { addressPrefix: "1.2.3.4", prefixLen: 32 } }) }],
    ],
    [
      "remoteIpBlocks",
      { remoteIpBlocks: ["1.2.3.0/24"] },
      [orIds({ remoteIp: { addressPrefix: "1.2.3.0", prefixLen: 24 } })],
    ],
    [
      "requestPrincipals",
      { requestPrincipals: ["https://issuer.example/user"] },
      [
        {
          andIds: {
            ids: [
              {
                metadata: {
                  filter: "envoy.filters.http.jwt_authn",
                  path: [{ key: "payload" }, { key: "iss" }],
                  value: { stringMatch: { exact: "https://issuer.example" } },
                },
              },
              {
                metadata: {
                  filter: "envoy.filters.http.jwt_authn",
                  path: [{ key: "payload" }, { key: "sub" }],
                  value: { stringMatch: { exact: "user" } },
                },
              },
            ],
          },
        },
      ],
    ],
    [
      "fields in istiod's order: principals, requestPrincipals, namespaces, remoteIpBlocks, ipBlocks",
      { ipBlocks: ["1.1.1.1"], namespaces: ["n"], principals: ["p"], remoteIpBlocks: ["2.2.2.2"] },
      [
        orIds(authenticated({ exact: "spiffe://p" })),
        orIds(authenticated({ safeRegex: { regex: ".*/ns/n/.*" } })),
        orIds({ remoteIp: { addressPrefix: "2.2.2.2", prefixLen: 32 } }),
        orIds({ directRemoteIp: { addressPrefix: "1.1.1.1", prefixLen: 32 } }),
      ],
    ],
  ])("%s", (_name, source, want) => {
    expect(principalOf({ from: [{ source }] })).toEqual(want);
  });

  it("a principal of cluster.local or an alias is matched under every trust domain of the mesh", () => {
    expect(
      principalOf({ from: [{ source: { principals: ["cluster.local/ns/a/sa/b", "other.td/ns/a/sa/b"] } }] }, [
        "example.org",
        "old.org",
      ]),
    ).toEqual([
      orIds(
        authenticated({ exact: "spiffe://example.org/ns/a/sa/b" }),
        authenticated({ exact: "spiffe://old.org/ns/a/sa/b" }),
        authenticated({ exact: "spiffe://other.td/ns/a/sa/b" }),
      ),
    ]);
  });

  it("several sources are alternatives: one principal each", () => {
    const p = policyOf({ from: [{ source: { principals: ["a"] } }, { source: { namespaces: ["b"] } }] });
    expect(p.principals).toHaveLength(2);
  });
});

describe("operation fields ▶ permissions", () => {
  it.each([
    [
      "methods",
      { methods: ["GET", "P*"] },
      [
        orRules(
          header(":method", { stringMatch: { exact: "GET" } }),
          header(":method", { stringMatch: { prefix: "P" } }),
        ),
      ],
    ],
    [
      "notMethods",
      { notMethods: ["DELETE"] },
      [{ notRule: orRules(header(":method", { stringMatch: { exact: "DELETE" } })) }],
    ],
    [
      "hosts (case-insensitive)",
      { hosts: ["example.com", "*.example.com", "*"] },
      [
        orRules(
          header(":authority", { stringMatch: { exact: "example.com", ignoreCase: true } }),
          header(":authority", { stringMatch: { suffix: ".example.com", ignoreCase: true } }),
          header(":authority", { presentMatch: true }),
        ),
      ],
    ],
    [
      "paths exact, prefix, suffix, any",
      { paths: ["/a", "/b/*", "*/c", "*"] },
      [
        orRules(
          { urlPath: { path: { exact: "/a" } } },
          { urlPath: { path: { prefix: "/b/" } } },
          { urlPath: { path: { suffix: "/c" } } },
          { urlPath: { path: { safeRegex: { regex: ".+" } } } },
        ),
      ],
    ],
    [
      "paths with templates",
      { paths: ["/v1/{*}/items/{**}"] },
      [
        orRules({
          uriTemplate: {
            name: "uri-template",
            typedConfig: {
              "@type":
                "type.googleapis.com/envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig",
              pathTemplate: "/v1/*/items/**",
            },
          },
        }),
      ],
    ],
    ["ports", { ports: ["80", "8080"] }, [orRules({ destinationPort: 80 }, { destinationPort: 8080 })]],
    ["notPorts", { notPorts: ["9090"] }, [{ notRule: orRules({ destinationPort: 9090 }) }]],
  ])("%s", (_name, operation, want) => {
    expect(permissionOf({ to: [{ operation }] })).toEqual(want);
  });
});

describe("when conditions", () => {
  it.each([
    [
      "request.headers[x-user]",
      { values: ["alice"], notValues: ["bob*"] },
      "principal",
      [
        orIds(header("x-user", { stringMatch: { exact: "alice" } })),
        { notId: orIds(header("x-user", { stringMatch: { prefix: "bob" } })) },
      ],
    ],
    [
      "source.ip",
      { values: ["10.0.0.0/16"] },
      "principal",
      [orIds({ directRemoteIp: { addressPrefix: "10.0.0.0", prefixLen: 16 } })],
    ],
    [
      "remote.ip",
      { values: ["10.0.0.1"] },
      "principal",
      [orIds({ remoteIp: { addressPrefix: "10.0.0.1", prefixLen: 32 } })],
    ],
    [
      "source.namespace",
      { values: ["n"] },
      "principal",
      [orIds(authenticated({ safeRegex: { regex: ".*/ns/n/.*" } }))],
    ],
    [
      "source.principal",
      { values: ["cluster.local/ns/n/sa/s"] },
      "principal",
      [orIds(authenticated({ exact: "spiffe://cluster.local/ns/n/sa/s" }))],
    ],
    [
      "request.auth.claims[groups]",
      { values: ["admin"] },
      "principal",
      [jwt(["groups"], { stringMatch: { exact: "admin" } })],
    ],
    [
      "request.auth.claims[a][b]",
      { values: ["x", "y"] },
      "principal",
      [
        jwt(["a", "b"], {
          orMatch: { valueMatchers: [{ stringMatch: { exact: "x" } }, { stringMatch: { exact: "y" } }] },
        }),
      ],
    ],
    [
      "request.auth.audiences",
      { values: ["aud1"] },
      "principal",
      [jwt(["aud"], { stringMatch: { exact: "aud1" } })],
    ],
    [
      "request.auth.presenter",
      { values: ["azp1"] },
      "principal",
      [jwt(["azp"], { stringMatch: { exact: "azp1" } })],
    ],
    ["destination.port", { values: ["443"] }, "permission", [orRules({ destinationPort: 443 })]],
    [
      "destination.ip",
      { values: ["10.0.0.1"] },
      "permission",
      [orRules({ destinationIp: { addressPrefix: "10.0.0.1", prefixLen: 32 } })],
    ],
    [
      "connection.sni",
      { values: ["*.example.com"] },
      "permission",
      [orRules({ requestedServerName: { suffix: ".example.com" } })],
    ],
  ])("%s", (key, values, side, want) => {
    const rule = { when: [{ key, ...values }] };
    expect(side === "principal" ? principalOf(rule) : permissionOf(rule)).toEqual(want);
  });

  it("a condition is ANDed onto every source", () => {
    const p = policyOf({
      from: [{ source: { principals: ["a"] } }, { source: { principals: ["b"] } }],
      when: [{ key: "source.ip", values: ["1.1.1.1"] }],
    });
    const principals = p.principals as { andIds: { ids: Json[] } }[];
    expect(principals.map((x) => x.andIds.ids.length)).toEqual([2, 2]);
  });

  it("an empty rule matches every request", () => {
    expect(policyOf({})).toEqual({
      permissions: [{ andRules: { rules: [{ any: true }] } }],
      principals: [{ andIds: { ids: [{ any: true }] } }],
    });
  });
});
