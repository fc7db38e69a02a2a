import { describe, expect, it } from "vitest";
import { compareResourceVersions, isNewer, type ObjectRecord } from "../../../lib/ingest/objects.ts";

const rec = (resourceVersion: string, deleted = false): ObjectRecord => ({
  resourceVersion,
  uid: "u",
  deleted,
});

describe("resourceVersion ordering", () => {
  const cases: [string, string, number | undefined][] = [
    ["1", "2", -1],
    ["10", "9", 1],
    ["123456789012345678901", "123456789012345678900", 1],
    ["7", "7", 0],
    ["abc", "7", undefined],
    ["", "7", undefined],
  ];
  for (const [a, b, want] of cases)
    it(`${a} vs ${b}`, () => expect(compareResourceVersions(a, b)).toBe(want));

  const news: [string, ObjectRecord | undefined, string, boolean][] = [
    ["first sight", undefined, "5", true],
    ["newer", rec("5"), "6", true],
    ["replay", rec("5"), "5", false],
    ["older (reordered)", rec("5"), "4", false],
    ["older than a tombstone", rec("9", true), "8", false],
    ["re-created after a tombstone", rec("9", true), "12", true],
    ["no version on the event", rec("5"), "", true],
    ["opaque versions that differ", rec("a"), "b", true],
    ["opaque versions that match", rec("a"), "a", false],
  ];
  for (const [name, recorded, incoming, want] of news)
    it(name, () => expect(isNewer(recorded, incoming)).toBe(want));
});
