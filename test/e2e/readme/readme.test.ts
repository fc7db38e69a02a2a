/**
 * The README and every docs page stay true: every command in the ```sh blocks of README.md and of
 * each Markdown file under docs/ and examples/ is either run here, against a real control plane on free ports
 * (`localhost:8080` and `:15010` rewritten to them), with its output checked against what the page
 * shows after it, or named below with the test that exercises it (a file that must exist and
 * contain the marker). A command nobody covers, or an entry no command matches any more, fails.
 * The quick start runs for real: the example client resolves the posted service through the
 * control plane and proxy-status must show it SYNCED.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type RunningControlPlane, startControlPlane } from "../support/runtime.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));

/** The pages whose commands must stay true: the README first, then docs/ and examples/, sorted. */
function pages(): string[] {
  const under = (dir: string) =>
    readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".md"))
      .map((f) => join(dir, f))
      .sort();
  return ["README.md", ...under("docs"), ...under("examples")];
}

/** A README command: its text (continuations and quoted newlines kept) and the comment lines after it. */
interface Command {
  text: string;
  after: string[];
  /** The page it is on (set when pages are read). */
  page?: string;
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
    match: /^curl -si localhost:8080\/v1\/gateway-status\?cluster=east /,
    by: "test/e2e/gateway/gateway-api.test.ts",
    marker: "/v1/gateway-status",
  },
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
  { match: /^npm start( &)?$/, by: "test/e2e/support/runtime.ts", marker: "functions/node/main.ts" },
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
  { match: /^npm install$/, by: "package.json", marker: '"postinstall": "npm run gen"' },
  // docs/tasks/certificates.md: a cluster's issuer and a workload's token are not here; the CA
  // suite starts the same configuration, makes the same CSR with openssl and sends curl's request.
  {
    match: /^ROOT_CA_DIR=\S+ XDS_AUTH=jwt .* npm start$/,
    by: "test/e2e/ca/ca.test.ts",
    marker: "ROOT_CA_DIR: caDir",
  },
  {
    match: /^openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 /,
    by: "test/e2e/ca/ca.test.ts",
    marker: 'execFileSync("openssl", ["req", "-new", "-newkey", "ec"',
  },
  {
    match: /^curl -s localhost:8080\/istio\.v1\.auth\.IstioCertificateService\/CreateCertificate /,
    by: "test/e2e/ca/ca.test.ts",
    marker: '"content-type": "application/json", authorization',
  },
  // docs/tasks/certificates.md through the agent: no cluster to make a token; the agent's
  // certificate suite writes one for istio-ca, starts the agent with these settings and reads the SAN.
  {
    match:
      /^TOKEN_FILE=\$\(mktemp\); kubectl create token productpage -n default --audience istio-ca > \$TOKEN_FILE$/,
    by: "test/e2e/agent/certs.test.ts",
    marker: 'claims({ aud: ["istio-ca"]',
  },
  {
    match:
      /^POD_NAMESPACE=default SERVICE_ACCOUNT=productpage EDGEPILOT_AGENT_UPSTREAM=\S+ .* OUTPUT_CERTS=\S+ npm run agent &$/,
    by: "test/e2e/agent/certs.test.ts",
    marker: 'SERVICE_ACCOUNT: "productpage"',
  },
  {
    match: /^openssl x509 -in \S+\/cert-chain\.pem -noout -ext subjectAltName$/,
    by: "test/e2e/agent/certs.test.ts",
    marker: "getPeerX509Certificate()?.subjectAltName",
  },
  // infra/aws: the CLI cannot deploy here (no AWS account, no network); the synth test runs the
  // same app, and `npx cdk synth` itself, offline.
  {
    match: /^cd infra\/aws$/,
    by: "test/unit/infra/aws-cdk.test.ts",
    marker: 'cwd: join(root, "infra", "aws")',
  },
  {
    match: /^npx cdk synth -c xdsAuth=token$/,
    by: "test/unit/infra/aws-cdk.test.ts",
    marker: '"-c", "xdsAuth=token"',
  },
  { match: /^npx cdk bootstrap$/, by: "test/unit/infra/aws-cdk.test.ts", marker: '["cdk", "synth"' },
  {
    match: /^npx cdk deploy -c xdsJwtIssuer=\S+ +-c xdsJwksUrl=\S+$/,
    by: "test/unit/infra/aws-cdk.test.ts",
    marker: '["cdk", "synth"',
  },
  // docs/tasks/aws.md's plug-in CA: the deployed xds entry reads the four PEM secrets through the
  // extension and signs under them; the synth test gives the stack their ARNs.
  {
    match:
      /^[A-Z_]+_ARN=\$\(aws secretsmanager create-secret --name edgepilot\/[a-z-]+ --secret-string file:\/\/[a-z-]+\.pem --query ARN --output text\)$/,
    by: "test/e2e/lambda/ca-entry.test.ts",
    marker: "SecretString: pem",
  },
  {
    match:
      /^npx cdk deploy -c xdsJwtIssuer=\S+ +-c xdsJwksUrl=\S+ +-c caCertSecretArn=\$CA_CERT_ARN -c caKeySecretArn=\$CA_KEY_ARN +-c certChainSecretArn=\$CERT_CHAIN_ARN -c rootCertSecretArn=\$ROOT_CERT_ARN$/,
    by: "test/unit/infra/aws-cdk.test.ts",
    marker: "pluginCaSecretArns",
  },
  {
    match: /^TOKEN=\$\(aws secretsmanager get-secret-value --secret-id <IngestTokenSecret> /,
    by: "test/unit/infra/aws-cdk.test.ts",
    marker: "outputs.IngestTokenSecret",
  },
  {
    match:
      /^POD_NAMESPACE=default EDGEPILOT_AGENT_UPSTREAM=https:\/\/<xds-id>\.lambda-url\.\S+ .*PROTOCOL=watch .*UPSTREAM_HTTP=1\.1 .* npm run agent$/,
    by: "test/e2e/agent/agent-worker.test.ts",
    marker: "watch",
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
  /** It keeps running (the example client): started, checked on its output so far until the check passes, stopped at the end. */
  background?: true;
  /** Run again until the check passes: it reads state that settles after the command before it. */
  retry?: true;
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
    // docs/reference/kinds.md: the two Gateways of one name are two objects of two kinds, neither refused.
    match: /^curl -s localhost:8080\/v1\/events .*"kind":"Gateway"/s,
    check: (out) => {
      const summary = JSON.parse(out) as {
        events: number;
        rejected: unknown[];
        ignored: Record<string, number>;
      };
      expect(summary).toMatchObject({ events: 2, rejected: [] });
      // Until their handlers exist both are ignored, each under its own id.
      for (const [kind, n] of Object.entries(summary.ignored)) {
        expect(["Gateway", "KubernetesGateway"]).toContain(kind);
        expect(n).toBe(1);
      }
    },
  },
  {
    // docs/reference/kinds.md: a resync of the Gateway API's Gateway, by id or by object kind and group.
    match:
      /^curl -s 'localhost:8080\/v1\/resync\?cluster=Kubernetes&kind=(KubernetesGateway|Gateway&group=gateway\.networking\.k8s\.io)' /,
    check: (out) =>
      expect(JSON.parse(out)).toMatchObject({ events: 0, deleted: expect.any(Number), rejected: [] }),
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
    match: /^curl -s 'localhost:8080\/debug\/authorizationz\?proxyID=/,
    // No such proxy is connected while the README runs: a 404 saying so.
    check: (out) =>
      expect(JSON.parse(out)).toEqual({ error: expect.stringContaining("no live status record") }),
  },
  {
    match: /^curl -s 'localhost:8080\/debug\/configz\?mtls&limit=50'$/,
    // Every pod the README ingested, each with its effective mode (no policy: PERMISSIVE).
    check: (out) => {
      const items = JSON.parse(out) as { mtls?: { mode?: string } }[];
      expect(Array.isArray(items)).toBe(true);
      for (const i of items) expect(i.mtls?.mode).toBe("PERMISSIVE");
    },
  },
  {
    match: /^node examples\/proxyless-grpc\/client\.mjs$/,
    background: true,
    // The quick start's client: its node, then a call that reached the backend through xDS.
    check: (out, after) => {
      expect(out).toContain(after[0]);
      expect(out).toContain(after.at(-1));
    },
  },
  {
    match: /^node bin\/edgepilot\.mjs proxy-status$/,
    retry: true,
    // The header, and the example client's row with the cells the page shows (SYNCED for every type).
    check: (out, after) => {
      const cells = (line: string) => line.trim().split(/\s{2,}/);
      const [header, row] = after.map(cells) as [string[], string[]];
      const lines = out.trimEnd().split("\n").map(cells);
      expect(lines[0]).toEqual(header);
      const shown = lines.find((l) => l[0] === row[0]);
      expect(shown?.slice(0, 6), `no SYNCED row for ${row[0]}`).toEqual(row.slice(0, 6));
    },
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

const commands: Command[] = pages().flatMap((page) =>
  readmeCommands(readFileSync(join(root, page), "utf8")).map((c) => ({ ...c, page })),
);
const matches = (c: Command) => [
  ...covered.filter((e) => e.match.test(c.text)),
  ...runs.filter((e) => e.match.test(c.text)),
];
const where = (c: Command) => `${c.page}: ${JSON.stringify(c.text)}`;

describe("README and docs commands", () => {
  it("are found (and the parser keeps quoted newlines and continuations)", () => {
    expect(commands.filter((c) => c.page === "README.md").length).toBeGreaterThan(5);
    expect(new Set(commands.map((c) => c.page)).size).toBeGreaterThan(8);
    expect(readmeCommands("```sh\na 'x\ny' \\\n  b   # c\n# {\"k\":1}\n```\n")).toEqual([
      { text: "a 'x\ny'    b", after: ['{"k":1}'] },
    ]);
  });

  it("each is run here or covered by exactly one named test, and every entry is still used", () => {
    for (const c of commands) expect(matches(c).length, `command not covered: ${where(c)}`).toBe(1);
    for (const e of [...covered, ...runs])
      expect(
        commands.some((c) => e.match.test(c.text)),
        `no command matches ${e.match}`,
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

/** Polls `check` until it passes or `ms` elapse; then throws its last error. */
async function eventually(check: () => void | Promise<void>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`${what}: ${e instanceof Error ? e.message : e}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("README and docs commands, run against a control plane", () => {
  let cp: RunningControlPlane;
  let dir: string;
  let backendPort: number;
  const background: ChildProcess[] = [];
  beforeAll(async () => {
    // As the pages' examples assume: no token, loopback, so ingest and xDS need no credentials.
    cp = await startControlPlane({ EDGEPILOT_TOKEN: "", PILOT_DEBOUNCE_AFTER: "10ms" });
    dir = mkdtempSync(join(tmpdir(), "edgepilot-readme-"));
    backendPort = await freePort();
  });
  afterAll(async () => {
    for (const child of background) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The push counter; an ingest call that queued a push is followed by a read only once it moved. */
  const pushVersion = async () =>
    (
      (await (await fetch(`http://127.0.0.1:${cp.port}/debug/push_status?limit=1`)).json()) as {
        pushVersion: number;
      }
    ).pushVersion;

  it("each runnable command succeeds and prints what its page shows (the quick start's client SYNCED)", async () => {
    // A command shown on several pages runs once, and is checked against each page.
    const texts = [...new Set(commands.map((c) => c.text))].filter((t) => runs.some((r) => r.match.test(t)));
    const ran = new Set<Run>();
    const env = {
      ...process.env,
      EDGEPILOT_URL: `http://127.0.0.1:${cp.port}`,
      XDS_PORT: String(cp.xdsPort),
      BACKEND_PORT: String(backendPort),
    };
    for (const original of texts) {
      const run = runs.find((r) => r.match.test(original)) as Run;
      ran.add(run);
      const shown = commands.filter((c) => c.text === original);
      const text = original
        .replaceAll("localhost:8080", `127.0.0.1:${cp.port}`)
        .replaceAll("localhost:15010", `127.0.0.1:${cp.xdsPort}`)
        .replaceAll("50051", String(backendPort))
        .replaceAll("node bin/edgepilot.mjs", `node ${join(root, "bin/edgepilot.mjs")}`)
        .replaceAll("node examples/", `node ${join(root, "examples/")}`);
      const checkAll = (out: string) => {
        for (const c of shown)
          try {
            run.check(out, c.after, dir);
          } catch (e) {
            throw new Error(`${where(c)}\n${out}\n${e instanceof Error ? e.message : e}`);
          }
      };
      if (run.background) {
        const child = spawn("sh", ["-c", `exec ${text}`], {
          cwd: dir,
          env,
          stdio: ["ignore", "pipe", "pipe"],
        });
        background.push(child);
        let out = "";
        child.stdout?.on("data", (d) => {
          out += d;
        });
        child.stderr?.on("data", (d) => {
          out += d;
        });
        await eventually(() => checkAll(out), 30_000, "a background command");
        continue;
      }
      const before = original.includes("/v1/events") ? await pushVersion() : undefined;
      const once = () =>
        execFileSync("sh", ["-c", text], { cwd: dir, env, encoding: "utf8", timeout: 20_000 });
      let out = "";
      if (run.retry)
        await eventually(
          () => {
            out = once();
            checkAll(out);
          },
          20_000,
          "a command whose state settles",
        );
      else {
        out = once();
        checkAll(out);
      }
      // Ingest answers before the push: a read waits until the push it queued is published.
      if (before !== undefined && (JSON.parse(out) as { push?: unknown }).push)
        await eventually(
          async () => expect(await pushVersion()).toBeGreaterThan(before),
          10_000,
          "the push of an ingest call",
        );
    }
    expect([...runs].filter((r) => !ran.has(r))).toEqual([]);
  }, 120_000);
});
