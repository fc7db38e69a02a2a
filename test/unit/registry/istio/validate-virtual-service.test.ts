import { describe, expect, it } from "vitest";
import { virtualServiceCheck } from "../../../../lib/registry/istio/validate-virtual-service.ts";
import { httpRoute, virtualService } from "./builders.ts";

const check = (spec: Record<string, unknown>, ns = "default") =>
  virtualServiceCheck(virtualService(spec, { namespace: ns }), "object");

describe("virtualServiceCheck accepts what istiod accepts", () => {
  it.each([
    ["the builder", {}],
    [
      "weighted subsets",
      {
        http: [
          httpRoute({
            route: [
              { destination: { host: "reviews", subset: "v1" }, weight: 80 },
              {
                destination: {
                  host: "reviews.default.svc.cluster.local",
                  subset: "v2",
                  port: { number: 9080 },
                },
                weight: 20,
              },
            ],
          }),
        ],
      },
    ],
    [
      "a zero weight beside a positive one",
      {
        http: [
          httpRoute({
            route: [
              { destination: { host: "a" }, weight: 0 },
              { destination: { host: "b" }, weight: 1 },
            ],
          }),
        ],
      },
    ],
    [
      "matches on the gRPC method path and headers",
      {
        http: [
          httpRoute({
            match: [
              {
                uri: { prefix: "/helloworld.Greeter/" },
                headers: { "x-user": { exact: "jason" }, "x-v": { regex: "v[0-9]+" } },
              },
              { uri: { regex: "^/pkg\\.Svc/(Get|List).*$" }, ignoreUriCase: true, port: 9080 },
              { uri: { prefix: "" } },
              { headers: { present: {} } },
            ],
          }),
        ],
      },
    ],
    [
      "timeout, retries and fault",
      {
        http: [
          httpRoute({
            timeout: "1.5s",
            retries: { attempts: 3, perTryTimeout: "100ms", retryOn: "unavailable,cancelled,503,+502,5xx" },
            fault: {
              abort: { grpcStatus: "UNAVAILABLE", percentage: { value: 50 } },
              delay: { fixedDelay: "2s", percent: 10 },
            },
          }),
        ],
      },
    ],
    ["retries disabled", { http: [httpRoute({ retries: { attempts: 0 } })] }],
    ["a redirect", { http: [{ redirect: { uri: "/v2" } }] }],
    ["a direct response", { http: [{ directResponse: { status: 503, body: { string: "down" } } }] }],
    ["gateways with mesh and another", { gateways: ["mesh", "istio-system/ingress"] }],
    ["a gateway-bound VirtualService for *", { gateways: ["istio-system/ingress"], hosts: ["*"] }],
    ["an IP host", { hosts: ["10.0.0.1"] }],
    ["exportTo . and another namespace", { exportTo: [".", "other"] }],
    ["a delegate (no hosts)", { hosts: [] }],
    ["a root route with a delegate", { http: [{ delegate: { name: "d", namespace: "x" } }] }],
    ["tcp only", { http: [], tcp: [{ route: [{ destination: { host: "db" } }] }] }],
    [
      "a deprecated delay percent over 100 (istiod checks only percentage)",
      { http: [httpRoute({ fault: { delay: { fixedDelay: "1s", percent: 200 } } })] },
    ],
    [
      "upper-case hosts, gateways and subsets",
      {
        hosts: ["Reviews.Example.com"],
        gateways: ["NS/GW"],
        http: [{ route: [{ destination: { host: "Reviews", subset: "V1" } }] }],
      },
    ],
    ["a partial wildcard host", { hosts: ["*reviews.example.com"] }],
  ])("%s", (_, spec) => expect(check(spec)).toBeUndefined());
});

describe("virtualServiceCheck refuses what istiod refuses, naming the field", () => {
  const http = (r: Record<string, unknown>) => ({ http: [httpRoute(r)] });
  it.each([
    [
      "a negative weight",
      http({
        route: [
          { destination: { host: "a" }, weight: 50 },
          { destination: { host: "b" }, weight: -1 },
        ],
      }),
      "object.spec.http[0].route[1].weight",
      "weight -1 < 0",
    ],
    [
      "weights that sum to 0",
      http({ route: [{ destination: { host: "a" } }, { destination: { host: "b" } }] }),
      "object.spec.http[0].route",
      "total destination weight = 0",
    ],
    [
      "a regex RE2 refuses (lookahead)",
      http({ match: [{ uri: { regex: "(?=/a)" } }] }),
      "object.spec.http[0].match[0].uri.regex",
      "RE2",
    ],
    [
      "a header regex with a backreference",
      http({ match: [{ headers: { "x-a": { regex: "(a)\\1" } } }] }),
      'object.spec.http[0].match[0].headers["x-a"].regex',
      "invalid escape",
    ],
    [
      "a regex nothing compiles",
      http({ match: [{ uri: { regex: "(" } }] }),
      "object.spec.http[0].match[0].uri.regex",
      "missing closing",
    ],
    [
      "an empty header prefix",
      http({ match: [{ headers: { a: { prefix: "" } } }] }),
      "object.spec.http[0].match[0].headers.a.prefix",
      "should not be empty",
    ],
    [
      "a bad header name",
      http({ match: [{ headers: { "x y": { exact: "1" } } }] }),
      'object.spec.http[0].match[0].headers["x y"]',
      "not a valid header name",
    ],
    [
      "neither route nor redirect nor directResponse",
      { http: [{ timeout: "1s" }] },
      "object.spec.http[0].route",
      "is required",
    ],
    [
      "route and redirect",
      http({ redirect: { uri: "/x" } }),
      "object.spec.http[0].route",
      "both route and redirect",
    ],
    [
      "a subset that is not a DNS label",
      http({ route: [{ destination: { host: "a", subset: "V_1" } }] }),
      "object.spec.http[0].route[0].destination.subset",
      "subset name is invalid",
    ],
    [
      "destination host *",
      http({ route: [{ destination: { host: "*" } }] }),
      "object.spec.http[0].route[0].destination.host",
      "invalid destination host",
    ],
    [
      "a destination port 0",
      http({ route: [{ destination: { host: "a", port: { number: 70000 } } }] }),
      "object.spec.http[0].route[0].destination.port.number",
      "port number",
    ],
    [
      "no destination",
      http({ route: [{ weight: 1 }] }),
      "object.spec.http[0].route[0].destination",
      "destination is required",
    ],
    ["host * on the mesh", { hosts: ["*"] }, "object.spec.hosts[0]", "not allowed"],
    ["a bad host", { hosts: ["Re_views"] }, "object.spec.hosts[0]", 'label "Re_views" invalid'],
    [
      "duplicate hosts by wildcard",
      { hosts: ["*.example.com", "a.example.com"] },
      "object.spec.hosts[1]",
      "duplicate hosts",
    ],
    ["no routes at all", { http: [] }, "object.spec", "http, tcp or tls"],
    ["a bad timeout", http({ timeout: "1d" }), "object.spec.http[0].timeout", "unknown unit"],
    ["a zero timeout", http({ timeout: "0s" }), "object.spec.http[0].timeout", "greater than 1ms"],
    [
      "a sub-ms perTryTimeout",
      http({ retries: { attempts: 1, perTryTimeout: "1.5ms" } }),
      "object.spec.http[0].retries.perTryTimeout",
      "ms precision",
    ],
    [
      "an unknown retryOn",
      http({ retries: { attempts: 1, retryOn: "5xx,bogus" } }),
      "object.spec.http[0].retries.retryOn",
      '"bogus" is not a valid retryOn',
    ],
    [
      "a retryOn code Go does not know",
      http({ retries: { attempts: 1, retryOn: "306" } }),
      "object.spec.http[0].retries.retryOn",
      "not a valid retryOn",
    ],
    [
      "a retryOn with a space",
      http({ retries: { attempts: 1, retryOn: "5xx, reset" } }),
      "object.spec.http[0].retries.retryOn",
      "not a valid retryOn",
    ],
    [
      "retry settings with 0 attempts",
      http({ retries: { retryOn: "5xx" } }),
      "object.spec.http[0].retries.attempts",
      "attempts are set to 0",
    ],
    [
      "negative attempts",
      http({ retries: { attempts: -1 } }),
      "object.spec.http[0].retries.attempts",
      "cannot be negative",
    ],
    [
      "a fault percentage over 100",
      http({ fault: { abort: { httpStatus: 503, percentage: { value: 101 } } } }),
      "object.spec.http[0].fault.abort.percentage.value",
      "[0.0001, 100.0]",
    ],
    [
      "a fault percentage below 0.0001",
      http({ fault: { delay: { fixedDelay: "1s", percentage: { value: 0.00001 } } } }),
      "object.spec.http[0].fault.delay.percentage.value",
      "[0.0001, 100.0]",
    ],
    [
      "an unknown gRPC status",
      http({ fault: { abort: { grpcStatus: "BOGUS" } } }),
      "object.spec.http[0].fault.abort.grpcStatus",
      "not supported",
    ],
    [
      "an HTTP status out of range",
      http({ fault: { abort: { httpStatus: 700 } } }),
      "object.spec.http[0].fault.abort.httpStatus",
      "200-599",
    ],
    ["an empty fault", http({ fault: {} }), "object.spec.http[0].fault", "abort and/or a delay"],
    [
      "an exponential delay",
      http({ fault: { delay: { exponentialDelay: "1s" } } }),
      "object.spec.http[0].fault.delay.exponentialDelay",
      "not supported yet",
    ],
    ["exportTo ~", { exportTo: ["~"] }, "object.spec.exportTo[0]", "not allowed"],
    ["exportTo * with others", { exportTo: ["*", "a"] }, "object.spec.exportTo", "public (*)"],
    [
      "exportTo . and its own namespace",
      { exportTo: [".", "default"] },
      "object.spec.exportTo[1]",
      "duplicate entries",
    ],
    ["a bad gateway name", { gateways: ["ns/Ba_d"] }, "object.spec.gateways[0]", "gateway name"],
    ["a delegate with gateways", { hosts: [], gateways: ["mesh"] }, "object.spec.gateways", "delegate"],
    [
      "a redirect without target",
      { http: [{ redirect: {} }] },
      "object.spec.http[0].redirect",
      "must specify",
    ],
    [
      "a direct response status",
      { http: [{ directResponse: { status: 100 } }] },
      "object.spec.http[0].directResponse.status",
      "200-599",
    ],
    [
      "a JWT claim route on the mesh",
      http({ match: [{ headers: { "@request.auth.claims.sub": { exact: "a" } } }] }),
      'object.spec.http[0].match[0].headers["@request.auth.claims.sub"]',
      "gateways",
    ],
    [
      "a direct response body over 1 MiB",
      { http: [{ directResponse: { status: 200, body: { string: "x".repeat(1024 * 1024 + 1) } } }] },
      "object.spec.http[0].directResponse.body",
      "1MB",
    ],
    ["a null http route", { http: [null] }, "object.spec.http[0]", "may not be null"],
    [
      "two string match kinds",
      http({ match: [{ uri: { exact: "/a", prefix: "/b" } }] }),
      "object.spec.http[0].match[0].uri",
      "only one of",
    ],
  ])("%s", (_, spec, field, why) =>
    expect(check(spec)).toEqual({ field, message: expect.stringContaining(why) }));

  it("requires a spec", () =>
    expect(virtualServiceCheck({ kind: "VirtualService", metadata: {} }, "object")).toEqual({
      field: "object.spec",
      message: "is required",
    }));
});
