import { isIP } from "node:net";
import { describe, expect, it } from "vitest";
import { parseIp } from "../../../lib/model/ip.ts";

describe("parseIp: Go's netip.ParseAddr, then no zone and no IPv4-mapped IPv6", () => {
  const valid: [string, "IPv4" | "IPv6", number[]?][] = [
    ["10.244.1.12", "IPv4", [10, 244, 1, 12]],
    ["0.0.0.0", "IPv4"],
    ["255.255.255.255", "IPv4"],
    ["::", "IPv6", new Array(16).fill(0)],
    ["::1", "IPv6", [...new Array(15).fill(0), 1]],
    ["2001:db8::1", "IPv6"],
    ["2001:DB8:0:0:0:0:0:1", "IPv6"],
    ["2001:db8:0:0:0:0:2:1", "IPv6"],
    ["fe80::", "IPv6"],
    ["1:2:3:4:5:6::8", "IPv6"],
    ["1::2:3:4:5:6:7", "IPv6"],
    ["64:ff9b::192.0.2.33", "IPv6", [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 192, 0, 2, 33]],
    ["1:2:3:4:5:6:1.2.3.4", "IPv6"],
  ];
  for (const [text, family, bytes] of valid) {
    it(`accepts ${text}`, () => {
      const r = parseIp(text);
      expect(r.ok && r.family).toBe(family);
      if (bytes && r.ok) expect([...r.bytes]).toEqual(bytes);
    });
  }

  const invalid: [string, RegExp][] = [
    ["", /expected an IP/],
    ["999.999.1.1", /not a valid/],
    ["256.1.1.1", /not a valid/],
    ["1.2.3", /not a valid/],
    ["1.2.3.4.5", /not a valid/],
    ["1.2.3.", /not a valid/],
    ["1..2.3", /not a valid/],
    [" 1.2.3.4", /not a valid/],
    ["1.2.3.4 ", /not a valid/],
    ["+1.2.3.4", /not a valid/],
    ["0x1.2.3.4", /not a valid/],
    ["010.1.1.1", /leading 0s/],
    ["1.2.3.00", /leading 0s/],
    ["not-an-ip", /not a valid/],
    ["10.0.0.0/8", /CIDR/],
    ["2001:db8::/32", /CIDR/],
    ["10.0.0.1/33", /not a valid/],
    ["fe80::1%eth0", /zone/],
    ["fe80::1%", /not a valid/],
    ["1.2.3.4%eth0", /not a valid/],
    ["::ffff:10.0.0.1", /IPv4-mapped/],
    ["::ffff:a00:1", /IPv4-mapped/],
    [":::", /not a valid/],
    ["1:::2", /not a valid/],
    ["1::2::3", /not a valid/],
    [":1:2:3:4:5:6:7", /not a valid/],
    ["1:2:3:4:5:6:7:", /not a valid/],
    ["1:2:3:4:5:6:7", /not a valid/],
    ["1:2:3:4:5:6:7:8:9", /not a valid/],
    ["1:2:3:4:5:6:7::8", /not a valid/],
    ["1:2:3:4::5:6:7:8", /not a valid/],
    ["12345::", /not a valid/],
    ["g::1", /not a valid/],
    ["1.2.3.4::", /not a valid/],
    ["::1.2.3.4:5", /not a valid/],
    ["1:2:3:4:5:6:7:1.2.3.4", /not a valid/],
    ["::1.2.3", /not a valid/],
    ["::01.2.3.4", /leading 0s/],
  ];
  for (const [text, reason] of invalid) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      const r = parseIp(text);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(reason);
    });
  }
});

describe("parseIp agrees with Node's net.isIP (a second, independent RFC 4291 parser)", () => {
  it("on 20,000 mutations of valid addresses, except IPv4-mapped IPv6, which Kubernetes refuses", () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const bases = [
      "10.244.1.12",
      "2001:db8::1",
      "1:2:3:4:5:6:7:8",
      "::1",
      "64:ff9b::1.2.3.4",
      "1:2:3:4:5:6:1.2.3.4",
      "::",
    ];
    const alphabet = "0123456789af:.:";
    const disagreements: string[] = [];
    let accepted = 0;
    for (let k = 0; k < 20_000; k++) {
      let s = bases[rnd(bases.length)] as string;
      for (let m = 1 + rnd(3); m > 0; m--) {
        const i = rnd(s.length + 1);
        const c = alphabet[rnd(alphabet.length)] as string;
        const op = rnd(3);
        s = op === 0 ? s.slice(0, i) + c + s.slice(i) : s.slice(0, i) + (op === 1 ? "" : c) + s.slice(i + 1);
      }
      const mine = parseIp(s);
      if (mine.ok) accepted++;
      const node = isIP(s) !== 0 && !(!mine.ok && /IPv4-mapped/.test(mine.reason));
      if (mine.ok !== node) disagreements.push(s);
    }
    expect(disagreements).toEqual([]);
    expect(accepted).toBeGreaterThan(2_000);
  });
});
