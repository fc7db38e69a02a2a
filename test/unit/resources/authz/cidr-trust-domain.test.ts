/**
 * The helpers under the builder: addresses as istiod's AddrStrToCidrRange writes them (Go's
 * canonical address text, a bare address as /32 or /128, host bits kept) and istiod's trust-domain
 * bundle (ReplaceTrustDomainAliases, ExpandTrustDomainAliases).
 */
import { describe, expect, it } from "vitest";
import { cidrRange } from "../../../../lib/resources/authz/cidr.ts";
import {
  expandTrustDomainAliases,
  replaceTrustDomainAliases,
} from "../../../../lib/resources/authz/trust-domain.ts";

describe("cidrRange", () => {
  it.each([
    ["10.1.2.3", "10.1.2.3", 32],
    ["10.1.2.3/8", "10.1.2.3", 8],
    ["0.0.0.0/0", "0.0.0.0", 0],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1", 128],
    ["2001:db8:0:0:1:0:0:1/64", "2001:db8::1:0:0:1", 64],
    ["::", "::", 128],
    ["::1", "::1", 128],
    ["1:0:0:2:0:0:0:3", "1:0:0:2::3", 128],
    ["1:0:2:0:3:0:4:0", "1:0:2:0:3:0:4:0", 128],
  ])("%s ▶ %s/%i", (text, prefix, bits) => {
    expect(cidrRange(text)).toMatchObject({ addressPrefix: prefix, prefixLen: bits });
  });

  it.each([
    "",
    "10.0.0.256",
    "10.0.0.1/33",
    "10.0.0.1/08",
    "::1/129",
    "010.0.0.1",
    "host.example",
    "10.0.0.0/",
  ])("%j is refused", (text) => {
    expect(cidrRange(text)).toBeInstanceOf(Error);
  });
});

describe("trust-domain aliases", () => {
  it.each([
    [
      "cluster.local stands for every trust domain",
      ["td1", "td2"],
      ["cluster.local/ns/a/sa/b"],
      ["td1/ns/a/sa/b", "td2/ns/a/sa/b"],
    ],
    [
      "an alias stands for every trust domain",
      ["td1", "td2"],
      ["td2/ns/a/sa/b"],
      ["td1/ns/a/sa/b", "td2/ns/a/sa/b"],
    ],
    ["a foreign trust domain stays", ["td1", "td2"], ["other/ns/a/sa/b"], ["other/ns/a/sa/b"]],
    ["a * trust domain is not enforced", ["td1", "td2"], ["*/ns/a/sa/b"], ["*/ns/a/sa/b"]],
    ["not a SPIFFE identity: as written", ["td1"], ["sa/b", "*"], ["sa/b", "*"]],
    [
      "a *-suffix domain is kept for the domains it matches",
      ["old-td", "new-td"],
      ["*-td/ns/a/sa/b"],
      ["*-td/ns/a/sa/b"],
    ],
  ])("%s", (_name, domains, principals, want) => {
    expect(replaceTrustDomainAliases(domains as [string, ...string[]], principals)).toEqual(want);
  });

  it("expands a trust-domain value to the domain and its aliases, once each", () => {
    expect(expandTrustDomainAliases(["td1", "td2"], ["td2", "x", "td1"])).toEqual(["td1", "td2", "x"]);
  });
});
