import { describe, expect, it } from "vitest";
import type { LabelSelector } from "../../../../lib/registry/kube/records.ts";
import {
  matchesSelector,
  namespaceSelected,
  parseDiscoverySelectors,
  validateDiscoverySelectors,
} from "../../../../lib/registry/kube/selectors.ts";

const nsLabels = {
  "istio-injection": "enabled",
  "kubernetes.io/metadata.name": "bookinfo",
  team: "storefront",
};

describe("matchesSelector", () => {
  const cases: { name: string; selector: LabelSelector; want: boolean }[] = [
    { name: "empty selector matches everything", selector: {}, want: true },
    { name: "empty parts match everything", selector: { matchLabels: {}, matchExpressions: [] }, want: true },
    { name: "matchLabels equal", selector: { matchLabels: { team: "storefront" } }, want: true },
    { name: "matchLabels other value", selector: { matchLabels: { team: "payments" } }, want: false },
    { name: "matchLabels missing key", selector: { matchLabels: { env: "prod" } }, want: false },
    {
      name: "matchLabels all must match",
      selector: { matchLabels: { team: "storefront", env: "prod" } },
      want: false,
    },
    {
      name: "In: value listed",
      selector: { matchExpressions: [{ key: "team", operator: "In", values: ["a", "storefront"] }] },
      want: true,
    },
    {
      name: "In: value not listed",
      selector: { matchExpressions: [{ key: "team", operator: "In", values: ["a"] }] },
      want: false,
    },
    {
      name: "In: key absent",
      selector: { matchExpressions: [{ key: "env", operator: "In", values: ["prod"] }] },
      want: false,
    },
    {
      name: "NotIn: value listed",
      selector: { matchExpressions: [{ key: "team", operator: "NotIn", values: ["storefront"] }] },
      want: false,
    },
    {
      name: "NotIn: value not listed",
      selector: { matchExpressions: [{ key: "team", operator: "NotIn", values: ["a"] }] },
      want: true,
    },
    {
      name: "NotIn: key absent matches",
      selector: { matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }] },
      want: true,
    },
    {
      name: "Exists",
      selector: { matchExpressions: [{ key: "istio-injection", operator: "Exists" }] },
      want: true,
    },
    {
      name: "Exists: absent",
      selector: { matchExpressions: [{ key: "env", operator: "Exists" }] },
      want: false,
    },
    {
      name: "DoesNotExist: absent",
      selector: { matchExpressions: [{ key: "env", operator: "DoesNotExist" }] },
      want: true,
    },
    {
      name: "DoesNotExist: present",
      selector: { matchExpressions: [{ key: "team", operator: "DoesNotExist" }] },
      want: false,
    },
    {
      name: "matchLabels and matchExpressions both needed: both hold",
      selector: {
        matchLabels: { team: "storefront" },
        matchExpressions: [{ key: "istio-injection", operator: "Exists" }],
      },
      want: true,
    },
    {
      name: "matchLabels and matchExpressions both needed: one fails",
      selector: {
        matchLabels: { team: "storefront" },
        matchExpressions: [{ key: "env", operator: "Exists" }],
      },
      want: false,
    },
    {
      name: "an Object.prototype key is not a label",
      selector: { matchExpressions: [{ key: "constructor", operator: "Exists" }] },
      want: false,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(matchesSelector(nsLabels, c.selector)).toBe(c.want);
    });
  }

  it("In matches an empty label value when listed", () => {
    expect(
      matchesSelector({ tier: "" }, { matchExpressions: [{ key: "tier", operator: "In", values: [""] }] }),
    ).toBe(true);
  });
});

describe("namespaceSelected", () => {
  const cases: { name: string; selectors: LabelSelector[]; want: boolean }[] = [
    { name: "no selectors ▶ every namespace", selectors: [], want: true },
    { name: "one matching selector", selectors: [{ matchLabels: { team: "storefront" } }], want: true },
    {
      name: "no selector matches",
      selectors: [{ matchLabels: { team: "x" } }, { matchLabels: { env: "y" } }],
      want: false,
    },
    {
      name: "any selector matching is enough",
      selectors: [{ matchLabels: { team: "x" } }, { matchLabels: { "istio-injection": "enabled" } }],
      want: true,
    },
    {
      name: "an empty selector selects everything",
      selectors: [{ matchLabels: { team: "x" } }, {}],
      want: true,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(namespaceSelected(nsLabels, c.selectors)).toBe(c.want);
    });
  }
});

describe("parseDiscoverySelectors accepts", () => {
  const cases: { name: string; json: string; want: LabelSelector[] }[] = [
    { name: "an empty list", json: "[]", want: [] },
    { name: "null (no selectors)", json: "null", want: [] },
    { name: "an empty selector", json: "[{}]", want: [{}] },
    {
      name: "matchLabels, keys sorted",
      json: '[{"matchLabels":{"team":"storefront","istio-injection":"enabled"}}]',
      want: [{ matchLabels: { "istio-injection": "enabled", team: "storefront" } }],
    },
    {
      name: "every operator; values sorted and unique; null parts dropped",
      json: JSON.stringify([
        {
          matchLabels: null,
          matchExpressions: [
            { key: "env", operator: "In", values: ["prod", "dev", "prod"] },
            { key: "example.com/tier", operator: "NotIn", values: [""] },
            { key: "istio-injection", operator: "Exists" },
            { key: "legacy", operator: "DoesNotExist", values: [] },
          ],
        },
      ]),
      want: [
        {
          matchExpressions: [
            { key: "env", operator: "In", values: ["dev", "prod"] },
            { key: "example.com/tier", operator: "NotIn", values: [""] },
            { key: "istio-injection", operator: "Exists" },
            { key: "legacy", operator: "DoesNotExist" },
          ],
        },
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(parseDiscoverySelectors(c.json)).toEqual({ ok: true, selectors: c.want });
    });
  }
});

describe("parseDiscoverySelectors rejects, saying what and where", () => {
  const expr = (e: unknown) => JSON.stringify([{}, { matchExpressions: [e] }]);
  const cases: { name: string; json: string; error: string }[] = [
    { name: "not JSON", json: "[{", error: "discoverySelectors: not valid JSON" },
    { name: "not a list", json: '{"matchLabels":{}}', error: "discoverySelectors: must be a list" },
    {
      name: "a null selector",
      json: "[null]",
      error: "discoverySelectors[0]: must be a label selector object",
    },
    {
      name: "an unknown field",
      json: '[{"matchLabel":{"a":"b"}}]',
      error: "discoverySelectors[0].matchLabel: unknown field",
    },
    {
      name: "operator not one of the four",
      json: expr({ key: "team", operator: "in", values: ["a"] }),
      error:
        'discoverySelectors[1].matchExpressions[0].operator: "in" is not one of In, NotIn, Exists, DoesNotExist',
    },
    {
      name: "operator missing",
      json: expr({ key: "team", values: ["a"] }),
      error: "discoverySelectors[1].matchExpressions[0].operator: undefined is not one of",
    },
    {
      name: "In without values",
      json: expr({ key: "team", operator: "In" }),
      error: "discoverySelectors[1].matchExpressions[0].values: must be non-empty when operator is In",
    },
    {
      name: "NotIn with an empty list",
      json: expr({ key: "team", operator: "NotIn", values: [] }),
      error: "discoverySelectors[1].matchExpressions[0].values: must be non-empty when operator is NotIn",
    },
    {
      name: "Exists with values",
      json: expr({ key: "team", operator: "Exists", values: ["a"] }),
      error: "discoverySelectors[1].matchExpressions[0].values: must be empty when operator is Exists",
    },
    {
      name: "DoesNotExist with values",
      json: expr({ key: "team", operator: "DoesNotExist", values: ["a"] }),
      error: "discoverySelectors[1].matchExpressions[0].values: must be empty when operator is DoesNotExist",
    },
    {
      name: "a value that is not a string",
      json: expr({ key: "team", operator: "In", values: [1] }),
      error: "discoverySelectors[1].matchExpressions[0].values[0]: label value must be a string",
    },
    {
      name: "an invalid label value",
      json: expr({ key: "team", operator: "In", values: ["bad value"] }),
      error: 'discoverySelectors[1].matchExpressions[0].values[0]: "bad value" is not a valid label value',
    },
    {
      name: "an invalid key",
      json: expr({ key: "-team", operator: "Exists" }),
      error: 'discoverySelectors[1].matchExpressions[0].key: "-team" is not a valid label key',
    },
    {
      name: "a key with an invalid prefix",
      json: expr({ key: "Example.com/team", operator: "Exists" }),
      error: 'discoverySelectors[1].matchExpressions[0].key: "Example.com/team" is not a valid label key',
    },
    {
      name: "a key with two slashes",
      json: expr({ key: "a/b/c", operator: "Exists" }),
      error: 'discoverySelectors[1].matchExpressions[0].key: "a/b/c" is not a valid label key',
    },
    {
      name: "a key over 63 characters",
      json: expr({ key: "k".repeat(64), operator: "Exists" }),
      error: "discoverySelectors[1].matchExpressions[0].key:",
    },
    {
      name: "an unknown requirement field",
      json: expr({ key: "team", operator: "Exists", value: "a" }),
      error: "discoverySelectors[1].matchExpressions[0].value: unknown field",
    },
    {
      name: "matchExpressions not a list",
      json: '[{"matchExpressions":{"key":"a"}}]',
      error: "discoverySelectors[0].matchExpressions: must be a list",
    },
    {
      name: "a matchLabels value that is not a string",
      json: '[{"matchLabels":{"team":true}}]',
      error: 'discoverySelectors[0].matchLabels["team"]: label value must be a string',
    },
    {
      name: "an invalid matchLabels key",
      json: '[{"matchLabels":{"bad key":"x"}}]',
      error: 'discoverySelectors[0].matchLabels: "bad key" is not a valid label key',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = parseDiscoverySelectors(c.json);
      expect(got.ok).toBe(false);
      if (!got.ok) expect(got.error).toContain(c.error);
    });
  }

  it("validateDiscoverySelectors takes a decoded value", () => {
    expect(validateDiscoverySelectors([{ matchLabels: { a: "b" } }])).toEqual({
      ok: true,
      selectors: [{ matchLabels: { a: "b" } }],
    });
    expect(validateDiscoverySelectors("x")).toEqual({
      ok: false,
      error: "discoverySelectors: must be a list of label selectors",
    });
  });

  it("a selector that parses selects what it says", () => {
    const got = parseDiscoverySelectors(
      '[{"matchExpressions":[{"key":"team","operator":"In","values":["storefront"]}]}]',
    );
    expect(got.ok && namespaceSelected(nsLabels, got.selectors)).toBe(true);
    expect(got.ok && namespaceSelected({ team: "payments" }, got.selectors)).toBe(false);
  });
});
