/** Reads a /metrics exposition through a real Prometheus text-format parser (Node and workerd suites). */
import parsePrometheusTextFormat, { type ParsedFamily } from "parse-prometheus-text-format";
import { expect } from "vitest";

/**
 * A parsed exposition: sample values by name and labels. parse-prometheus-text-format 1.1.1 folds
 * every child of a labelled histogram into one (it keeps prom2json's unlabelled shape), so a
 * labelled histogram is read by parsing the exposition again with that family's TYPE line made
 * `untyped`: its _bucket, _sum and _count lines then parse as plain labelled samples.
 */
export class Scrape {
  readonly families: ParsedFamily[];
  constructor(readonly text: string) {
    this.families = parsePrometheusTextFormat(text);
  }
  family(name: string): ParsedFamily {
    const f = this.families.find((x) => x.name === name);
    if (!f) throw new Error(`no ${name} in the exposition`);
    return f;
  }
  /** A counter or gauge sample's value (0 when the labelled child is absent; every family of the name). */
  value(name: string, labels: Record<string, string> = {}): number {
    this.family(name);
    const samples = this.families.filter((f) => f.name === name).flatMap((f) => f.metrics);
    const m = samples.find((s) => sameLabels(s.labels ?? {}, labels));
    return m ? Number(m.value) : 0;
  }
  /** A histogram's count, +Inf bucket and sum (zeros when the labelled child is absent). */
  histogram(name: string, labels: Record<string, string> = {}): { count: number; inf: number; sum: number } {
    expect(this.family(name).type).toBe("HISTOGRAM");
    if (Object.keys(labels).length === 0) {
      const m = this.family(name).metrics[0];
      return m
        ? { count: Number(m.count), inf: Number(m.buckets?.["+Inf"]), sum: Number(m.sum) }
        : { count: 0, inf: 0, sum: 0 };
    }
    const untyped = new Scrape(this.text.replace(`# TYPE ${name} histogram\n`, `# TYPE ${name} untyped\n`));
    return {
      count: untyped.value(`${name}_count`, labels),
      inf: untyped.value(`${name}_bucket`, { ...labels, le: "+Inf" }),
      sum: untyped.value(`${name}_sum`, labels),
    };
  }
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/**
 * Scrapes (with `scrape`) until `check` passes, `tries` times 20 ms apart: pushes, stream ends and
 * closes reach the metrics a moment after the call that caused them. Throws the last failure.
 */
export async function scrapeUntil(
  scrape: () => Promise<Scrape>,
  check: (s: Scrape) => void,
  tries = 100,
): Promise<Scrape> {
  let last: unknown;
  for (let i = 0; i < tries; i++) {
    const s = await scrape();
    try {
      check(s);
      return s;
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  throw last;
}
