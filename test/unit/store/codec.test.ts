import { describe, expect, it } from "vitest";
import {
  assertPlainValue,
  base64ToBytes,
  bytesToBase64,
  decodeValue,
  encodeValue,
  ownValue,
  setStoreFreezing,
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
      expect(() => ownValue(value)).toThrow(message);
      expect(() => encodeValue(value)).toThrow(TypeError);
    }
    expect(() =>
      assertPlainValue({ ok: [null, "s", 1, true, new Uint8Array(1), Object.create(null)] }),
    ).not.toThrow();
  });
});

describe("ownValue", () => {
  const value = () => {
    const v = {
      a: [1, "s", true, null, { b: new Uint8Array([1, 2, 3]) }],
      gone: undefined,
      bare: Object.create(null) as object,
    };
    Object.defineProperty(v, "__proto__", { value: { x: 1 }, enumerable: true });
    return v;
  };

  it("keeps the value itself, deep-frozen when freezing is on (as under test), bytes as they are", () => {
    const v = value();
    expect(ownValue(v)).toBe(v);
    for (const part of [v, v.a, v.a[4], v.bare, Object.getOwnPropertyDescriptor(v, "__proto__")?.value])
      expect(Object.isFrozen(part)).toBe(true);
    expect(() => {
      (v.a as unknown[]).push(1);
    }).toThrow(TypeError);
    ((v.a[4] as { b: Uint8Array }).b as Uint8Array)[0] = 9; // bytes cannot be frozen
    expect(ownValue("text")).toBe("text");
    expect(ownValue(null)).toBeNull();
  });

  it("only checks, freezing nothing, when freezing is off (production)", () => {
    const was = setStoreFreezing(false);
    try {
      const v = value();
      expect(ownValue(v)).toBe(v);
      expect(Object.isFrozen(v) || Object.isFrozen(v.a)).toBe(false);
      expect(() => ownValue({ when: new Date(0) })).toThrow("store: value.when is a Date");
    } finally {
      setStoreFreezing(was);
    }
  });

  it("refuses what is not plain data, inside a frozen value too, freezing nothing of it", () => {
    const partly = { ok: { x: 1 }, when: new Date(0) };
    expect(() => ownValue(partly)).toThrow("store: value.when is a Date");
    expect(() => ownValue(Object.freeze({ when: new Date(0) }))).toThrow("store: value.when is a Date");
    expect(() => ownValue(Number.POSITIVE_INFINITY)).toThrow("store: value is Infinity");
  });
});
