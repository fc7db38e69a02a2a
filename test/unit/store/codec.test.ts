import { describe, expect, it } from "vitest";
import {
  assertPlainValue,
  base64ToBytes,
  bytesToBase64,
  copyPlainValue,
  decodeValue,
  encodeValue,
  handOver,
  takeOver,
} from "../../../lib/store/codec.ts";

describe("store codec", () => {
  it("tags bytes and escapes $-keys so both decode unambiguously", () => {
    const value = { b: new Uint8Array([1, 2, 255]), $bytes: "AQI=", $$x: [{ $bytes: 1 }] };
    const text = encodeValue(value);
    expect(JSON.parse(text)).toEqual({ b: { $bytes: "AQL/" }, $$bytes: "AQI=", $$$x: [{ $$bytes: 1 }] });
    expect(decodeValue(text)).toStrictEqual(value);
  });

  it("round-trips an own __proto__ key as data, not as a prototype", () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "$a": 1}') as Record<string, unknown>;
    const back = decodeValue<Record<string, unknown>>(encodeValue(value));
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.keys(back)).toEqual(["__proto__", "$a"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("base64 matches Node's for every byte value and for inputs longer than one chunk", () => {
    const sizes = [0, 1, 2, 3, 256, 0x8000, 0x8000 * 3 + 7];
    for (const size of sizes) {
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 7919) % 256);
      const text = bytesToBase64(bytes);
      expect(text).toBe(Buffer.from(bytes).toString("base64"));
      expect(base64ToBytes(text)).toStrictEqual(bytes);
    }
    const view = new Uint8Array([9, 1, 2, 9]).subarray(1, 3);
    expect(bytesToBase64(view)).toBe("AQI=");
  });

  it("drops undefined object properties, like JSON", () => {
    expect(decodeValue(encodeValue({ a: 1, b: undefined }))).toStrictEqual({ a: 1 });
  });

  it("names where a value stops being plain data", () => {
    const cases: [unknown, string][] = [
      [undefined, "store: value is undefined"],
      [{ a: [1, { b: Number.NaN }] }, "store: value.a[1].b is NaN"],
      [{ when: new Date(0) }, "store: value.when is a Date"],
      [[new Uint16Array(1)], "store: value[0] is a Uint16Array"],
      [{ list: [1, undefined] }, "store: value.list[1] is undefined"],
      [{ n: 1n }, "store: value.n is a bigint"],
    ];
    for (const [value, message] of cases) {
      expect(() => encodeValue(value)).toThrow(message);
      expect(() => assertPlainValue(value)).toThrow(message);
      expect(() => copyPlainValue(value)).toThrow(message);
      expect(() => encodeValue(value)).toThrow(TypeError);
    }
    expect(() =>
      assertPlainValue({ ok: [null, "s", 1, true, new Uint8Array(1), Object.create(null)] }),
    ).not.toThrow();
  });

  it("copies plain data deeply, sharing nothing, bytes into fresh Uint8Arrays", () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const value = {
      a: [1, "s", true, null, { b: bytes }],
      view: new Uint8Array(bytes.buffer, 1, 2),
      gone: undefined,
      bare: Object.create(null) as object,
    };
    Object.defineProperty(value, "__proto__", { value: { x: 1 }, enumerable: true });
    const copy = copyPlainValue(value);
    expect(copy).toStrictEqual({ ...value, bare: {} });
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toContain("__proto__");
    bytes[0] = 9;
    (value.a[4] as { b: Uint8Array }).b = new Uint8Array(0);
    expect((copy.a[4] as { b: Uint8Array }).b).toStrictEqual(new Uint8Array([1, 2, 3]));
    expect(copy.view).toStrictEqual(new Uint8Array([2, 3]));
    expect(copy.view.byteOffset).toBe(0);
  });
});

describe("handOver / takeOver", () => {
  it("keeps a handed-over value once, and copies anything else", () => {
    const given = handOver({ list: [1, 2] });
    expect(takeOver(given)).toBe(given);
    const again = takeOver(given); // the mark is spent: a second store gets a copy
    expect(again).not.toBe(given);
    expect(again).toStrictEqual(given);
    const kept = { a: new Uint8Array([1]) };
    const copy = takeOver(kept);
    expect(copy).not.toBe(kept);
    expect(copy).toStrictEqual(kept);
    expect(takeOver(handOver("text"))).toBe("text");
  });

  it("still refuses what is not plain data", () => {
    expect(() => takeOver({ when: new Date(0) })).toThrow("store: value.when is a Date");
  });
});
