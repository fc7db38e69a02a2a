import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  DeltaDiscoveryRequestSchema,
  ResourceLocatorSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { checkDeltaRequest, defaultAdsLimits } from "../../../lib/xds/delta-limits.ts";

const limits = { ...defaultAdsLimits, maxNamesPerRequest: 3, maxInitialVersions: 2, maxSubscribedNames: 4 };
const names = (n: number, prefix = "n") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const check = (o: MessageInitShape<typeof DeltaDiscoveryRequestSchema>, subscribed: string[] = []) =>
  checkDeltaRequest(create(DeltaDiscoveryRequestSchema, o), limits, new Set(subscribed));

describe("checkDeltaRequest", () => {
  const cases: {
    name: string;
    req: MessageInitShape<typeof DeltaDiscoveryRequestSchema>;
    subscribed?: string[];
    code?: string;
    message?: RegExp;
  }[] = [
    { name: "a plain subscription", req: { typeUrl: TypeUrl.endpoint, resourceNamesSubscribe: names(3) } },
    { name: "an ACK", req: { typeUrl: TypeUrl.cluster, responseNonce: "n1" } },
    {
      name: "an empty type_url",
      req: { resourceNamesSubscribe: ["a"] },
      code: "invalid-argument",
      message: /type_url is empty.*envoy\.config\.cluster\.v3\.Cluster/,
    },
    {
      name: "a type we do not serve",
      req: { typeUrl: "type.googleapis.com/envoy.service.runtime.v3.Runtime" },
      code: "invalid-argument",
      message:
        /"type\.googleapis\.com\/envoy\.service\.runtime\.v3\.Runtime" is not served.*RouteConfiguration/,
    },
    {
      name: "resource locators",
      req: {
        typeUrl: TypeUrl.route,
        resourceLocatorsSubscribe: [create(ResourceLocatorSchema, { name: "r" })],
      },
      code: "invalid-argument",
      message: /resource_locators.*not supported/,
    },
    {
      name: "too many names (subscribe + unsubscribe)",
      req: {
        typeUrl: TypeUrl.endpoint,
        resourceNamesSubscribe: names(2),
        resourceNamesUnsubscribe: names(2, "u"),
      },
      code: "resource-exhausted",
      message: /names 4 resources.*at most 3.*split the change/,
    },
    {
      name: "too many initial versions",
      req: { typeUrl: TypeUrl.cluster, initialResourceVersions: { a: "1", b: "1", c: "1" } },
      code: "resource-exhausted",
      message: /initial_resource_versions lists 3.*at most 2/,
    },
    {
      name: "a stream subscribing beyond its limit",
      req: { typeUrl: TypeUrl.endpoint, resourceNamesSubscribe: ["x", "y"] },
      subscribed: names(3),
      code: "resource-exhausted",
      message: /would subscribe to 5 .*at most 4/,
    },
    {
      name: "re-subscribing names already counted",
      req: { typeUrl: TypeUrl.endpoint, resourceNamesSubscribe: ["n0", "n1", "x"] },
      subscribed: names(3),
    },
  ];
  for (const c of cases) {
    it(c.code ? `refuses ${c.name}` : `accepts ${c.name}`, () => {
      const problem = check(c.req, c.subscribed);
      if (!c.code) return expect(problem).toBeUndefined();
      expect(problem?.code).toBe(c.code);
      expect(problem?.message).toMatch(c.message ?? /./);
    });
  }
});
