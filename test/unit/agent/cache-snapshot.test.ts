/** The disk cache's format: a round trip, and every way a file is refused whole (corrupt) or set aside (foreign). */
import { describe, expect, it } from "vitest";
import { nodeSha256 } from "../../../functions/node/sha256.ts";
import { type CacheSnapshot, decodeSnapshot, encodeSnapshot } from "../../../lib/agent/cache-snapshot.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";

const me = { namespace: "shop", upstream: "https://cp.example:15012" };
const savedAt = "2026-11-23T10:00:00.000Z";

/** A snapshot with `n` clusters and one endpoint assignment, overridable. */
function snapshot(n = 2, extra: [string, string, Uint8Array][] = []): CacheSnapshot {
  const s: CacheSnapshot = new Map();
  const cds = new Map<string, { version: string; body: Uint8Array }>();
  for (let i = 0; i < n; i++)
    cds.set(`outbound|80||s${i}.shop.svc.cluster.local`, {
      version: `v${i}`,
      body: new Uint8Array([i, 0, 255]),
    });
  s.set(TypeUrl.cluster, cds);
  s.set(
    TypeUrl.endpoint,
    new Map([
      ["outbound|80||s0.shop.svc.cluster.local", { version: "e0", body: new Uint8Array(300).fill(7) }],
    ]),
  );
  for (const [typeUrl, name, body] of extra) s.get(typeUrl)?.set(name, { version: "x", body });
  return s;
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);
const bytes = (s: string) => new TextEncoder().encode(s);
/** Body parts: a u32 (big-endian), a length-prefixed string, or length-prefixed bytes. */
type Part = number | string | Uint8Array;
function body(...parts: Part[]): Uint8Array {
  const chunks = parts.map((p) => {
    if (typeof p === "number") {
      const b = new Uint8Array(4);
      new DataView(b.buffer).setUint32(0, p);
      return b;
    }
    const b = typeof p === "string" ? bytes(p) : p;
    const out = new Uint8Array(4 + b.length);
    new DataView(out.buffer).setUint32(0, b.length);
    out.set(b, 4);
    return out;
  });
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
/** A file with `b` as its body and the header's counts and hash made to fit it. */
function withBody(b: Uint8Array, resources: number): Uint8Array {
  const hex = Array.from(nodeSha256(b), (x) => x.toString(16).padStart(2, "0")).join("");
  const header = bytes(
    `${JSON.stringify({ format: "edgepilot-agent-cache", version: 1, ...me, savedAt, resources, bodyBytes: b.length, sha256: hex })}\n`,
  );
  const out = new Uint8Array(header.length + b.length);
  out.set(header);
  out.set(b, header.length);
  return out;
}
const file = (s: CacheSnapshot = snapshot()) => encodeSnapshot(s, me, savedAt, nodeSha256);
const one = new Uint8Array([1]);

describe("agent disk cache format", () => {
  it("round-trips every resource byte for byte, and equal caches give equal files", () => {
    const d = decodeSnapshot(file(), me, nodeSha256);
    expect(d).toMatchObject({ ok: true, resources: 3, savedAt });
    if (!d.ok) return;
    expect(d.snapshot).toEqual(snapshot());
    expect(text(file())).toBe(text(file()));
  });

  const corrupt: [string, () => Uint8Array, RegExp][] = [
    ["empty", () => new Uint8Array(0), /no header line/],
    ["truncated", () => file().subarray(0, file().length - 10), /truncated/],
    [
      "a flipped byte in the body",
      () => {
        const f = file();
        f[f.length - 20] = (f[f.length - 20] as number) ^ 1;
        return f;
      },
      /SHA-256 does not match/,
    ],
    ["a header that is not JSON", () => bytes("{nope\n[]"), /header is not JSON/],
    [
      "a body cut inside a type entry",
      () => withBody(body(TypeUrl.cluster).subarray(0, 6), 0),
      /type entry 0 is cut/,
    ],
    [
      "an unknown type",
      () => withBody(body("type.googleapis.com/x.Secret", 0), 0),
      /not a type the agent caches/,
    ],
    ["a type twice", () => withBody(body(TypeUrl.cluster, 0, TypeUrl.cluster, 0), 0), /appears twice/],
    ["an empty name", () => withBody(body(TypeUrl.cluster, 1, "", "v", one), 1), /no name of 1 to/],
    [
      "a name twice",
      () => withBody(body(TypeUrl.cluster, 2, "a", "v", one, "a", "v", one), 2),
      /"a" appears twice/,
    ],
    [
      "a name that is not UTF-8",
      () => withBody(body(TypeUrl.cluster, 1, new Uint8Array([0xff]), "v", one), 1),
      /no name/,
    ],
    [
      "a version too long",
      () => withBody(body(TypeUrl.cluster, 1, "a", "v".repeat(300), one), 1),
      /no version of at most 256/,
    ],
    [
      "a resource cut short",
      () => withBody(body(TypeUrl.cluster, 1, "a", "v", 10), 1),
      /the resource is cut/,
    ],
    [
      "more resources than the count",
      () => withBody(body(TypeUrl.cluster, 2, "a", "v", one), 2),
      /resource 1: no name/,
    ],
    [
      "a count that does not match the header",
      () => withBody(body(TypeUrl.cluster, 1, "a", "v", one), 2),
      /holds 1 resources, the header says "2"/,
    ],
  ];
  it.each(corrupt)("refuses a file whole: %s", (_what, make, reason) => {
    const d = decodeSnapshot(make(), me, nodeSha256);
    expect(d.ok).toBe(false);
    if (d.ok) return;
    expect(d.foreign).toBe(false);
    expect(d.reason).toMatch(reason);
  });

  const foreign: [string, Uint8Array, RegExp][] = [
    ["another program's file", bytes('{"format":"something-else"}\n{}'), /not an edgepilot-agent-cache file/],
    [
      "another format version",
      bytes('{"format":"edgepilot-agent-cache","version":9}\n[]'),
      /format version "9", not 1/,
    ],
    [
      "another namespace",
      encodeSnapshot(snapshot(), { ...me, namespace: "web" }, savedAt, nodeSha256),
      /namespace "web"/,
    ],
    [
      "another upstream",
      encodeSnapshot(snapshot(), { ...me, upstream: "http://other:15010" }, savedAt, nodeSha256),
      /from "http:\/\/other:15010"/,
    ],
  ];
  it.each(foreign)("sets aside a foreign file: %s", (_what, f, reason) => {
    const d = decodeSnapshot(f, me, nodeSha256);
    expect(d).toMatchObject({ ok: false, foreign: true });
    if (!d.ok) expect(d.reason).toMatch(reason);
  });
});
