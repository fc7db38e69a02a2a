/**
 * The client view a Delta session keeps up to date (delta-state.ts) is always what rebuilding it
 * from scratch gives: `held` with every response in flight applied in order. Random sends, ACKs,
 * NACKs, settles and unsubscriptions, seeded so every run takes the same steps.
 */
import { describe, expect, it } from "vitest";
import { setVersion } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import {
  answer,
  applySubscription,
  type DeltaTypeState,
  newTypeState,
  sent,
  settleOldest,
} from "../../../lib/xds/delta-state.ts";
import { seededInt } from "../../fixtures/seeded.ts";

/** The view rebuilt from scratch, as the session computed it before it kept one. */
function rebuilt(state: DeltaTypeState): Map<string, string> {
  const view = new Map(state.held);
  for (const f of state.inflight) {
    for (const { name, version } of f.resources) view.set(name, version);
    for (const name of f.removed) view.delete(name);
  }
  return view;
}

describe("the Delta client view", () => {
  it.each([
    1, 2, 3,
  ])("equals held plus the responses in flight after random steps (seed %i)", async (seed) => {
    const random = seededInt(seed);
    const names = Array.from({ length: 12 }, (_, i) => `e${i}`);
    const state = newTypeState(TypeUrl.endpoint, { e0: "v0", e1: "v0", stray: "v0" });
    applySubscription(state, names, [], true);
    let nonce = 0;
    for (let step = 0; step < 300; step++) {
      const op = random(6);
      if (op <= 1) {
        const versions = new Map<string, string>();
        const removed: string[] = [];
        for (let k = random(4); k > 0; k--) {
          const name = names[random(names.length)] as string;
          if (random(3) === 0) removed.push(name);
          else versions.set(name, `v${random(3)}`);
        }
        sent(state, {
          nonce: `n${++nonce}`,
          resources: [...versions].map(([name, version]) => ({ name, version })),
          removed: removed.filter((n) => !versions.has(n)),
        });
      } else if (op <= 3 && state.inflight.length > 0) {
        const f = state.inflight[random(state.inflight.length)];
        answer(state, f?.nonce ?? "", random(3) === 0 ? "rejected" : undefined);
      } else if (op === 4) {
        settleOldest(state, random(3));
      } else {
        const name = names[random(names.length)] as string;
        if (state.names.has(name)) applySubscription(state, [], [name], false);
        else applySubscription(state, [name], [], false);
      }
      expect(new Map(state.returned), `step ${step}`).toEqual(rebuilt(state));
      if (step % 25 === 0) {
        const want = await setVersion([...rebuilt(state)].map(([name, version]) => ({ name, version })));
        expect(await state.returned.version(), `step ${step}`).toBe(want);
        const held = await setVersion([...state.held].map(([name, version]) => ({ name, version })));
        expect(await state.held.version(), `step ${step}`).toBe(held);
      }
    }
  });
});
