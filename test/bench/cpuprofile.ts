/**
 * A CPU profile (.cpuprofile, V8's format) summed into SELF and INCLUSIVE time per function and per
 * module bucket (lib/ingest, lib/store, lib/push, lib/resources/generators, protobuf-es, GC, ...). Inclusive
 * time counts each sample once per function or bucket on its stack (recursion is not counted twice),
 * so a bucket's inclusive share says what removing every call into it would save at most.
 * `tree` prints the call tree instead: frames merged by function along each path, those of at least
 * `min` percent of the sampled time.
 * `npx tsx test/bench/cpuprofile.ts <file.cpuprofile> [top]` or `... <file.cpuprofile> tree [min %]`
 * (FANOUT_CPU_PROFILE, AGENT_CPU_PROFILE, ingest-profile.ts and node --cpu-prof write such files).
 */
import { readFileSync } from "node:fs";

/** The parts of V8's profile format read here. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

/** One row: a function or a bucket with its self and inclusive time (ms). */
export interface ProfileRow {
  name: string;
  selfMs: number;
  inclusiveMs: number;
}

/** The summary of one profile: total sampled time, rows by function and by bucket, most inclusive first. */
export interface ProfileSummary {
  totalMs: number;
  functions: ProfileRow[];
  buckets: ProfileRow[];
  /**
   * Time by the outermost project frame (lib/, functions/) of each sample's stack: async code resumes
   * from the microtask queue, so a continuation's samples have its own function outermost, not its
   * caller; this view says which project function each slice of time ran in, callers' awaits aside.
   */
  entries: ProfileRow[];
}

const bucketRules: readonly (readonly [RegExp, string])[] = [
  [/@bufbuild\/protobuf/, "protobuf-es"],
  [/node_modules\/hono/, "hono"],
  [/node_modules\//, "other packages"],
  [/\/lib\/gen\//, "lib/gen"],
  [/\/lib\/resources\/generators\//, "lib/resources/generators"],
  [/\/lib\/(ingest|store|push|core|shards|registry|xds)\//, "lib/$1"],
  [/\/lib\/[^/]+$/, "lib (top)"],
  [/\/lib\//, "lib (other)"],
  [/\/functions\//, "functions"],
  [/\/test\//, "test (bench)"],
  [/^node:|^internal\//, "node internals"],
];

/** The module bucket of a frame: its url's package or lib/ directory, or V8's pseudo-frames. */
export function bucketOf(url: string, functionName: string): string {
  if (url === "") {
    if (functionName === "(garbage collector)") return "GC";
    if (functionName === "(idle)" || functionName === "(program)" || functionName === "(root)")
      return functionName;
    return "native (V8 builtins)";
  }
  for (const [re, name] of bucketRules) {
    const m = re.exec(url);
    if (m) return name.replace("$1", m[1] ?? "");
  }
  return "other";
}

function shortUrl(url: string): string {
  const at = url.search(/\/(lib|functions|test|node_modules)\//);
  return at < 0 ? url : url.slice(at + 1);
}

/** Sums `profile` (the (idle) and (root) frames are left out of the total). */
export function summarize(profile: CpuProfile): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const fnKey = (id: number) => {
    const { functionName, url, lineNumber } = (byId.get(id) as CpuProfile["nodes"][number]).callFrame;
    return `${functionName || "(anonymous)"} ${url ? `${shortUrl(url)}:${lineNumber + 1}` : ""}`.trim();
  };
  const bucketKey = (id: number) => {
    const { functionName, url } = (byId.get(id) as CpuProfile["nodes"][number]).callFrame;
    return bucketOf(url, functionName);
  };
  // Per node: its stack's distinct functions and buckets, computed once.
  const stacks = new Map<number, { fns: string[]; buckets: string[]; entry: string }>();
  const stackOf = (id: number) => {
    let s = stacks.get(id);
    if (s) return s;
    const fns = new Set<string>();
    const buckets = new Set<string>();
    let entry = "(outside the project)";
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      fns.add(fnKey(at));
      const bucket = bucketKey(at);
      buckets.add(bucket);
      if (bucket.startsWith("lib") || bucket === "functions") entry = fnKey(at);
    }
    s = { fns: [...fns], buckets: [...buckets], entry };
    stacks.set(id, s);
    return s;
  };
  const fnSelf = new Map<string, number>();
  const fnIncl = new Map<string, number>();
  const bSelf = new Map<string, number>();
  const bIncl = new Map<string, number>();
  const entries = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  let totalMs = 0;
  const ms = sampleTimes(profile);
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    const bucket = bucketKey(id);
    if (bucket === "(idle)" || bucket === "(root)") continue;
    const t = ms[i] as number;
    totalMs += t;
    add(fnSelf, fnKey(id), t);
    add(bSelf, bucket, t);
    const { fns, buckets, entry } = stackOf(id);
    add(entries, bucket === "GC" ? "(garbage collector)" : entry, t);
    for (const f of fns) add(fnIncl, f, t);
    for (const b of buckets) add(bIncl, b, t);
  }
  const rows = (self: Map<string, number>, incl: Map<string, number>) =>
    [...incl.entries()]
      .map(([name, inclusiveMs]) => ({ name, selfMs: self.get(name) ?? 0, inclusiveMs }))
      .sort((a, b) => b.inclusiveMs - a.inclusiveMs);
  return {
    totalMs,
    functions: rows(fnSelf, fnIncl),
    buckets: rows(bSelf, bIncl),
    entries: rows(new Map(), entries),
  };
}

/**
 * Each sample's time (ms): the gap to the next sample (V8 stores each sample's delta from the
 * previous), at most 4x the median gap. A longer gap is the sampler not running (the process
 * descheduled, or idle with no idle sample taken), not CPU the sampled frame spent: uncapped, one
 * such gap would credit a frame that ran for microseconds with a long "self" time.
 */
export function sampleTimes(profile: CpuProfile): number[] {
  const gaps = profile.timeDeltas.slice(1).sort((a, b) => a - b);
  const cap = 4 * (gaps[gaps.length >> 1] ?? 0);
  return profile.samples.map((_, i) => Math.min(profile.timeDeltas[i + 1] ?? 0, cap) / 1000);
}

/** The summary as text: buckets, then the top functions by inclusive and by self time. */
export function formatSummary(title: string, s: ProfileSummary, top = 30): string {
  const pct = (ms: number) => `${((100 * ms) / s.totalMs).toFixed(1).padStart(5)}%`;
  const line = (r: ProfileRow) =>
    `${r.selfMs.toFixed(0).padStart(7)} ${pct(r.selfMs)}  ${r.inclusiveMs.toFixed(0).padStart(7)} ${pct(r.inclusiveMs)}  ${r.name}`;
  const head = "  self ms  self%    incl ms  incl%";
  const bySelf = [...s.functions].sort((a, b) => b.selfMs - a.selfMs);
  return [
    `== ${title}: ${s.totalMs.toFixed(0)} ms sampled`,
    "-- buckets",
    head,
    ...s.buckets.map(line),
    `-- outermost project frame (top ${top}; incl = time under it)`,
    head,
    ...s.entries.slice(0, top).map(line),
    `-- functions by inclusive (top ${top})`,
    head,
    ...s.functions.slice(0, top).map(line),
    `-- functions by self (top ${top})`,
    head,
    ...bySelf.slice(0, top).map(line),
  ].join("\n");
}

/** The call tree as text: frames merged by function per level, those of at least `min` % of the sampled time. */
export function formatTree(profile: CpuProfile, min: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMs = new Map<number, number>();
  let totalMs = 0;
  const times = sampleTimes(profile);
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    const { functionName } = (byId.get(id) as CpuProfile["nodes"][number]).callFrame;
    if (functionName === "(idle)" || functionName === "(root)") continue;
    const ms = times[i] as number;
    selfMs.set(id, (selfMs.get(id) ?? 0) + ms);
    totalMs += ms;
  }
  const totals = new Map<number, number>();
  const total = (id: number): number => {
    let t = totals.get(id);
    if (t === undefined) {
      t = (selfMs.get(id) ?? 0) + (byId.get(id)?.children ?? []).reduce((sum, c) => sum + total(c), 0);
      totals.set(id, t);
    }
    return t;
  };
  const pct = (ms: number) => `${((100 * ms) / Math.max(1e-9, totalMs)).toFixed(1).padStart(5)}%`;
  const lines: string[] = [`== call tree: ${totalMs.toFixed(0)} ms sampled (frames of at least ${min}%)`];
  const walk = (ids: readonly number[], depth: number) => {
    const merged = new Map<string, { total: number; self: number; children: number[] }>();
    for (const id of ids) {
      const { functionName, url, lineNumber } = (byId.get(id) as CpuProfile["nodes"][number]).callFrame;
      const label =
        `${functionName || "(anonymous)"} ${url ? `${shortUrl(url)}:${lineNumber + 1}` : ""}`.trim();
      const m = merged.get(label) ?? { total: 0, self: 0, children: [] };
      m.total += total(id);
      m.self += selfMs.get(id) ?? 0;
      m.children.push(...(byId.get(id)?.children ?? []));
      merged.set(label, m);
    }
    for (const [label, m] of [...merged].sort((a, b) => b[1].total - a[1].total)) {
      if ((100 * m.total) / Math.max(1e-9, totalMs) < min) continue;
      lines.push(`${"  ".repeat(depth)}${pct(m.total)} (self ${pct(m.self).trim()}) ${label}`);
      walk(m.children, depth + 1);
    }
  };
  walk(profile.nodes[0]?.children ?? [], 0);
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, mode, arg] = process.argv.slice(2);
  if (!file) throw new Error("usage: cpuprofile.ts <file.cpuprofile> [top] | <file.cpuprofile> tree [min %]");
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  if (mode === "tree") console.log(formatTree(profile, Number(arg ?? 1)));
  else console.log(formatSummary(file, summarize(profile), Number(mode ?? 30)));
}
