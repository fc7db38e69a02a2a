/** Gateway API durations (`1h2m3s500ms`, the GEP-2257 subset of Go's ParseDuration) as protobuf JSON. */

const unitNanos: Record<string, bigint> = {
  h: 3600_000_000_000n,
  m: 60_000_000_000n,
  s: 1_000_000_000n,
  ms: 1_000_000n,
};

/**
 * A duration as google.protobuf.Duration's JSON (`1.500s`, 0/3/6/9 fractional digits as protojson
 * writes them); undefined when absent, unparsable or zero (istiod then sets no timeout).
 */
export function goDurationToProto(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const re = /(\d+)(ms|h|m|s)/g;
  let nanos = 0n;
  let consumed = 0;
  for (const m of v.matchAll(re)) {
    if (m.index !== consumed) return undefined;
    consumed += m[0].length;
    nanos += BigInt(m[1] as string) * (unitNanos[m[2] as string] as bigint);
  }
  if (consumed !== v.length || consumed === 0 || nanos === 0n) return undefined;
  const secs = nanos / 1_000_000_000n;
  const frac = nanos % 1_000_000_000n;
  if (frac === 0n) return `${secs}s`;
  let digits = frac.toString().padStart(9, "0");
  if (digits.endsWith("000000")) digits = digits.slice(0, 3);
  else if (digits.endsWith("000")) digits = digits.slice(0, 6);
  return `${secs}.${digits}s`;
}
