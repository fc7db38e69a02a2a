/**
 * The status writer's pieces that need no network (functions/node/relay/status-writer.ts): what it
 * accepts as the control plane's answer, and the collection paths it reads and writes under.
 * The loop itself runs in test/e2e/relay/relay-status.test.ts against the fake API server.
 */
import { describe, expect, it } from "vitest";
import { collectionPath, parseStatuses } from "../../../functions/node/relay/status-writer.ts";

const entry = {
  group: "gateway.networking.k8s.io",
  version: "v1",
  resource: "httproutes",
  kind: "HTTPRoute",
  namespace: "apps",
  name: "web",
  generation: 2,
  status: { parents: [] },
};

describe("parseStatuses", () => {
  const cases: [string, string, boolean][] = [
    ["a list of statuses", JSON.stringify({ statuses: [entry] }), true],
    ["an empty list", '{"statuses":[]}', true],
    [
      "a cluster-scoped entry (no namespace, no generation)",
      JSON.stringify({ statuses: [{ ...entry, namespace: undefined, generation: undefined }] }),
      true,
    ],
    ["not JSON", "{", false],
    ["no statuses", "{}", false],
    ["null", "null", false],
    ["an entry without a name", JSON.stringify({ statuses: [{ ...entry, name: 1 }] }), false],
    ["a status that is a list", JSON.stringify({ statuses: [{ ...entry, status: [] }] }), false],
    ["a fractional generation", JSON.stringify({ statuses: [{ ...entry, generation: 1.5 }] }), false],
    ["a null entry", '{"statuses":[null]}', false],
  ];
  for (const [name, text, ok] of cases)
    it(`${name} ▶ ${ok ? "accepted" : "refused"}`, () => {
      expect(parseStatuses(text) !== undefined).toBe(ok);
    });
});

describe("collectionPath", () => {
  it("namespaced, cluster-scoped and core paths, each piece escaped", () => {
    expect(collectionPath(entry)).toBe("/apis/gateway.networking.k8s.io/v1/namespaces/apps/httproutes");
    expect(collectionPath({ ...entry, namespace: undefined, resource: "gatewayclasses" })).toBe(
      "/apis/gateway.networking.k8s.io/v1/gatewayclasses",
    );
    expect(collectionPath({ ...entry, group: "", resource: "services", namespace: "a/b" })).toBe(
      "/api/v1/namespaces/a%2Fb/services",
    );
  });
});
