import { describe, expect, it } from "vitest";
import {
  dns1035Label,
  dns1123Label,
  dns1123Subdomain,
  fullyQualifiedDomainName,
  ianaPortName,
  labelValue,
  type NameRule,
  qualifiedName,
} from "../../../lib/registry/names.ts";

const table: [string, NameRule, string[], string[]][] = [
  [
    "DNS-1035 label",
    dns1035Label,
    ["a", "reviews", "a-1", "a".repeat(63)],
    ["1a", "a.b", "a-", "A", "a_b", "a".repeat(64), "a/b"],
  ],
  [
    "DNS-1123 label",
    dns1123Label,
    ["1a", "bookinfo", "a".repeat(63)],
    ["a.b", "-a", "a-", "A", "a".repeat(64)],
  ],
  [
    "DNS-1123 subdomain",
    dns1123Subdomain,
    ["a.b", "1.2.3.4", "ip-10-0-0-1.ec2.internal", `${"a".repeat(63)}.${"b".repeat(63)}`, "a".repeat(253)],
    ["a..b", ".a", "a.", "a_b", "A.b", "a/b", "a".repeat(254)],
  ],
  [
    "qualified name",
    qualifiedName,
    ["app", "App.Name_1", "kubernetes.io/service-name", "example.com/MyName", "a".repeat(63)],
    ["", "a/b/c", "/a", "example.com/", "Example.com/a", "-a", "a_", "a".repeat(64), "bad key"],
  ],
  [
    "label value",
    labelValue,
    ["", "v1", "us-east-1a", "A.b_c-d", "a".repeat(63)],
    ["-a", "a-", "a b", "a/b", "a".repeat(64)],
  ],
  [
    "IANA_SVC_NAME",
    ianaPortName,
    ["http", "grpc-web", "h2c", "a1"],
    ["123", "Http", "a--b", "-a", "a-", "a_b", "a".repeat(16)],
  ],
  [
    "FQDN",
    fullyQualifiedDomainName,
    ["api.example.com", "api.example.com."],
    ["api", "api..example", "API.example.com", "a_b.example.com"],
  ],
];

describe("Kubernetes name rules", () => {
  for (const [name, rule, good, bad] of table) {
    it(`${name}: accepts ${good.length}, refuses ${bad.length}`, () => {
      for (const s of good) expect(rule(s), s).toBeUndefined();
      for (const s of bad) expect(rule(s), s).toBeTypeOf("string");
    });
  }
});
