/**
 * Reads a V8 .cpuprofile (FANOUT_CPU_PROFILE, AGENT_CPU_PROFILE, node --cpu-prof) and prints where
 * the busy time went, as a share of the samples that were not idle:
 * - `self` (default): self and inclusive time per function (name, file, line);
 * - `file`: self time per file;
 * - `tree`: the call tree, frames merged by function along each path, down to `min` percent.
 * `npx tsx test/bench/cpuprofile-summary.ts <file.cpuprofile> [self|file|tree] [rows or min %]`.
 * Paths under dist/ and node_modules/ are shortened to start there.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  startTime: number;
  endTime: number;
}

/** A profile's nodes with their sample counts, parents and busy total. */
export interface Samples {
  nodes: Map<number, ProfileNode>;
  parent: Map<number, number>;
  self: Map<number, number>;
  /** Samples that were not (idle). */
  busy: number;
  /** µs per sample. */
  interval: number;
}

/** Counts the samples of `profile` per node. */
export function samplesOf(profile: CpuProfile): Samples {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  for (const s of profile.samples) self.set(s, (self.get(s) ?? 0) + 1);
  let idle = 0;
  for (const [id, count] of self) if (nodes.get(id)?.callFrame.functionName === "(idle)") idle += count;
  const interval = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length);
  return { nodes, parent, self, busy: profile.samples.length - idle, interval };
}

const shortUrl = (url: string) => url.replace(/^.*\/(dist|node_modules)\//, "$1/").replace(/^file:\/\//, "");

/** A frame's label: function, file and line (`file` true: the file alone). */
export function frameLabel(n: ProfileNode, file = false): string {
  const f = n.callFrame;
  if (file) return shortUrl(f.url) || f.functionName;
  return `${f.functionName || "(anonymous)"} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
}

const isIdle = (label: string) => label.startsWith("(idle)");

/** Self and inclusive samples per label (a label counted once per sample even when recursive). */
export function totals(
  s: Samples,
  file: boolean,
): { self: Map<string, number>; inclusive: Map<string, number> } {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, count] of s.self) {
    const label = frameLabel(s.nodes.get(id) as ProfileNode, file);
    self.set(label, (self.get(label) ?? 0) + count);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = s.parent.get(at)) {
      const l = frameLabel(s.nodes.get(at) as ProfileNode, file);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + count);
    }
  }
  return { self, inclusive };
}

const pct = (n: number, busy: number) => ((100 * n) / Math.max(1, busy)).toFixed(1).padStart(5);

function printTop(title: string, m: Map<string, number>, busy: number, rows: number): void {
  console.log(`--- ${title} (% of busy)`);
  const top = [...m].filter(([l]) => !isIdle(l) && !l.startsWith("(root)")).sort((a, b) => b[1] - a[1]);
  for (const [label, n] of top.slice(0, rows)) console.log(`${pct(n, busy)}  ${label}`);
}

/** Prints the call tree from `roots`, frames merged by label per level, those of at least `min` % of busy. */
function printTree(s: Samples, roots: ProfileNode[], min: number, depth = 0): void {
  const total = (n: ProfileNode): number =>
    (s.self.get(n.id) ?? 0) +
    (n.children ?? []).reduce((t, c) => t + total(s.nodes.get(c) as ProfileNode), 0);
  const merged = new Map<string, { total: number; self: number; children: ProfileNode[] }>();
  for (const n of roots) {
    const label = frameLabel(n);
    const m = merged.get(label) ?? { total: 0, self: 0, children: [] };
    m.total += total(n);
    m.self += s.self.get(n.id) ?? 0;
    for (const c of n.children ?? []) m.children.push(s.nodes.get(c) as ProfileNode);
    merged.set(label, m);
  }
  for (const [label, m] of [...merged].sort((a, b) => b[1].total - a[1].total)) {
    if (isIdle(label) || (100 * m.total) / Math.max(1, s.busy) < min) continue;
    console.log(`${"  ".repeat(depth)}${pct(m.total, s.busy)} (self ${pct(m.self, s.busy).trim()}) ${label}`);
    printTree(s, m.children, min, depth + 1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, mode = "self", arg] = process.argv.slice(2);
  if (!file)
    throw new Error("usage: cpuprofile-summary.ts <file.cpuprofile> [self|file|tree] [rows or min %]");
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const s = samplesOf(profile);
  console.log(
    `${profile.samples.length} samples of ${s.interval.toFixed(0)} µs, busy ${((s.busy * s.interval) / 1000).toFixed(0)} ms`,
  );
  if (mode === "tree") {
    const root = profile.nodes[0] as ProfileNode;
    printTree(
      s,
      (root.children ?? []).map((c) => s.nodes.get(c) as ProfileNode),
      Number(arg ?? 1),
    );
  } else {
    const rows = Number(arg ?? 40);
    const t = totals(s, mode === "file");
    printTop("self", t.self, s.busy, rows);
    if (mode !== "file") printTop("inclusive", t.inclusive, s.busy, rows);
  }
}
