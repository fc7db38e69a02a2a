// Writes dist/build-info.json after `tsc -p tsconfig.build.json`: the commit the build is of, for
// `edgepilot version` where there is no .git (the container image). EDGEPILOT_COMMIT (a Docker
// build argument) wins; else git's HEAD; else "unknown".
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
let commit = process.env.EDGEPILOT_COMMIT || "";
if (commit === "") {
  try {
    commit = execFileSync("git", ["rev-parse", "HEAD"], {
      cwd: root,
      encoding: "utf8",
      stdio: "pipe",
    }).trim();
  } catch {
    commit = "unknown";
  }
}
if (!/^[0-9A-Za-z._-]{1,64}$/.test(commit)) {
  console.error(`build-info: EDGEPILOT_COMMIT=${JSON.stringify(commit)}: want a commit hash or tag`);
  process.exit(2);
}
mkdirSync(join(root, "dist"), { recursive: true });
writeFileSync(join(root, "dist/build-info.json"), `${JSON.stringify({ commit })}\n`);
