/**
 * The proxyless filters through a real gRPC server's own code: grpc-js-xds 1.14's RBAC HTTP filter
 * (GRPC_XDS_EXPERIMENTAL_RBAC, registered by the package's register()) validates and parses each filter as an
 * xDS server listener would (validateTopLevelFilter, parseTopLevelFilterConfig), so a config it
 * refuses fails here; the parsed config then decides calls described as its server filter
 * describes them (peer certificate, addresses, :method/:authority/:path), showing DENY before
 * ALLOW and the fail-closed rule for what gRPC cannot evaluate.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import { Metadata } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RBAC_Action,
  RBACSchema as RbacRulesSchema,
} from "../../../../lib/gen/envoy/config/rbac/v3/rbac_pb.ts";
import { RBACSchema } from "../../../../lib/gen/envoy/extensions/filters/http/rbac/v3/rbac_pb.ts";
import {
  type HttpFilter,
  HttpFilterSchema,
} from "../../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { buildGrpcAuthzFilters, GRPC_RBAC_DENY_FILTER } from "../../../../lib/resources/authz/index.ts";
import { pgvViolations } from "../../../support/pgv/index.ts";
import { json, type PolicyInput, workloadPolicies } from "./support.ts";

/** What grpc-js-xds's RBAC server filter evaluates a call with. */
interface CallInfo {
  destinationIp: string;
  destinationPort: number;
  sourceIp: string;
  headers: Metadata;
  tls: boolean;
  peerCertificate: { subjectaltname?: string; subject: Record<string, string> } | null;
  urlPath: string;
}
type Parsed = { config: { apply(info: CallInfo): boolean } };
type HttpFilterModule = {
  validateTopLevelFilter(filter: unknown, client: boolean): boolean;
  parseTopLevelFilterConfig(encoded: unknown, client: boolean): Parsed | null;
};

let lib: HttpFilterModule;

const flagBefore = process.env.GRPC_XDS_EXPERIMENTAL_RBAC;

beforeAll(async () => {
  // The flag is read when grpc-js-xds's environment module loads, so set it before importing.
  process.env.GRPC_XDS_EXPERIMENTAL_RBAC = "true";
  const env = await import("@grpc/grpc-js-xds/build/src/environment.js");
  expect(env.EXPERIMENTAL_RBAC).toBe(true);
  // register() sets up every filter as an xDS server process does, RBAC included.
  const xds = await import("@grpc/grpc-js-xds");
  xds.register();
  lib = (await import("@grpc/grpc-js-xds/build/src/http-filter.js")) as unknown as HttpFilterModule;
});

afterAll(() => {
  if (flagBefore === undefined) delete process.env.GRPC_XDS_EXPERIMENTAL_RBAC;
  else process.env.GRPC_XDS_EXPERIMENTAL_RBAC = flagBefore;
});

const encoded = (any: Any) => ({ type_url: any.typeUrl, value: Buffer.from(any.value) });

const buildGrpc = (inputs: PolicyInput[]) =>
  buildGrpcAuthzFilters({ policies: workloadPolicies(inputs), trustDomains: ["cluster.local"] });

/** The filters of `inputs` as grpc-js parses them; fails the test if it refuses one. */
function parsedFilters(inputs: PolicyInput[]): { name: string; parsed: Parsed }[] {
  return buildGrpc(inputs).map((f: HttpFilter) => {
    expect(pgvViolations(HttpFilterSchema, f)).toEqual([]);
    expect(fromBinary(HttpFilterSchema, toBinary(HttpFilterSchema, f))).toEqual(f);
    if (f.configType.case !== "typedConfig") throw new Error("filter without typed_config");
    const any = f.configType.value;
    expect(
      lib.validateTopLevelFilter({ name: f.name, typed_config: encoded(any), is_optional: false }, false),
    ).toBe(true);
    const parsed = lib.parseTopLevelFilterConfig(encoded(any), false);
    expect(parsed, `grpc-js refused ${f.name}`).not.toBeNull();
    return { name: f.name, parsed: parsed as Parsed };
  });
}

interface Call {
  identity?: string;
  path?: string;
  sourceIp?: string;
  port?: number;
  headers?: Record<string, string>;
}

/** Whether the chain of filters lets the call through, each deciding in order as the server does. */
function allowed(filters: { parsed: Parsed }[], call: Call): boolean {
  const path = call.path ?? "/pkg.Svc/Get";
  const headers = new Metadata();
  for (const [k, v] of Object.entries(call.headers ?? {})) headers.set(k, v);
  headers.set(":method", "POST");
  headers.set(":authority", "svc.foo.svc.cluster.local:8080");
  headers.set(":path", path);
  const info: CallInfo = {
    destinationIp: "10.0.0.2",
    destinationPort: call.port ?? 8080,
    sourceIp: call.sourceIp ?? "10.0.0.1",
    headers,
    tls: call.identity !== undefined,
    peerCertificate: call.identity ? { subjectaltname: `URI:${call.identity}`, subject: {} } : null,
    urlPath: path,
  };
  return filters.every((f) => f.parsed.config.apply(info));
}

const client = "spiffe://cluster.local/ns/foo/sa/client";
const stranger = "spiffe://cluster.local/ns/bar/sa/other";
const policy = (name: string, spec: unknown, annotations?: Record<string, string>): PolicyInput => ({
  name,
  spec,
  ...(annotations && { annotations }),
});

describe("proxyless gRPC RBAC in grpc-js-xds", () => {
  it("no policy: no filter, every call is allowed", () => {
    expect(parsedFilters([])).toEqual([]);
  });

  it("ALLOW by namespace and method path; anything else is denied", () => {
    const f = parsedFilters([
      policy("allow", {
        rules: [
          { from: [{ source: { namespaces: ["foo"] } }], to: [{ operation: { paths: ["/pkg.Svc/*"] } }] },
        ],
      }),
    ]);
    expect(f.map((x) => x.name)).toEqual(["envoy.filters.http.rbac"]);
    expect(allowed(f, { identity: client })).toBe(true);
    expect(allowed(f, { identity: client, path: "/pkg.Admin/Drop" })).toBe(false);
    expect(allowed(f, { identity: stranger })).toBe(false);
    expect(allowed(f, {})).toBe(false);
  });

  it("DENY runs before ALLOW", () => {
    const f = parsedFilters([
      policy("allow", {
        rules: [{ from: [{ source: { principals: ["cluster.local/ns/foo/sa/client"] } }] }],
      }),
      policy("deny", { action: "DENY", rules: [{ to: [{ operation: { paths: ["/pkg.Svc/Delete"] } }] }] }),
    ]);
    expect(f.map((x) => x.name)).toEqual([GRPC_RBAC_DENY_FILTER, "envoy.filters.http.rbac"]);
    expect(allowed(f, { identity: client })).toBe(true);
    expect(allowed(f, { identity: client, path: "/pkg.Svc/Delete" })).toBe(false);
  });

  it("ALLOW without rules denies every call", () => {
    const f = parsedFilters([policy("none", {})]);
    expect(allowed(f, { identity: client })).toBe(false);
  });

  it("source.ip, headers and ports are evaluated", () => {
    const f = parsedFilters([
      policy("allow", {
        rules: [
          {
            from: [{ source: { ipBlocks: ["10.0.0.0/24"] } }],
            to: [{ operation: { ports: ["8080"] } }],
            when: [{ key: "request.headers[x-team]", values: ["blue"] }],
          },
        ],
      }),
    ]);
    expect(allowed(f, { headers: { "x-team": "blue" } })).toBe(true);
    expect(allowed(f, { headers: { "x-team": "red" } })).toBe(false);
    expect(allowed(f, { headers: { "x-team": "blue" }, sourceIp: "10.0.1.1" })).toBe(false);
    expect(allowed(f, { headers: { "x-team": "blue" }, port: 9090 })).toBe(false);
  });

  it("hosts and methods match the call's :authority and POST", () => {
    const allowTo = (operation: unknown) =>
      parsedFilters([policy("allow", { rules: [{ to: [{ operation }] }] })]);
    expect(allowed(allowTo({ hosts: ["SVC.foo.svc.cluster.local:*"] }), {})).toBe(true);
    expect(allowed(allowTo({ hosts: ["other.foo.svc.cluster.local:8080"] }), {})).toBe(false);
    expect(allowed(allowTo({ methods: ["POST"] }), {})).toBe(true);
    expect(allowed(allowTo({ notMethods: ["POST"] }), {})).toBe(false);
  });

  it("an ALLOW rule gRPC cannot evaluate (JWT claims) is dropped: it allows nothing", () => {
    const f = parsedFilters([
      policy("allow", { rules: [{ from: [{ source: { requestPrincipals: ["*"] } }] }] }),
    ]);
    expect(
      json(
        HttpFilterSchema,
        buildGrpc([
          policy("allow", { rules: [{ from: [{ source: { requestPrincipals: ["*"] } }] }] }),
        ])[0] as HttpFilter,
      ),
    ).toMatchObject({
      typedConfig: { rules: {} },
    });
    expect(allowed(f, { identity: client })).toBe(false);
  });

  it("a DENY rule keeps what gRPC can evaluate: the claim is dropped, the path still denied", () => {
    const f = parsedFilters([
      policy("deny", {
        action: "DENY",
        rules: [
          {
            to: [{ operation: { paths: ["/pkg.Svc/Delete"] } }],
            when: [{ key: "request.auth.claims[role]", values: ["guest"] }],
          },
        ],
      }),
    ]);
    expect(allowed(f, { identity: client, path: "/pkg.Svc/Delete" })).toBe(false);
    expect(allowed(f, { identity: client })).toBe(true);
  });

  it("a DENY path template (no uri_template in gRPC) widens to the rule's other fields", () => {
    const f = parsedFilters([
      policy("deny", {
        action: "DENY",
        rules: [
          { from: [{ source: { namespaces: ["bar"] } }], to: [{ operation: { paths: ["/pkg.Svc/{*}"] } }] },
        ],
      }),
    ]);
    expect(allowed(f, { identity: stranger, path: "/other.Svc/Get" })).toBe(false);
    expect(allowed(f, { identity: client })).toBe(true);
  });

  it("CUSTOM (gRPC has no ext_authz) denies what it matches", () => {
    const f = parsedFilters([
      policy("ext", {
        action: "CUSTOM",
        provider: { name: "opa" },
        rules: [{ to: [{ operation: { paths: ["/pkg.Svc/Put"] } }] }],
      }),
    ]);
    expect(f.map((x) => x.name)).toEqual([GRPC_RBAC_DENY_FILTER]);
    expect(allowed(f, { identity: client, path: "/pkg.Svc/Put" })).toBe(false);
    expect(allowed(f, { identity: client })).toBe(true);
  });

  it("AUDIT and dry-run policies are not enforced", () => {
    expect(parsedFilters([policy("audit", { action: "AUDIT", rules: [{}] })])).toEqual([]);
    expect(
      parsedFilters([policy("dry", { action: "DENY", rules: [{}] }, { "istio.io/dry-run": "true" })]),
    ).toEqual([]);
  });

  it("the parser does refuse what gRPC cannot run (a LOG action)", () => {
    const log = anyPack(
      RBACSchema,
      create(RBACSchema, { rules: create(RbacRulesSchema, { action: RBAC_Action.LOG }) }),
    );
    expect(lib.parseTopLevelFilterConfig(encoded(log), false)).toBeNull();
  });
});
