/** Runs a table of objects through validateEvents: accepted ones pass, refused ones name their field. */
import { describe, expect, it } from "vitest";
import { validateEvents } from "../../../../lib/ingest/index.ts";
import { added } from "./valid-objects.ts";

export interface Refused {
  name: string;
  object: unknown;
  field: string;
  message?: RegExp;
}

export interface Accepted {
  name: string;
  object: unknown;
}

/** One test per row; a refused object is checked in the middle of a batch, so its index is 1. */
export function ruleTable(title: string, accepted: Accepted[], refused: Refused[]): void {
  describe(title, () => {
    for (const c of accepted) {
      it(`accepts: ${c.name}`, () => {
        const r = validateEvents([added(c.object)]);
        expect(r.ok ? "ok" : r.error).toBe("ok");
      });
    }
    for (const c of refused) {
      it(`refuses: ${c.name}`, () => {
        const r = validateEvents([added(accepted[0]?.object), added(c.object), added(accepted[0]?.object)]);
        expect(r.ok).toBe(false);
        if (r.ok) return;
        expect({ index: r.error.index, field: r.error.field }).toEqual({ index: 1, field: c.field });
        if (c.message) expect(r.error.message).toMatch(c.message);
      });
    }
  });
}
