/**
 * istiod's authorization builder golden cases, ported: each file of golden/ holds the policies of
 * one case of pilot/pkg/security/authz/builder/builder_test.go (TestGenerator_GenerateHTTP and
 * GenerateTCP; its `source` names the istio/istio testdata it was converted from, YAML to JSON
 * unchanged) and the filters istiod generates for the workload foo/httpbin. The filters built
 * here must equal them as proto3 JSON, filter for filter, in order.
 * Not ported: the CUSTOM cases with extension providers (edgepilot's mesh config has none).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { FilterSchema } from "../../../../lib/gen/envoy/config/listener/v3/listener_components_pb.ts";
import { HttpFilterSchema } from "../../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import {
  buildHttpAuthzFilters,
  buildNetworkAuthzFilters,
  type TrustDomains,
} from "../../../../lib/resources/authz/index.ts";
import { envoyTypes } from "../../../support/pgv/index.ts";
import { json, type PolicyInput, workloadPolicies } from "./support.ts";

interface Golden {
  source: string;
  target: "http" | "tcp";
  trustDomains?: TrustDomains;
  policies: PolicyInput[];
  want: JsonValue[];
}

const dir = join(import.meta.dirname, "golden");
const cases = readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .map((f) => [f.replace(/\.json$/, ""), JSON.parse(readFileSync(join(dir, f), "utf8")) as Golden] as const);

describe("istiod's authz builder goldens", () => {
  it("has the ported cases", () => {
    expect(cases.length).toBe(24);
  });

  it.each(cases)("%s", (_name, g) => {
    const registry = envoyTypes().registry;
    const options = {
      policies: workloadPolicies(g.policies),
      trustDomains: g.trustDomains ?? (["cluster.local"] as const),
    };
    if (g.target === "tcp") {
      const got = buildNetworkAuthzFilters(options).map((f) => json(FilterSchema, f));
      expect(got).toEqual(g.want.map((w) => json(FilterSchema, fromJson(FilterSchema, w, { registry }))));
    } else {
      const got = buildHttpAuthzFilters(options).map((f) => json(HttpFilterSchema, f));
      expect(got).toEqual(
        g.want.map((w) => json(HttpFilterSchema, fromJson(HttpFilterSchema, w, { registry }))),
      );
    }
  });
});
