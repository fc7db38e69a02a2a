/**
 * httpRouteCheck and grpcRouteCheck against the Gateway API's own CEL test cases (kubernetes-sigs/
 * gateway-api v1.5.1 tests/cel: httproute_test.go, httproute_standard_test.go, grpcroute_test.go),
 * each put into a valid route: a valid route passes, each rule refuses with the CRD's message at
 * the field it sits on, and what the CRDs accept stays accepted.
 */
import { describe, expect, it } from "vitest";
import { grpcRouteCheck } from "../../../../lib/registry/gateway-api/validate-grpc-route.ts";
import { httpRouteCheck } from "../../../../lib/registry/gateway-api/validate-http-route.ts";

type Raw = Record<string, unknown>;
/** [name, rule or spec fields, undefined for valid, or [field, message substring]]. */
type Case = [string, Raw, [string, string]?];

const parent = { group: "gateway.networking.k8s.io", kind: "Gateway", name: "example" };
const meshParent = { group: "", kind: "Service", name: "reviews" };
const svc = (name = "reviews", port: number | null = 9080) => ({ name, ...(port && { port }) });

const route = (kind: string, spec: Raw): Raw => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind,
  metadata: { name: "r", namespace: "default" },
  spec: { parentRefs: [parent], hostnames: ["bookinfo.example.com"], ...spec },
});
const http = (spec: Raw) => httpRouteCheck(route("HTTPRoute", spec), "");
const grpc = (spec: Raw) => grpcRouteCheck(route("GRPCRoute", spec), "");
const rule = (r: Raw): Raw => ({ rules: [r] });
const r0 = "spec.rules[0]";

const verdict = (got: ReturnType<typeof http>, want?: [string, string]) => {
  if (!want) return expect(got).toBeUndefined();
  expect(got?.field).toBe(want[0]);
  expect(got?.message).toContain(want[1]);
};

const pathMatch = (type: string, value: string) =>
  rule({ matches: [{ path: { type, value } }], backendRefs: [svc()] });
const filter = (f: Raw, extra: Raw = {}) => rule({ filters: [f], ...extra });
const prefixRedirect = {
  type: "RequestRedirect",
  requestRedirect: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/foo" } },
};
const prefixRewrite = {
  type: "URLRewrite",
  urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/foo" } },
};
const twoMatches = [
  { path: { type: "PathPrefix", value: "/foo" } },
  { path: { type: "PathPrefix", value: "/bar" } },
];
const mirror = { backendRef: svc("mirror") };

const httpCases: Case[] = [
  [
    "a route with two weighted backends",
    rule({
      backendRefs: [
        { ...svc("v1"), weight: 90 },
        { ...svc("v2"), weight: 10 },
      ],
    }),
  ],
  ["a route without rules (older releases accept an empty list)", { rules: [] }],
  ["a route without spec fields but parentRefs", {}],
  // TestHTTPPathMatch
  [
    "a relative path",
    pathMatch("Exact", "foo"),
    [`${r0}.matches[0].path`, "value must be an absolute path and start with '/'"],
  ],
  [
    "a path ending /.",
    pathMatch("PathPrefix", "/foo/."),
    [`${r0}.matches[0].path`, "must not end with '/.'"],
  ],
  ["a path with /./", pathMatch("Exact", "/foo/./bar"), [`${r0}.matches[0].path`, "must not contain '/./'"]],
  ["a path with //", pathMatch("Exact", "/foo//bar"), [`${r0}.matches[0].path`, "must not contain '//'"]],
  [
    "a path with /../",
    pathMatch("Exact", "/foo/../bar"),
    [`${r0}.matches[0].path`, "must not contain '/../'"],
  ],
  [
    "a path with %2f",
    pathMatch("PathPrefix", "/foo%2fbar"),
    [`${r0}.matches[0].path`, "must not contain '%2f'"],
  ],
  ["a path with %2F", pathMatch("Exact", "/foo%2Fbar"), [`${r0}.matches[0].path`, "must not contain '%2F'"]],
  ["a path with #", pathMatch("Exact", "/foo#bar"), [`${r0}.matches[0].path`, "must not contain '#'"]],
  ["a path ending /..", pathMatch("Exact", "/foo/.."), [`${r0}.matches[0].path`, "must not end with '/..'"]],
  ["an unknown path type", pathMatch("FooBar", "/path"), [`${r0}.matches[0].path.type`, "unsupported value"]],
  [
    "a path with a bad character",
    pathMatch("Exact", "/foo?bar"),
    [`${r0}.matches[0].path`, "must only contain valid characters"],
  ],
  [
    "a path with a bad escape",
    pathMatch("PathPrefix", "/%GG"),
    [`${r0}.matches[0].path`, "must only contain valid characters"],
  ],
  ["a regex path may hold anything", pathMatch("RegularExpression", "/foo/[a-z]*/?#")],
  ["a valid escaped path", pathMatch("Exact", "/foo%20bar")],
  // TestBackendRequestMirror / backendRef port
  [
    "a Service backend without a port",
    rule({ backendRefs: [svc("reviews", null)] }),
    [`${r0}.backendRefs[0]`, "Must have port for Service reference"],
  ],
  [
    "a backend of another kind without a port",
    rule({ backendRefs: [{ group: "example.com", kind: "Bucket", name: "b" }] }),
  ],
  [
    "a mirror to a Service without a port",
    filter({ type: "RequestMirror", requestMirror: { backendRef: svc("m", null) } }),
    [`${r0}.filters[0].requestMirror.backendRef`, "Must have port for Service reference"],
  ],
  [
    "a mirror with percent and fraction",
    filter({ type: "RequestMirror", requestMirror: { ...mirror, percent: 10, fraction: { numerator: 1 } } }),
    [
      `${r0}.filters[0].requestMirror`,
      "Only one of percent or fraction may be specified in HTTPRequestMirrorFilter",
    ],
  ],
  [
    "a mirror fraction over 1",
    filter({
      type: "RequestMirror",
      requestMirror: { ...mirror, fraction: { numerator: 3, denominator: 2 } },
    }),
    [`${r0}.filters[0].requestMirror.fraction`, "numerator must be less than or equal to denominator"],
  ],
  [
    "a mirror fraction under the default 100",
    filter({ type: "RequestMirror", requestMirror: { ...mirror, fraction: { numerator: 50 } } }),
  ],
  // TestHTTPRouteFilterTypeMatchesField
  [
    "RequestHeaderModifier without its field",
    filter({ type: "RequestHeaderModifier" }),
    [
      `${r0}.filters[0]`,
      "filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type",
    ],
  ],
  [
    "RequestHeaderModifier with a mirror",
    filter({ type: "RequestHeaderModifier", requestHeaderModifier: {}, requestMirror: mirror }),
    [`${r0}.filters[0]`, "filter.requestMirror must be nil if the filter.type is not RequestMirror"],
  ],
  [
    "RequestMirror without its field",
    filter({ type: "RequestMirror" }),
    [`${r0}.filters[0]`, "filter.requestMirror must be specified for RequestMirror filter.type"],
  ],
  [
    "RequestRedirect without its field",
    filter({ type: "RequestRedirect" }),
    [`${r0}.filters[0]`, "filter.requestRedirect must be specified for RequestRedirect filter.type"],
  ],
  [
    "ExtensionRef without its field",
    filter({ type: "ExtensionRef" }),
    [`${r0}.filters[0]`, "filter.extensionRef must be specified for ExtensionRef filter.type"],
  ],
  [
    "CORS without its field",
    filter({ type: "CORS" }),
    [`${r0}.filters[0]`, "filter.cors must be specified for CORS filter.type"],
  ],
  [
    "URLRewrite without its field",
    filter({ type: "URLRewrite" }),
    [`${r0}.filters[0]`, "filter.urlRewrite must be specified for URLRewrite filter.type"],
  ],
  [
    "an ExternalAuth filter (experimental channel)",
    filter({ type: "ExternalAuth", externalAuth: { protocol: "HTTP", backendRef: svc(), http: {} } }),
  ],
  [
    "ExternalAuth without its field",
    filter({ type: "ExternalAuth" }),
    [`${r0}.filters[0]`, "filter.externalAuth must be specified for ExternalAuth filter.type"],
  ],
  [
    "a filter without a type",
    filter({ requestHeaderModifier: {} }),
    [`${r0}.filters[0].type`, "is required"],
  ],
  ["an unknown filter type", filter({ type: "Bogus" }), [`${r0}.filters[0].type`, "unsupported value"]],
  // TestHTTPRouteRule
  [
    "a redirect beside backendRefs",
    filter({ type: "RequestRedirect", requestRedirect: { statusCode: 301 } }, { backendRefs: [svc()] }),
    [r0, "RequestRedirect filter must not be used together with backendRefs"],
  ],
  [
    "a prefix rewrite with two matches",
    filter(prefixRewrite, { matches: twoMatches }),
    [
      r0,
      "When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified",
    ],
  ],
  [
    "a prefix rewrite on an Exact match",
    filter(prefixRewrite, { matches: [{ path: { type: "Exact", value: "/foo" } }] }),
    [r0, "When using URLRewrite filter"],
  ],
  ["a prefix rewrite on the default match", filter(prefixRewrite)],
  [
    "a prefix rewrite on a match without a path (defaulted PathPrefix)",
    filter(prefixRewrite, { matches: [{ method: "GET" }] }),
  ],
  [
    "a prefix redirect with two matches",
    filter(prefixRedirect, { matches: twoMatches }),
    [
      r0,
      "When using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified",
    ],
  ],
  [
    "a backend's prefix rewrite with two matches",
    rule({ matches: twoMatches, backendRefs: [{ ...svc(), filters: [prefixRewrite] }] }),
    [r0, "Within backendRefs, When using URLRewrite filter with path.replacePrefixMatch"],
  ],
  [
    "a backend's prefix redirect with two matches",
    rule({ matches: twoMatches, backendRefs: [{ ...svc(), filters: [prefixRedirect] }] }),
    [r0, "Within backendRefs, when using RequestRedirect filter with path.replacePrefixMatch"],
  ],
  [
    "a redirect and a rewrite",
    rule({ filters: [prefixRedirect, { type: "URLRewrite", urlRewrite: { hostname: "a.com" } }] }),
    [
      `${r0}.filters`,
      "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both",
    ],
  ],
  [
    "a repeated RequestRedirect",
    rule({
      filters: [
        { type: "RequestRedirect", requestRedirect: {} },
        { type: "RequestRedirect", requestRedirect: {} },
      ],
    }),
    [`${r0}.filters`, "RequestRedirect filter cannot be repeated"],
  ],
  [
    "ResponseHeaderModifier with a redirect",
    filter({ type: "ResponseHeaderModifier", responseHeaderModifier: {}, requestRedirect: {} }),
    [`${r0}.filters[0]`, "filter.requestRedirect must be nil if the filter.type is not RequestRedirect"],
  ],
  [
    "a repeated URLRewrite",
    rule({
      filters: [
        { type: "URLRewrite", urlRewrite: {} },
        { type: "URLRewrite", urlRewrite: {} },
      ],
    }),
    [`${r0}.filters`, "URLRewrite filter cannot be repeated"],
  ],
  [
    "a repeated RequestHeaderModifier on a backend",
    rule({
      backendRefs: [
        {
          ...svc(),
          filters: [
            { type: "RequestHeaderModifier", requestHeaderModifier: {} },
            { type: "RequestHeaderModifier", requestHeaderModifier: {} },
          ],
        },
      ],
    }),
    [`${r0}.backendRefs[0].filters`, "RequestHeaderModifier filter cannot be repeated"],
  ],
  [
    "129 matches across rules",
    {
      rules: Array.from({ length: 3 }, (_, i) => ({
        matches: Array.from({ length: i < 2 ? 64 : 1 }, () => ({ method: "GET" })),
      })),
    },
    ["spec.rules", "total number of matches across all rules in a route must be less than 128"],
  ],
  [
    "128 matches across rules",
    {
      rules: Array.from({ length: 2 }, () => ({
        matches: Array.from({ length: 64 }, () => ({ method: "GET" })),
      })),
    },
  ],
  // TestHTTPPathModifier
  [
    "ReplaceFullPath without its value",
    filter({ type: "URLRewrite", urlRewrite: { path: { type: "ReplaceFullPath" } } }),
    [
      `${r0}.filters[0].urlRewrite.path`,
      "replaceFullPath must be specified when type is set to 'ReplaceFullPath'",
    ],
  ],
  [
    "replaceFullPath with another type",
    filter({
      type: "URLRewrite",
      urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/a", replaceFullPath: "/b" } },
    }),
    [`${r0}.filters[0].urlRewrite.path`, "type must be 'ReplaceFullPath' when replaceFullPath is set"],
  ],
  [
    "ReplacePrefixMatch without its value",
    filter({ type: "RequestRedirect", requestRedirect: { path: { type: "ReplacePrefixMatch" } } }),
    [
      `${r0}.filters[0].requestRedirect.path`,
      "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'",
    ],
  ],
  [
    "replacePrefixMatch with another type",
    filter({
      type: "RequestRedirect",
      requestRedirect: { path: { type: "ReplaceFullPath", replaceFullPath: "/a", replacePrefixMatch: "/b" } },
    }),
    [
      `${r0}.filters[0].requestRedirect.path`,
      "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set",
    ],
  ],
  [
    "a 303 redirect (v1.5 statuses)",
    filter({ type: "RequestRedirect", requestRedirect: { statusCode: 303 } }),
  ],
  [
    "a 304 redirect",
    filter({ type: "RequestRedirect", requestRedirect: { statusCode: 304 } }),
    [`${r0}.filters[0].requestRedirect.statusCode`, "unsupported value"],
  ],
  // TestHTTPRouteCORS
  ["CORS from any origin", filter({ type: "CORS", cors: { allowOrigins: ["*"] } })],
  [
    "CORS from * and another origin",
    filter({ type: "CORS", cors: { allowOrigins: ["*", "https://xpto.com"] } }),
    [`${r0}.filters[0].cors.allowOrigins`, "AllowOrigins cannot contain '*' alongside other origins"],
  ],
  [
    "CORS from an origin without a scheme",
    filter({ type: "CORS", cors: { allowOrigins: ["https://a.com", "xpto.com"] } }),
    [`${r0}.filters[0].cors.allowOrigins[1]`, "must match"],
  ],
  ...[
    "https://xpto.com:notaport",
    "http://www.example.com/cart",
    "spiffe://www.example.com",
    "http://*bar.com",
    "http://bar.*.com",
  ].map(
    (o): Case => [
      `CORS from ${o}`,
      filter({ type: "CORS", cors: { allowOrigins: [o] } }),
      [`${r0}.filters[0].cors.allowOrigins[0]`, "must match"],
    ],
  ),
  [
    "CORS from a wildcard subdomain and port",
    filter({ type: "CORS", cors: { allowOrigins: ["https://*.example.com:8443"] } }),
  ],
  [
    "CORS with an unknown method",
    filter({ type: "CORS", cors: { allowMethods: ["BAZINGA"] } }),
    [`${r0}.filters[0].cors.allowMethods[0]`, "unsupported value"],
  ],
  [
    "CORS with * and a method",
    filter({ type: "CORS", cors: { allowMethods: ["GET", "*"] } }),
    [`${r0}.filters[0].cors.allowMethods`, "AllowMethods cannot contain '*' alongside other methods"],
  ],
  [
    "CORS with * and a header",
    filter({ type: "CORS", cors: { allowHeaders: ["*", "x-a"] } }),
    [`${r0}.filters[0].cors.allowHeaders`, "AllowHeaders cannot contain '*'"],
  ],
  [
    "a repeated CORS filter",
    rule({
      filters: [
        { type: "CORS", cors: {} },
        { type: "CORS", cors: {} },
      ],
    }),
    [`${r0}.filters`, "CORS filter cannot be repeated"],
  ],
  // HTTPRoute timeouts
  [
    "a backend timeout within the request timeout",
    rule({ timeouts: { request: "10s", backendRequest: "1s500ms" } }),
  ],
  [
    "a backend timeout beyond the request timeout",
    rule({ timeouts: { request: "1s", backendRequest: "1m" } }),
    [`${r0}.timeouts`, "backendRequest timeout cannot be longer than request timeout"],
  ],
  [
    "any backend timeout with no request timeout (0s)",
    rule({ timeouts: { request: "0s", backendRequest: "1h" } }),
  ],
  ["a timeout in days", rule({ timeouts: { request: "1d" } }), [`${r0}.timeouts.request`, "must match"]],
  // Schema
  [
    "a duplicate header match",
    rule({
      matches: [
        {
          headers: [
            { name: "a", value: "1" },
            { name: "a", value: "2" },
          ],
        },
      ],
    }),
    [`${r0}.matches[0].headers[1]`, "duplicate entries for key [name="],
  ],
  [
    "a header name with a space",
    rule({ matches: [{ headers: [{ name: "a b", value: "1" }] }] }),
    [`${r0}.matches[0].headers[0].name`, "must match"],
  ],
  [
    "a weight over 1000000",
    rule({ backendRefs: [{ ...svc(), weight: 1000001 }] }),
    [`${r0}.backendRefs[0].weight`, "0-1000000"],
  ],
  ["a wildcard hostname", { hostnames: ["*.example.com"] }],
  ["a hostname with a port", { hostnames: ["example.com:80"] }, ["spec.hostnames[0]", "must match"]],
  ["17 rules", { rules: Array.from({ length: 17 }, () => ({})) }, ["spec.rules", "at most 16 items"]],
  ["an upper-case rule name", rule({ name: "Rule" }), [`${r0}.name`, "must match"]],
];

const parentCases: [string, Raw[], string?][] = [
  [
    "duplicate parent refs without section name",
    [parent, parent],
    "sectionName must be unique when parentRefs includes 2 or more references to the same parent",
  ],
  [
    "duplicate parent refs with only one section name",
    [parent, { ...parent, sectionName: "foo" }],
    "sectionName must be specified when parentRefs includes 2 or more references to the same parent",
  ],
  [
    "duplicate parent refs with duplicate section names",
    [
      { ...parent, sectionName: "foo" },
      { ...parent, sectionName: "foo" },
    ],
    "sectionName must be unique",
  ],
  [
    "duplicate parent refs, one with the defaults spelled out",
    [{ name: "example" }, parent],
    "sectionName must be unique",
  ],
  ["valid single parentRef without sectionName", [parent]],
  ["valid single parentRef with sectionName", [{ ...parent, sectionName: "foo" }]],
  [
    "valid because duplicate parent refs with different section names",
    [
      { ...parent, sectionName: "foo" },
      { ...parent, sectionName: "bar" },
    ],
  ],
  [
    "valid because duplicate parent refs with different names",
    [
      { ...parent, sectionName: "foo" },
      { ...parent, name: "example2", sectionName: "foo" },
    ],
  ],
  [
    "valid because first parentRef has namespace while second doesn't",
    [{ ...parent, namespace: "test" }, parent],
  ],
  [
    "valid: a Service parent (GAMMA) and a Gateway of the same name",
    [{ group: "", kind: "Service", name: "example", port: 9080 }, parent],
  ],
  [
    "valid (experimental channel): one Service parent on two ports",
    [
      { ...meshParent, port: 9080 },
      { ...meshParent, port: 9090 },
    ],
  ],
  [
    "one Service parent twice on one port",
    [
      { ...meshParent, port: 9080 },
      { ...meshParent, port: 9080 },
    ],
    "sectionName must be unique",
  ],
  [
    "valid (standard channel): sections told apart, one with a port",
    [
      { ...parent, sectionName: "a", port: 80 },
      { ...parent, sectionName: "b" },
    ],
  ],
];

const grpcMethod = (method: Raw) => rule({ matches: [{ method }], backendRefs: [svc()] });
const grpcCases: Case[] = [
  [
    "a route with a method match and two weighted backends",
    rule({
      matches: [{ method: { service: "helloworld.Greeter", method: "SayHello" } }],
      backendRefs: [
        { ...svc("v1"), weight: 90 },
        { ...svc("v2"), weight: 10 },
      ],
    }),
  ],
  ["a method match with a method only", grpcMethod({ method: "Login" })],
  [
    "a method match with neither",
    grpcMethod({ type: "Exact" }),
    [`${r0}.matches[0].method`, "One or both of 'service' or 'method"],
  ],
  [
    "a regex service with no type (defaulted Exact)",
    grpcMethod({ service: ".*", method: ".*" }),
    [`${r0}.matches[0].method`, "service must only contain valid characters"],
  ],
  [
    "a regex method with no type",
    grpcMethod({ method: ".*" }),
    [
      `${r0}.matches[0].method`,
      "method must only contain valid characters (matching ^[A-Za-z_][A-Za-z_0-9]*$)",
    ],
  ],
  [
    "regexes with type RegularExpression",
    grpcMethod({ type: "RegularExpression", service: ".*", method: ".*" }),
  ],
  ["a case-insensitive service name", grpcMethod({ service: "Helloworld.GREETER" })],
  [
    "RequestHeaderModifier without its field",
    filter({ type: "RequestHeaderModifier" }),
    [
      `${r0}.filters[0]`,
      "filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type",
    ],
  ],
  [
    "ResponseHeaderModifier with a mirror",
    filter({ type: "ResponseHeaderModifier", responseHeaderModifier: {}, requestMirror: mirror }),
    [`${r0}.filters[0]`, "filter.requestMirror must be nil if the filter.type is not RequestMirror"],
  ],
  [
    "ExtensionRef without its field",
    filter({ type: "ExtensionRef" }),
    [`${r0}.filters[0]`, "filter.extensionRef must be specified for ExtensionRef filter.type"],
  ],
  [
    "an HTTP-only filter type",
    filter({ type: "URLRewrite", urlRewrite: {} }),
    [`${r0}.filters[0].type`, "unsupported value"],
  ],
  [
    "repeated header modifiers",
    rule({
      filters: [
        { type: "ResponseHeaderModifier", responseHeaderModifier: {} },
        { type: "ResponseHeaderModifier", responseHeaderModifier: {} },
      ],
    }),
    [`${r0}.filters`, "ResponseHeaderModifier filter cannot be repeated"],
  ],
  [
    "129 matches across rules",
    {
      rules: Array.from({ length: 3 }, (_, i) => ({
        matches: Array.from({ length: i < 2 ? 64 : 1 }, () => ({ method: { service: "a" } })),
      })),
    },
    ["spec.rules", "total number of matches across all rules in a route must be less than 128"],
  ],
  [
    "many rules without matches (none counted)",
    { rules: Array.from({ length: 16 }, () => ({ backendRefs: [svc()] })) },
  ],
  [
    "a Service backend without a port",
    rule({ backendRefs: [svc("reviews", null)] }),
    [`${r0}.backendRefs[0]`, "Must have port for Service reference"],
  ],
];

describe("httpRouteCheck", () => {
  it("accepts a minimal route and refuses a missing spec", () => {
    expect(http({})).toBeUndefined();
    expect(httpRouteCheck({ kind: "HTTPRoute", metadata: { name: "r" } }, "")).toEqual({
      field: "spec",
      message: "is required",
    });
  });
  it.each(httpCases)("%s", (_, spec, want) => verdict(http(spec), want));
  it.each(parentCases)("parentRefs: %s", (_, parentRefs, message) =>
    verdict(http({ parentRefs }), message ? ["spec.parentRefs", message] : undefined));
});

describe("grpcRouteCheck", () => {
  it.each(grpcCases)("%s", (_, spec, want) => verdict(grpc(spec), want));
  it.each(parentCases)("parentRefs: %s", (_, parentRefs, message) =>
    verdict(grpc({ parentRefs }), message ? ["spec.parentRefs", message] : undefined));
});
