/**
 * Builders of the authz tests: AuthorizationPolicies from their specs (through the shared model's
 * converter, as ingest stores them), the policies selecting the workload Istio's builder tests use,
 * and a proto3-JSON view of filters so expectations read as istiod's golden YAML does.
 */
import { type DescMessage, type MessageShape, toJson } from "@bufbuild/protobuf";
import {
  type AuthorizationPolicyModel,
  createSecurityPolicies,
  toAuthorizationPolicy,
  type WorkloadAuthorization,
} from "../../../../lib/registry/istio/security.ts";
import { envoyTypes } from "../../../support/pgv/index.ts";

/** A policy as a test writes it: metadata plus the spec as the API serves it. */
export interface PolicyInput {
  name: string;
  namespace?: string;
  annotations?: Record<string, string>;
  spec: unknown;
}

/** The model of one policy; `istio.io/dry-run: "true"` marks it a dry run. */
export function policy(p: PolicyInput): AuthorizationPolicyModel {
  const model = toAuthorizationPolicy({ name: p.name, namespace: p.namespace ?? "foo" }, p.spec);
  return p.annotations?.["istio.io/dry-run"] === "true" ? { ...model, dryRun: true } : model;
}

/** The workload of istiod's builder tests: namespace foo, app=httpbin version=v1. */
export const httpbin = { namespace: "foo", labels: { app: "httpbin", version: "v1" } };

/** The policies selecting httpbin, by action, oldest first (as SecurityPolicies answers). */
export function workloadPolicies(inputs: readonly PolicyInput[]): WorkloadAuthorization {
  return createSecurityPolicies([], inputs.map(policy), "istio-system").authorizationFor(httpbin);
}

/** One policy's rules as a WorkloadAuthorization holding just it. */
export function only(p: PolicyInput): WorkloadAuthorization {
  return workloadPolicies([p]);
}

/** proto3 JSON of a message, Any unpacked with every generated Envoy type. */
export function json<D extends DescMessage>(schema: D, m: MessageShape<D>): unknown {
  return toJson(schema, m, { registry: envoyTypes().registry });
}
