/** The disk cache's format: a round trip, and every way a file is refused whole (corrupt) or set aside (foreign). */
import { describe, expect, it } from "vitest";
import { nodeSha256 } from "../../../functions/node/sha256.ts";
import { type CacheSnapshot, decodeSnapshot, encodeSnapshot } from "../../../lib/agent/cache-snapshot.ts";
import { bytesToBase64 } from "../../../lib/store/codec.ts";
import { TypeUrl } from "../../../lib/xds/types.ts";

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
/** A file with its body replaced by `body` and the header's counts and hash made to fit it. */
function withBody(body: string, resources: number): Uint8Array {
  const b = bytes(body);
  const hex = Array.from(nodeSha256(b), (x) => x.toString(16).padStart(2, "0")).join("");
  const header = {
    format: "edgepilot-agent-cache",
    version: 1,
    ...me,
    savedAt,
    resources,
    bodyBytes: b.length,
    sha256: hex,
  };
  return bytes(`${JSON.stringify(header)}\n${body}`);
}
const file = (s: CacheSnapshot = snapshot()) => encodeSnapshot(s, me, savedAt, nodeSha256);

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
    ["a body that is not JSON", () => withBody("[[", 0), /body is not JSON/],
    ["a body that is no list", () => withBody("{}", 0), /not a list of types/],
    [
      "an unknown type",
      () => withBody(JSON.stringify([["type.googleapis.com/x.Secret", []]]), 0),
      /not a type the agent caches/,
    ],
    [
      "a type twice",
      () =>
        withBody(
          JSON.stringify([
            [TypeUrl.cluster, []],
            [TypeUrl.cluster, []],
          ]),
          0,
        ),
      /appears twice/,
    ],
    [
      "an empty name",
      () => withBody(JSON.stringify([[TypeUrl.cluster, [["", "v", "AA=="]]]]), 1),
      /the name is not/,
    ],
    [
      "a name twice",
      () =>
        withBody(
          JSON.stringify([
            [
              TypeUrl.cluster,
              [
                ["a", "v", "AA=="],
                ["a", "v", "AA=="],
              ],
            ],
          ]),
          2,
        ),
      /appears twice/,
    ],
    [
      "a version that is no string",
      () => withBody(JSON.stringify([[TypeUrl.cluster, [["a", 1, "AA=="]]]]), 1),
      /the version is not/,
    ],
    [
      "a body that is not base64",
      () => withBody(JSON.stringify([[TypeUrl.cluster, [["a", "v", "!!"]]]]), 1),
      /not base64/,
    ],
    [
      "a count that does not match",
      () =>
        withBody(JSON.stringify([[TypeUrl.cluster, [["a", "v", bytesToBase64(new Uint8Array([1]))]]]]), 2),
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
