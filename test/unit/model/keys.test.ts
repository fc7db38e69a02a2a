import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ConfigKey, configKeyString, parseConfigKey } from "../../../lib/model/index.ts";

describe("parseConfigKey", () => {
  const cases: { text: string; want: ConfigKey | "throws" }[] = [
    {
      text: "ServiceEntry/ns/reviews.ns.svc.cluster.local",
      want: { kind: "ServiceEntry", namespace: "ns", name: "reviews.ns.svc.cluster.local" },
    },
    { text: "VirtualService/ns/a/b", want: { kind: "VirtualService", namespace: "ns", name: "a/b" } },
    { text: "Sidecar//", want: { kind: "Sidecar" as ConfigKey["kind"], namespace: "", name: "" } },
    { text: "ServiceEntry/ns", want: "throws" },
    { text: "/ns/name", want: "throws" },
    { text: "ServiceEntry", want: "throws" },
    { text: "", want: "throws" },
  ];
  for (const c of cases) {
    it(JSON.stringify(c.text), () => {
      if (c.want === "throws") expect(() => parseConfigKey(c.text)).toThrow("not a config key");
      else expect(parseConfigKey(c.text)).toEqual(c.want);
    });
  }

  it("reads back what configKeyString wrote, names with '/' included", () => {
    const segment = fc.string({ minLength: 1 }).filter((s) => !s.includes("/"));
    fc.assert(
      fc.property(segment, fc.string(), fc.string(), (kind, namespace, name) => {
        const key = { kind: kind as ConfigKey["kind"], namespace: namespace.replaceAll("/", ""), name };
        expect(parseConfigKey(configKeyString(key))).toEqual(key);
      }),
    );
  });
});
