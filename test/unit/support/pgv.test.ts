/**
 * The PGV checker (test/support/pgv), table-driven: every rule kind it implements with a value that
 * passes and one that fails (real Envoy messages where an Envoy field carries the rule, one-field
 * messages otherwise), so a broken rule check fails here; and the RE2 translation of patterns.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { pgvViolations } from "../../support/pgv/index.ts";
import { re2FullMatch } from "../../support/pgv/re2.ts";
import { implementedRuleKinds } from "../../support/pgv/rule-kinds.ts";
import { envoyCases, type RuleCase } from "./pgv-envoy-cases.ts";
import { ruleCases } from "./pgv-rule-cases.ts";

function violations(schema: RuleCase["schema"], init: Record<string, unknown>, now?: number): string[] {
  const msg = create(schema, init);
  // An init value `undefined` is an entry left unset in memory (map.no_sparse's only failure).
  for (const [k, v] of Object.entries(init))
    if (v && typeof v === "object" && !Array.isArray(v) && Object.values(v).includes(undefined))
      Object.assign((msg as Record<string, unknown>)[k] as object, v);
  return pgvViolations(schema, msg, now === undefined ? {} : { now });
}

describe.each([
  ["Envoy messages", envoyCases],
  ["every rule kind", ruleCases],
])("PGV rules on %s", (_, cases) => {
  it.each(cases.map((c, i) => ({ ...c, name: `${c.kind} #${i}` })))("$name", (c) => {
    expect(violations(c.schema, c.pass, c.now)).toEqual([]);
    const bad = violations(c.failSchema ?? c.schema, c.fail, c.now);
    expect(
      bad.some((line) => line.includes(c.says)),
      `${bad.join("\n")}\nshould include ${c.says}`,
    ).toBe(true);
  });
});

describe("the rule tables", () => {
  it("cover every implemented kind with a passing and a failing case", () => {
    const covered = new Set([...envoyCases, ...ruleCases].map((c) => c.kind));
    expect(implementedRuleKinds.filter((k) => !covered.has(k))).toEqual([]);
  });
});

describe("RE2 patterns as JS RegExps (full match, as Envoy's C++ validators)", () => {
  it.each([
    ["^[^?#]+[^?#/]$", "/api", "/api/"],
    ["[a-z]+", "abc", "abc1"],
    ["\\A\\d+\\z", "12", "12\n"],
    ["a.c", "abc", "a\nc"],
    ["(?s)a.c", "a\nc", "ac"],
    ["(?m)^b$", "b", "a\nb"],
    ["[[:upper:]]", "A", "a"],
    ["\\p{Greek}+", "αβ", "ab"],
    ["\\x{41}\\x42", "AB", "ab"],
    ["a{2}{", "aa{", "aa"],
    ["(?P<n>x)\\-", "x-", "x"],
    ["[]a]", "]", "b"],
    ["\\s", " ", "\u00a0"],
    ["(?i:ab)c", "ABc", "ABC"],
  ])("%s matches %j, not %j", (pattern, yes, no) => {
    const re = re2FullMatch(pattern);
    expect(re.test(yes)).toBe(true);
    expect(re.test(no)).toBe(false);
  });

  it.each([
    "(?=a)",
    "a\\1",
    "\\C",
    "(?U)a*",
    "[[:^alpha:]]",
    "[\\S]",
    "a{1001}",
    "[a",
  ])("refuses %s loudly", (p) => {
    expect(() => re2FullMatch(p)).toThrow(/RE2 pattern/);
  });
});
