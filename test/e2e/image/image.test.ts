/**
 * The Dockerfile's steps without a Docker engine (none runs here): the build context is what
 * .dockerignore admits; the build stage's `npm run build` runs in a copy of that context (lib/gen
 * and the full node_modules stand in for its `npm ci`, whose postinstall generates lib/gen); the
 * deps stage's production tree is the lockfile's non-dev packages (as `npm ci --omit=dev`
 * installs them; EDGEPILOT_IMAGE_NPM=1 runs the real `npm ci --omit=dev --ignore-scripts --offline`
 * instead); the runtime stage is assembled from its COPY lines. Then, with no devDependency (tsx,
 * typescript) resolvable, the compiled `serve` answers /ready 200, `relay --help`, `agent --help`
 * and `version` (the build's commit) answer. Not exercised: the base image, `npm ci` against the
 * registry, `USER` and the ln -s onto PATH. About 20 s (tsc's build is most of it).
 */
import { execFileSync, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/runtime.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");

/** The Dockerfile's stages: name, base, and its instructions (continuation lines joined). */
interface Stage {
  name: string;
  base: string;
  lines: string[];
}
function stages(text: string): Stage[] {
  const out: Stage[] = [];
  const lines = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  for (const line of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) out.push({ base: from[1] as string, name: from[2] ?? "final", lines: [] });
    else out.at(-1)?.lines.push(line);
  }
  return out;
}

/** .dockerignore's verdict on a context path (its last matching pattern wins, `!` admits). */
function admitted(path: string, patterns: string[]): boolean {
  let ok = true;
  for (const raw of patterns) {
    const neg = raw.startsWith("!");
    const p = neg ? raw.slice(1) : raw;
    const hit = p === "*" ? true : path === p || path.startsWith(`${p}/`);
    if (hit) ok = neg;
  }
  return ok;
}
const ignore = readFileSync(join(root, ".dockerignore"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l !== "" && !l.startsWith("#"));

function filesUnder(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isSymbolicLink()) return [relative(base, full)];
    return e.isDirectory() ? filesUnder(full, base) : [relative(base, full)];
  });
}

const all = stages(dockerfile);
const stage = (name: string) => all.find((s) => s.name === name) as Stage;
const copies = (s: Stage) =>
  s.lines
    .filter((l) => /^COPY\s/i.test(l))
    .map((l) => {
      const words = l.split(/\s+/).slice(1);
      const from = words[0]?.startsWith("--from=") ? (words.shift() as string).slice(7) : undefined;
      const dest = words.pop() as string;
      return { from, sources: words, dest };
    });
const workdir = (s: Stage) =>
  (s.lines.find((l) => /^WORKDIR\s/i.test(l)) as string).split(/\s+/)[1] as string;

/** Whether the checkout's dist/ is built (with its build-info) after every source was last changed. */
function distUpToDate(): boolean {
  const built = statSync(join(root, "dist/build-info.json"), { throwIfNoEntry: false })?.mtimeMs;
  const entry = statSync(join(root, "dist/functions/node/main.js"), { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined || entry === undefined) return false;
  const newest = Math.max(
    ...["functions", "lib"].flatMap((d) =>
      filesUnder(join(root, d))
        .filter((f) => f.endsWith(".ts"))
        .map((f) => statSync(join(root, d, f)).mtimeMs),
    ),
    statSync(join(root, "tsconfig.build.json")).mtimeMs,
  );
  return Math.min(built, entry) > newest;
}

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "edgepilot-image-"));
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("Dockerfile", () => {
  it("is multi-stage: build (npm ci, npm run build), deps (npm ci --omit=dev), a non-root runtime", () => {
    expect(all.map((s) => s.name)).toEqual(["build", "deps", "final"]);
    expect(stage("build").lines).toEqual(expect.arrayContaining(["RUN npm ci --no-audit --no-fund"]));
    expect(stage("build").lines.some((l) => /^RUN .*npm run build$/.test(l))).toBe(true);
    expect(stage("deps").lines.some((l) => /^RUN npm ci --omit=dev --ignore-scripts\b/.test(l))).toBe(true);
    const final = stage("final");
    expect(final.base).toMatch(/^node:24-slim$/);
    const user = final.lines.find((l) => /^USER\s/.test(l));
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER\s+(root|0)(:|$)/);
    // The server's V8 flag that NODE_OPTIONS refuses (--no-allocation-site-pretenuring), as npm start passes it.
    expect(final.lines).toContain(
      'ENTRYPOINT ["node", "--no-allocation-site-pretenuring", "/app/bin/edgepilot.mjs"]',
    );
    expect(final.lines).toContain('CMD ["serve"]');
    // Nothing from the build stage but dist/: no sources, no dev node_modules.
    for (const c of copies(final).filter((c) => c.from === "build")) expect(c.sources).toEqual(["/src/dist"]);
  });

  it("copies only what .dockerignore admits, and the context holds no node_modules, dist, lib/gen, .git or tests", () => {
    for (const s of all)
      for (const c of copies(s).filter((c) => c.from === undefined))
        for (const src of c.sources) {
          expect(existsSync(join(root, src)), `${s.name}: COPY ${src}`).toBe(true);
          const inContext = admitted(src, ignore) || ignore.some((p) => p.startsWith(`!${src}/`));
          expect(inContext, `${s.name}: COPY ${src} is ignored`).toBe(true);
        }
    for (const p of [
      "node_modules/tsx/package.json",
      "dist/functions/node/main.js",
      "lib/gen/x.ts",
      ".git",
      "test/e2e/x.ts",
      ".dev.vars",
      "README.md",
    ])
      expect(admitted(p, ignore), p).toBe(false);
    expect(admitted("lib/config.ts", ignore)).toBe(true);
  });
});

describe("the image's stages, performed", () => {
  const ctx = () => join(tmp, "context");
  const dirs = {
    build: () => join(tmp, "build"),
    deps: () => join(tmp, "deps"),
  };
  const app = () => join(tmp, "app");

  it("builds, installs production dependencies only, and the compiled entries run without tsx", async () => {
    // The build context.
    for (const top of readdirSync(root)) {
      if (!admitted(top, ignore) && !ignore.some((p) => p.startsWith(`!${top}/`))) continue;
      for (const f of statSync(join(root, top)).isDirectory()
        ? filesUnder(join(root, top)).map((f) => join(top, f))
        : [top])
        if (admitted(f, ignore)) cpSync(join(root, f), join(ctx(), f));
    }
    expect(existsSync(join(ctx(), "lib/gen"))).toBe(false);

    // Stage build: its COPY lines from the context; `npm ci` (with postinstall's gen) stood in for
    // by the checkout's full node_modules and lib/gen; then its `npm run build`, as written.
    const build = stage("build");
    for (const c of copies(build))
      for (const src of c.sources)
        cpSync(join(ctx(), src), join(dirs.build(), c.dest === "./" ? src : c.dest), {
          recursive: true,
        });
    symlinkSync(join(root, "node_modules"), join(dirs.build(), "node_modules"));
    cpSync(join(root, "lib/gen"), join(dirs.build(), "lib/gen"), { recursive: true });
    // The build is the slow part (tsc, 15-35 s on this machine): a checkout's dist/ newer than every
    // source is that same `npm run build`'s output, and is taken as it is.
    const fresh = distUpToDate();
    if (fresh) execFileSync("cp", ["-al", join(root, "dist"), join(dirs.build(), "dist")]);
    else
      execFileSync("npm", ["run", "build"], {
        cwd: dirs.build(),
        env: { ...process.env, EDGEPILOT_COMMIT: "0123456789abcdef0123456789abcdef01234567" },
        stdio: "pipe",
      });
    // Stage deps: the production tree `npm ci --omit=dev` installs from the lockfile.
    mkdirSync(join(dirs.deps(), "node_modules"), { recursive: true });
    const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
      packages: Record<string, { dev?: boolean; optional?: boolean }>;
    };
    if (process.env.EDGEPILOT_IMAGE_NPM === "1") {
      for (const f of ["package.json", "package-lock.json"]) cpSync(join(root, f), join(dirs.deps(), f));
      execFileSync("npm", ["ci", "--omit=dev", "--ignore-scripts", "--offline", "--no-audit", "--no-fund"], {
        cwd: dirs.deps(),
        stdio: "pipe",
      });
    } else {
      for (const [key, p] of Object.entries(lock.packages)) {
        if (key === "" || p.dev || key.indexOf("node_modules/", 1) > 0) continue;
        const from = join(root, key);
        if (!existsSync(from)) {
          expect(p.optional, `${key} is a production dependency but is not installed`).toBe(true);
          continue;
        }
        mkdirSync(dirname(join(dirs.deps(), key)), { recursive: true });
        execFileSync("cp", ["-al", from, join(dirs.deps(), key)]);
      }
    }

    // The runtime stage, from its COPY lines.
    const final = stage("final");
    mkdirSync(app(), { recursive: true });
    for (const c of copies(final)) {
      for (const src of c.sources) {
        const origin = c.from
          ? join(dirs[c.from as keyof typeof dirs](), relative(workdir(stage(c.from)), src))
          : join(ctx(), src);
        const dest = join(app(), c.dest === "./" ? (c.from ? "" : src) : c.dest);
        if (c.from) execFileSync("cp", ["-al", origin, dest]);
        else cpSync(origin, dest, { recursive: true });
      }
    }

    // Production only: no devDependency is there, none resolves from the app, no TypeScript runs.
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const devOnly = Object.entries(lock.packages).filter(
      ([k, p]) => p.dev && k.indexOf("node_modules/", 1) < 0,
    );
    expect(devOnly.map(([k]) => k)).toEqual(
      expect.arrayContaining(["node_modules/tsx", "node_modules/typescript"]),
    );
    for (const [key] of devOnly)
      expect(existsSync(join(app(), key)), `${key} (dev only) in the image`).toBe(false);
    for (const dep of Object.keys(pkg.dependencies))
      expect(existsSync(join(app(), "node_modules", dep)), dep).toBe(true);
    const resolve = (name: string) =>
      execFileSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import(${JSON.stringify(name)}).then(() => console.log("yes"), () => console.log("no"))`,
        ],
        {
          cwd: app(),
          encoding: "utf8",
        },
      ).trim();
    expect(resolve("tsx")).toBe("no");
    expect(resolve("hono")).toBe("yes");
    expect(filesUnder(app()).filter((f) => !f.startsWith("node_modules/") && /\.ts$/.test(f))).toEqual([]);

    const run = (args: string[], env: Record<string, string> = {}) =>
      execFileSync(process.execPath, [join(app(), "bin/edgepilot.mjs"), ...args], {
        cwd: app(),
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", HOME: app(), NODE_ENV: "production", ...env },
      });
    const commit = fresh ? "([0-9a-f]{40}|unknown)" : "0123456789abcdef0123456789abcdef01234567";
    expect(run(["version"])).toMatch(new RegExp(`^edgepilot \\d+\\.\\d+\\.\\d+\\ncommit ${commit}\\nnode v`));
    // Every command the usage lists has its compiled entry (tsconfig.build.json) and answers --help.
    const listed = [...run(["--help"]).matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((m) => m[1] as string);
    expect(listed).toEqual(expect.arrayContaining(["serve", "relay", "agent", "version"]));
    for (const command of listed)
      expect(run([command, "--help"])).toMatch(new RegExp(`^usage: edgepilot ${command}`));

    const [port, xdsPort] = [await freePort(), await freePort()];
    const serve = spawn(process.execPath, [join(app(), "bin/edgepilot.mjs"), "serve"], {
      cwd: app(),
      env: {
        PATH: process.env.PATH ?? "",
        NODE_ENV: "production",
        PORT: String(port),
        XDS_PORT: String(xdsPort),
        HOST: "127.0.0.1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    serve.stdout.on("data", (d) => {
      out += d;
    });
    serve.stderr.on("data", (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((r) => serve.once("exit", (code) => r(code)));
    try {
      let status = 0;
      for (let i = 0; i < 200 && status !== 200 && serve.exitCode === null; i++) {
        status = await fetch(`http://127.0.0.1:${port}/ready`).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status, out).toBe(200);
    } finally {
      serve.kill("SIGTERM");
    }
    expect(await exited, out).toBe(0);
  }, 90_000);
});
