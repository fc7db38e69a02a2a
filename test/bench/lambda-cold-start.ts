/**
 * Cold start of the three Lambda functions, as deployed: each entry file bundled by esbuild (one
 * ESM file, minified, as a CDK NodejsFunction builds it), then, per run, a fresh node process
 * imports the bundle and answers its first invocation over a local DynamoDB (dynalite). Reported:
 * import (module load: the init phase's code) and first answer (the first invocation, which loads
 * the sync record and answers), medians over `runs`. Lambda's own runtime start, the network to
 * DynamoDB and the code download are not in it.
 * `npx tsx test/bench/lambda-cold-start.ts [runs]`
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { localCredentials, startDynalite } from "../support/dynalite.ts";

const fns = ["ingest", "debounce", "xds"] as const;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.floor(s.length / 2)] as number);
}

/** Bundles the entries and the probe into a temporary directory; returns its path. */
async function bundle(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "edgepilot-lambda-"));
  const banner = {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  };
  const common = {
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    minify: true,
    banner,
  } as const;
  await build({
    ...common,
    entryPoints: Object.fromEntries(fns.map((f) => [f, `functions/lambda/${f}.ts`])),
    outdir: dir,
    outExtension: { ".js": ".mjs" },
  });
  await build({
    ...common,
    entryPoints: { probe: "test/bench/lambda-cold-probe.ts" },
    outdir: dir,
    outExtension: { ".js": ".mjs" },
  });
  return dir;
}

/** Medians per function over `runs` fresh processes. */
export async function measureLambdaColdStart(runs = 5) {
  const dynalite = await startDynalite();
  const dir = await bundle();
  const env = {
    ...process.env,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: localCredentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: localCredentials.secretAccessKey,
    DYNAMODB_ENDPOINT: dynalite.endpoint,
    DYNAMODB_TABLE: dynalite.table,
    EDGEPILOT_DEBOUNCE_FUNCTION: "debounce",
    EDGEPILOT_TOKEN: "ingest-token-for-the-cold-start-bench",
    XDS_AUTH: "token",
    EDGEPILOT_XDS_TOKEN: "xds-token-for-the-cold-start-bench",
    LOG_LEVEL: "warn",
  };
  const results = [];
  try {
    for (const fn of fns) {
      const samples: { importMs: number; firstAnswerMs: number; totalMs: number }[] = [];
      for (let i = 0; i < runs; i++) {
        // Asynchronously: dynalite answers from this process's event loop.
        const { stdout } = await promisify(execFile)(
          process.execPath,
          [join(dir, "probe.mjs"), join(dir, `${fn}.mjs`), fn],
          { env },
        );
        const line = stdout.trim().split("\n").at(-1) as string;
        samples.push(JSON.parse(line));
      }
      results.push({
        fn,
        bundleKiB: Math.round(statSync(join(dir, `${fn}.mjs`)).size / 1024),
        importMs: median(samples.map((s) => s.importMs)),
        firstAnswerMs: median(samples.map((s) => s.firstAnswerMs)),
        loadToAnswerMs: median(samples.map((s) => s.importMs + s.firstAnswerMs)),
        processTotalMs: median(samples.map((s) => s.totalMs)),
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await Promise.race([dynalite.stop(), new Promise((r) => setTimeout(r, 200))]);
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.argv[2] ?? 5);
  for (const r of await measureLambdaColdStart(runs))
    console.log(
      `${r.fn.padEnd(8)} bundle ${r.bundleKiB} KiB, module load ${r.importMs} ms, first answer ${r.firstAnswerMs} ms, load to answer ${r.loadToAnswerMs} ms (node process start to answer ${r.processTotalMs} ms), median of ${runs}`,
    );
  process.exit(0);
}
