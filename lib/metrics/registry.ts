/**
 * A small Prometheus registry and text exposition writer (format 0.0.4): counters, gauges and
 * histograms with labels, `# HELP` and `# TYPE` lines, label values escaped. prom-client does not
 * run on Workers (it needs node:cluster and process), so each mesh core's host keeps one of these.
 *
 * Hot paths resolve a child once (`family.labels(...)`) and keep it: incrementing a child or
 * observing into it allocates nothing and builds no string. Label values are only escaped when the
 * exposition is written.
 */
import { escapeHelp, escapeLabelValue, formatValue, labelNamePattern, metricNamePattern } from "./text.ts";

/** A monotonically increasing count. */
export interface Counter {
  inc(by?: number): void;
  get(): number;
}

/** A value that goes up and down. */
export interface Gauge {
  set(value: number): void;
  inc(by?: number): void;
  dec(by?: number): void;
  get(): number;
}

/** Observations counted in cumulative buckets, with their sum and count. */
export interface Histogram {
  observe(value: number): void;
  /** Cumulative count per bucket (last = +Inf), the sum and the count, as exposed. */
  snapshot(): { buckets: number[]; sum: number; count: number };
}

/** One metric name with its label names; `labels(...)` gives the child of those label values. */
export interface Family<T> {
  readonly name: string;
  /** The child for these label values (in the order of `labelNames`); created on first use. */
  labels(...values: string[]): T;
  /** Forgets every child (a gauge family recomputed from scratch). */
  reset(): void;
}

/** What a metric is declared with. */
export interface MetricSpec {
  name: string;
  help: string;
  labelNames?: readonly string[];
}

/** A histogram's declaration: `buckets` are the upper bounds, ascending (+Inf is added). */
export interface HistogramSpec extends MetricSpec {
  buckets: readonly number[];
}

/** A registry: declares metrics once and writes them all as one exposition. */
export interface Registry {
  counter(spec: MetricSpec): Family<Counter>;
  gauge(spec: MetricSpec): Family<Gauge>;
  histogram(spec: HistogramSpec): Family<Histogram>;
  /** Runs before each exposition (sampling gauges); may be async (reads a store). */
  collect(fn: () => void | Promise<void>): void;
  /** The text exposition of every metric, in declaration order, children in creation order. */
  expose(): Promise<string>;
}

/** The content type of the exposition (Prometheus text format 0.0.4). */
export const exposition = "text/plain; version=0.0.4; charset=utf-8";

type Kind = "counter" | "gauge" | "histogram";

interface Declared {
  spec: MetricSpec;
  kind: Kind;
  children: Map<string, { values: readonly string[]; child: unknown }>;
  bounds?: readonly number[];
}

/** An empty registry. Declaring a name twice, or a bad metric or label name, throws. */
export function createRegistry(): Registry {
  const declared: Declared[] = [];
  const names = new Set<string>();
  const collectors: (() => void | Promise<void>)[] = [];

  function family<T>(spec: MetricSpec, kind: Kind, make: () => T, bounds?: readonly number[]): Family<T> {
    if (!metricNamePattern.test(spec.name))
      throw new Error(`metrics: bad metric name ${JSON.stringify(spec.name)}`);
    if (names.has(spec.name)) throw new Error(`metrics: ${spec.name} is declared twice`);
    const labelNames = spec.labelNames ?? [];
    for (const l of labelNames)
      if (!labelNamePattern.test(l) || l.startsWith("__") || (kind === "histogram" && l === "le"))
        throw new Error(`metrics: ${spec.name}: bad label name ${JSON.stringify(l)}`);
    names.add(spec.name);
    const d: Declared = { spec, kind, children: new Map(), ...(bounds && { bounds }) };
    declared.push(d);
    let unlabelled: T | undefined;
    return {
      name: spec.name,
      labels(...values: string[]): T {
        if (values.length !== labelNames.length)
          throw new Error(
            `metrics: ${spec.name} takes ${labelNames.length} label value(s), got ${values.length}`,
          );
        if (values.length === 0 && unlabelled !== undefined) return unlabelled;
        const key = values.join("\u0000");
        const found = d.children.get(key);
        if (found) return found.child as T;
        const child = make();
        d.children.set(key, { values, child });
        if (values.length === 0) unlabelled = child;
        return child;
      },
      reset() {
        d.children.clear();
        unlabelled = undefined;
      },
    };
  }

  return {
    counter: (spec) => family(spec, "counter", createCounter),
    gauge: (spec) => family(spec, "gauge", createGauge),
    histogram(spec) {
      const bounds = checkBuckets(spec);
      return family(spec, "histogram", () => createHistogram(bounds), bounds);
    },
    collect(fn) {
      collectors.push(fn);
    },
    async expose() {
      for (const c of collectors) await c();
      const out: string[] = [];
      for (const d of declared) writeFamily(out, d);
      return out.join("");
    },
  };
}

function checkBuckets(spec: HistogramSpec): readonly number[] {
  const b = spec.buckets;
  for (let i = 0; i < b.length; i++) {
    const v = b[i] as number;
    if (!Number.isFinite(v) || (i > 0 && v <= (b[i - 1] as number)))
      throw new Error(`metrics: ${spec.name}: buckets must be finite and ascending`);
  }
  return [...b];
}

function createCounter(): Counter {
  let value = 0;
  return {
    inc(by = 1) {
      if (by < 0) throw new Error("metrics: a counter only goes up");
      value += by;
    },
    get: () => value,
  };
}

function createGauge(): Gauge {
  let value = 0;
  return {
    set(v) {
      value = v;
    },
    inc(by = 1) {
      value += by;
    },
    dec(by = 1) {
      value -= by;
    },
    get: () => value,
  };
}

function createHistogram(bounds: readonly number[]): Histogram {
  // Per-bucket (not cumulative) counts; the last slot is +Inf.
  const counts = new Float64Array(bounds.length + 1);
  let sum = 0;
  let count = 0;
  return {
    observe(v) {
      let i = 0;
      while (i < bounds.length && v > (bounds[i] as number)) i++;
      counts[i] = (counts[i] as number) + 1;
      sum += v;
      count++;
    },
    snapshot() {
      const buckets: number[] = [];
      let acc = 0;
      for (const c of counts) {
        acc += c;
        buckets.push(acc);
      }
      return { buckets, sum, count };
    },
  };
}

function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const parts: string[] = [];
  for (let i = 0; i < names.length; i++) parts.push(`${names[i]}="${escapeLabelValue(values[i] as string)}"`);
  if (extra !== undefined) parts.push(extra);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function writeFamily(out: string[], d: Declared): void {
  const { name, help } = d.spec;
  const names = d.spec.labelNames ?? [];
  out.push(`# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${d.kind}\n`);
  for (const { values, child } of d.children.values()) {
    if (d.kind !== "histogram") {
      out.push(`${name}${labelText(names, values)} ${formatValue((child as Counter).get())}\n`);
      continue;
    }
    const { buckets, sum, count } = (child as Histogram).snapshot();
    const bounds = d.bounds ?? [];
    for (let i = 0; i < buckets.length; i++) {
      const le = i < bounds.length ? formatValue(bounds[i] as number) : "+Inf";
      out.push(
        `${name}_bucket${labelText(names, values, `le="${le}"`)} ${formatValue(buckets[i] as number)}\n`,
      );
    }
    out.push(`${name}_sum${labelText(names, values)} ${formatValue(sum)}\n`);
    out.push(`${name}_count${labelText(names, values)} ${formatValue(count)}\n`);
  }
}
