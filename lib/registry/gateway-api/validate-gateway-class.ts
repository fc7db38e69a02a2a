/**
 * GatewayClass (gateway.networking.k8s.io v1, v1beta1: one schema) as the standard-channel CRD
 * checks it. Its `controllerName` is immutable: a rule on updates, which the API server alone can
 * judge, since only it holds the old object.
 */
import type { Check } from "../check.ts";
import {
  domainPrefixedString,
  group,
  kind,
  namespace,
  obj,
  objectName,
  specOf,
  text,
} from "./validate-schema.ts";

const gatewayClassSpec: Check = obj(
  {
    controllerName: text({ min: 1, max: 253, pattern: domainPrefixedString }),
    description: text({ max: 64 }),
    parametersRef: obj({ group, kind, name: objectName, namespace }, ["group", "kind", "name"]),
  },
  ["controllerName"],
);

/** Checks a GatewayClass object's `spec` as the Gateway API's CRD does. */
export const gatewayClassCheck: Check = (o, path) => specOf(o, path, gatewayClassSpec);
