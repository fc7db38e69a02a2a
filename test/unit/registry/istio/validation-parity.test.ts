/**
 * Validation parity with Istio: every case of the table in test/fixtures/istio-validation (Istio's
 * own validation tests and CRD test data, translated) runs through validateEvent as a whole object,
 * and edgepilot's verdict must be Istio's; where Istio's test names warnings, istioWarnings must
 * give them. A case marked `differs` asserts the documented opposite verdict instead.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { strict, validateEvent } from "../../../../lib/ingest/validate.ts";
import { istioWarnings } from "../../../../lib/registry/istio/warnings.ts";
import { loadParityCases } from "../../../fixtures/istio-validation/load.ts";

const dir = fileURLToPath(new URL("../../../fixtures/istio-validation/", import.meta.url));
const cases = loadParityCases(dir);

describe("the parity table", () => {
  it("holds several hundred cases, each named once per source", () => {
    expect(cases.length).toBeGreaterThan(300);
    const names = cases.map((c) => `${c.file} ${c.source} ${c.name}`);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe.each([...new Set(cases.map((c) => c.file))])("%s", (file) => {
  it.each(
    cases.filter((c) => c.file === file).map((c) => [`${c.source}: ${c.name}`, c] as const),
  )("%s", (_, c) => {
    const r = strict(validateEvent({ type: "ADDED", object: c.object }));
    const want = c.differs ? !c.valid : c.valid;
    const got = r.ok ? "valid" : `invalid: ${r.error.field}: ${r.error.message}`;
    if (want) expect(got).toBe("valid");
    else expect(got).toMatch(/^invalid/);
    if (r.ok && c.warnings) {
      const got = istioWarnings(c.kind, c.object);
      if (c.warnings.length === 0) expect(got).toEqual([]);
      for (const w of c.warnings) expect(got.join("\n")).toContain(w);
    }
  });
});
