/**
 * The README stays true: every command in its ```sh blocks is either run here, against a real
 * control plane on free ports (`localhost:8080` and `:15010` rewritten to them), with its output
 * checked against what the README shows after it, or named below with the test that exercises it
 * (a file that must exist and contain the marker). A README command nobody covers, or an entry
 * no README command matches any more, fails.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const readme = readFileSync(join(root, "README.md"), "utf8");

/** A README command: its text (continuations and quoted newlines kept) and the comment lines after it. */
interface Command {
  text: string;
  after: string[];
}

/** The commands of every ```sh block: newlines inside quotes or after `\` continue a command; `#` starts a comment. */
function readmeCommands(text: string): Command[] {
  const out: Command[] = [];
  for (const block of text.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```$/gm)) {
    const src = block[1] as string;
    let cmd = "";
    let quote: string | undefined;
    let comment = false;
    let commentText = "";
    const end = () => {
      const t = cmd.trim();
      if (t !== "") out.push({ text: t, after: [] });
      else if (commentText.trim() !== "" && out.length > 0) out.at(-1)?.after.push(commentText.trim());
      cmd = "";
      commentText = "";
      comment = false;
    };
    for (let i = 0; i < src.length; i++) {
      const c = src[i] as string;
      if (comment) {
        if (c === "\n") end();
        else commentText += c;
        continue;
      }
      if (quote) {
        cmd += c;
        if (c === quote) quote = undefined;
        continue;
      }
      if (c === "'" || c === '"') quote = c;
      if (c === "\\" && src[i + 1] === "\n") {
        cmd += " ";
        i++;
        continue;
      }
      if (c === "#" && (cmd === "" || /\s$/.test(cmd))) {
        comment = true;
        continue;
      }
      if (c === "\n") {
        end();
        continue;
      }
      cmd += c;
    }
    end();
  }
  return out;
}

/** Covered elsewhere: the test file that exercises the command, and a string it must contain. */
interface Covered {
  match: RegExp;
  by: string;
  marker: string;
}
const covered: Covered[] = [
  {
    match: /^npm install && npm start$/,
    by: "test/e2e/image/image.test.ts",
    marker: '"npm", ["run", "build"]',
  },
  {
    match: /^npm test$/,
    by: "package.json",
    marker: '"test": "npm run typecheck && npm run lint && vitest run',
  },
  {
    match: /^EDGEPILOT_STORE=file EDGEPILOT_DATA_DIR=\S+ npm start$/,
    by: "test/e2e/restart-file.test.ts",
    marker: 'EDGEPILOT_STORE: "file"',
  },
  { match: /^npx dynalite --port 4567 &$/, by: "test/support/dynalite.ts", marker: "dynalite({" },
  {
    match: /^EDGEPILOT_STORE=dynamodb DYNAMODB_ENDPOINT=http:\/\/127\.0\.0\.1:4567 npm start$/,
    by: "test/e2e/proxyless-grpc-dynamodb.test.ts",
    marker: 'EDGEPILOT_STORE: "dynamodb", DYNAMODB_ENDPOINT',
  },
  {
    match: /^EDGEPILOT_URL=\S+ EDGEPILOT_TOKEN=\S+ CLUSTER_ID=\S+ npm run relay$/,
    by: "test/e2e/relay/relay-process.test.ts",
    marker: '"bin/edgepilot.mjs", "relay"',
  },
  {
    match: /^GRPC_XDS_BOOTSTRAP=bootstrap\.json your-grpc-app$/,
    by: "test/e2e/support/proxyless-suite.ts",
    marker: "xds:///",
  },
  { match: /^npm start &$/, by: "test/e2e/support/runtime.ts", marker: "functions/node/main.ts" },
  {
    match: /^POD_NAMESPACE=default EDGEPILOT_AGENT_UPSTREAM=http:\/\/127\.0\.0\.1:15010 .* npm run agent &$/,
    by: "test/e2e/agent/cli.test.ts",
    marker: '"bin/edgepilot.mjs", "agent"',
  },
  {
    match: /^curl -s -o \/dev\/null -w '%\{http_code\}\\n' http:\/\/127\.0\.0\.1:15021\/ready$/,
    by: "test/e2e/agent/cli.test.ts",
    marker: "expect(res.status).toBe(503)",
  },
  { match: /^npm run dev( &)?$/, by: "test/e2e/agent/agent-worker.test.ts", marker: "wrangler" },
  {
    match: /^echo dev-xds-token-0001 > \/tmp\/edgepilot-xds-token$/,
    by: "test/e2e/agent/agent-worker.test.ts",
    marker: "tokenFile",
  },
  {
    match:
      /^POD_NAMESPACE=default EDGEPILOT_AGENT_UPSTREAM=http:\/\/127\.0\.0\.1:8787 .*PROTOCOL=watch .* npm run agent &$/,
    by: "test/e2e/agent/agent-worker.test.ts",
    marker: "watch",
  },
  {
    match: /^curl -s localhost:8787\/v1\/events -H 'authorization: Bearer dev'/,
    by: "test/workers/support.ts",
    marker: "/v1/events",
  },
  {
    match: /^curl -s localhost:8787\/edgepilot\.v1\.StatusService\/GetStatus/,
    by: "test/workers/support.ts",
    marker: "getStatus",
  },
  {
    match: /^curl -H "authorization: Bearer \$EDGEPILOT_XDS_TOKEN" http:\/\/127\.0\.0\.1:8080\/metrics$/,
    by: "test/e2e/metrics/metrics-node.test.ts",
    marker: "headers: token === undefined ? {} : { authorization:",
  },
  {
    match: /^edgepilot proxy-status /,
    by: "test/e2e/debug/proxy-status.test.ts",
    marker: '[bin, "proxy-status", ...args]',
  },
  {
    match: /^curl -s localhost:8787\/debug\/syncz /,
    by: "test/workers/debug.test.ts",
    marker: "/debug/syncz",
  },
  { match: /^docker build -t edgepilot /, by: "test/e2e/image/image.test.ts", marker: "Dockerfile" },
  {
    match: /^kubectl create namespace edgepilot$/,
    by: "test/unit/infra/k8s-render.test.ts",
    marker: "namespace",
  },
  {
    match: /^kubectl -n edgepilot create secret generic edgepilot-token /,
    by: "test/unit/infra/k8s-render.test.ts",
    marker: "kubectl -n edgepilot create secret generic edgepilot-token",
  },
  {
    match: /^kubectl apply -k infra\/k8s\/overlays\/cluster-a$/,
    by: "test/unit/infra/k8s-render.test.ts",
    marker: "overlays/cluster-a",
  },
  {
    match: /^npx wrangler secret put EDGEPILOT_(XDS_)?TOKEN$/,
    by: "test/unit/infra/wrangler-deploy.test.ts",
    marker: "wrangler secret put",
  },
  {
    match: /^npx wrangler deploy$/,
    by: "test/unit/infra/wrangler-deploy.test.ts",
    marker: '"deploy", "--dry-run"',
  },
];

/** Run here: the command's check of its output (`out`), given the README's comment lines after it. */
interface Run {
  match: RegExp;
  check: (out: string, after: string[], dir: string) => void;
}
/** The README's `# {...}` result, with `…` elisions (e.g. the instance id) left out of the comparison. */
const documented = (after: string[]) => {
  const text = after.join("").replace(/^\s*/, "");
  const json = JSON.parse(text.replace(/"[^"]*…"/g, '"…"')) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, v === "…" ? expect.any(String) : v]));
};
const runs: Run[] = [
  {
    match: /^curl -s localhost:8080\/ready$/,
    check: (out, after) => {
      expect(Object.keys(JSON.parse(out)).sort()).toEqual(Object.keys(documented(after)).sort());
      expect(JSON.parse(out)).toMatchObject({ ready: true });
    },
  },
  {
    match: /^curl -s localhost:8080\/v1\/events .*"kind":"Service"/s,
    check: (out, after) => expect(JSON.parse(out)).toEqual(documented(after)),
  },
  {
    match: /^curl -s localhost:8080\/v1\/events .*"kind":"ServiceEntry"/s,
    check: (out) => expect(JSON.parse(out)).toMatchObject({ events: 2, applied: 2 }),
  },
  {
    match: /^curl -s localhost:8080\/edgepilot\.xds\.v1\.DeltaPollService\/Poll /,
    check: (out) => expect(out).toContain("outbound|9080||reviews.default.svc.cluster.local"),
  },
  {
    match:
      /^curl -s --http2-prior-knowledge localhost:15010\/envoy\.service\.cluster\.v3\.ClusterDiscoveryService\/FetchClusters /,
    check: (out) => expect(out).toContain("reviews.default.svc.cluster.local"),
  },
  {
    match: /^curl -s --http2-prior-knowledge localhost:15010\/edgepilot\.v1\.StatusService\/GetStatus /,
    check: (out) => expect(JSON.parse(out)).toHaveProperty("pushVersion"),
  },
  {
    match: /^curl -s localhost:8080\/debug\/syncz\?pretty$/,
    check: (out) => expect(Array.isArray(JSON.parse(out))).toBe(true),
  },
  {
    match: /^curl -s 'localhost:8080\/debug\/push_status\?limit=1'$/,
    check: (out) =>
      expect(JSON.parse(out)).toMatchObject({ pushVersion: expect.any(Number), pushes: expect.any(Array) }),
  },
  {
    match: /^curl -s 'localhost:8080\/debug\/configz\?kind=VirtualService&namespace=default'$/,
    // The README ingested a ServiceEntry before: the kind filter must leave it out.
    check: (out) => {
      const items = JSON.parse(out) as { kind?: string }[];
      expect(Array.isArray(items)).toBe(true);
      for (const i of items) expect(i.kind).toBe("VirtualService");
    },
  },
  {
    match: /^curl -s 'localhost:8080\/debug\/config_dump\?proxyID=/,
    // No such proxy is connected while the README runs: a 404 saying so.
    check: (out) =>
      expect(JSON.parse(out)).toEqual({ error: expect.stringContaining("no live status record") }),
  },
  {
    match: /^node bin\/edgepilot\.mjs version$/,
    check: (out) => expect(out).toMatch(/^edgepilot \d+\.\d+\.\d+\ncommit /),
  },
  {
    match: /^node bin\/edgepilot\.mjs serve --help$/,
    check: (out) => expect(out).toMatch(/^usage: edgepilot serve/),
  },
  {
    match: /^node bin\/edgepilot\.mjs relay --help$/,
    check: (out) => expect(out).toMatch(/^usage: edgepilot relay/),
  },
  {
    match: /node bin\/edgepilot\.mjs agent bootstrap --generator grpc .*> bootstrap\.json$/,
    check: (_out, _after, dir) =>
      expect(JSON.parse(readFileSync(join(dir, "bootstrap.json"), "utf8")).xds_servers[0].server_uri).toBe(
        "unix:/tmp/edgepilot-agent.sock",
      ),
  },
  {
    match: /node bin\/edgepilot\.mjs agent bootstrap --generator envoy > envoy\.json$/,
    check: (_out, _after, dir) =>
      expect(JSON.parse(readFileSync(join(dir, "envoy.json"), "utf8")).node.id).toBe(
        "sidecar~10.1.0.9~client-0.default~default.svc.cluster.local",
      ),
  },
];

const commands = readmeCommands(readme);
const matches = (c: Command) => [
  ...covered.filter((e) => e.match.test(c.text)),
  ...runs.filter((e) => e.match.test(c.text)),
];

describe("README commands", () => {
  it("are found (and the parser keeps quoted newlines and continuations)", () => {
    expect(commands.length).toBeGreaterThan(20);
    expect(readmeCommands("```sh\na 'x\ny' \\\n  b   # c\n# {\"k\":1}\n```\n")).toEqual([
      { text: "a 'x\ny'    b", after: ['{"k":1}'] },
    ]);
  });

  it("each is run here or covered by exactly one named test, and every entry is still used", () => {
    for (const c of commands)
      expect(matches(c).length, `README command not covered: ${JSON.stringify(c.text)}`).toBe(1);
    for (const e of [...covered, ...runs])
      expect(
        commands.some((c) => e.match.test(c.text)),
        `no README command matches ${e.match}`,
      ).toBe(true);
  });

  it("the tests named as covering a command exist and exercise it", () => {
    for (const e of covered) {
      expect(existsSync(join(root, e.by)), e.by).toBe(true);
      expect(readFileSync(join(root, e.by), "utf8"), `${e.by} should contain ${e.marker}`).toContain(
        e.marker,
      );
    }
  });
});

describe("README commands, run against a control plane", () => {
  let cp: RunningControlPlane;
  let dir: string;
  beforeAll(async () => {
    // As the README's examples assume: no token, loopback, so ingest and xDS need no credentials.
    cp = await startControlPlane({ EDGEPILOT_TOKEN: "", PILOT_DEBOUNCE_AFTER: "10ms" });
    dir = mkdtempSync(join(tmpdir(), "edgepilot-readme-"));
  });
  afterAll(async () => {
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("each runnable command succeeds and prints what the README shows", async () => {
    const runnable = commands.filter((c) => runs.some((r) => r.match.test(c.text)));
    expect(runnable.length).toBe(runs.length);
    for (const c of runnable) {
      const run = runs.find((r) => r.match.test(c.text)) as Run;
      const text = c.text
        .replaceAll("localhost:8080", `127.0.0.1:${cp.port}`)
        .replaceAll("localhost:15010", `127.0.0.1:${cp.xdsPort}`)
        .replaceAll("node bin/edgepilot.mjs", `node ${join(root, "bin/edgepilot.mjs")}`);
      const out = execFileSync("sh", ["-c", text], { cwd: dir, encoding: "utf8", timeout: 20_000 });
      try {
        run.check(out, c.after, dir);
      } catch (e) {
        throw new Error(`${c.text}\n${out}\n${e instanceof Error ? e.message : e}`);
      }
      // Ingest answers before the push: let the debounce publish before a read.
      if (c.text.includes("/v1/events")) await new Promise((r) => setTimeout(r, 200));
    }
  }, 60_000);
});
