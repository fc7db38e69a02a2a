/**
 * MESH_CONFIG_FILE and MESH_NETWORKS_FILE on Node: each file is read at start (a missing or
 * unreadable one stops start-up naming its variable) and again whenever its directory changes,
 * since a mounted ConfigMap changes by swapping a symlink (`..data`) rather than writing the file.
 * Each read goes through the core's ingest (IngestCore.meshFile), so it pushes like the ConfigMap;
 * an invalid file is logged with the field and the previous record stays. A variable left unset
 * drops a record a file wrote before a restart.
 */
import { type FSWatcher, watch } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { IngestCore } from "../../lib/core/ingest.ts";
import { meshFileVariable } from "../../lib/ingest/mesh-file.ts";
import type { MeshRecordKind } from "../../lib/ingest/mesh-records.ts";
import { logWarn } from "../../lib/log/line-log.ts";
import { describeProblem } from "../../lib/registry/mesh/yaml-document.ts";
import { createSerial } from "../../lib/serial.ts";

export interface MeshFilesOptions {
  files: { mesh?: string; meshNetworks?: string };
  core: Pick<IngestCore, "meshFile">;
  log: (line: string) => void;
}

/** The running file watchers. */
export interface MeshFiles {
  /** Reads every file again now (what a directory change does); resolves once applied. */
  reload(): Promise<void>;
  stop(): void;
}

/** Reads each configured file, applies it, and watches it; rejects naming the variable of a file it cannot read. */
export async function startMeshFiles(options: MeshFilesOptions): Promise<MeshFiles> {
  const { core, log } = options;
  const paths: [MeshRecordKind, string | undefined][] = [
    ["MeshConfig", options.files.mesh],
    ["MeshNetworks", options.files.meshNetworks],
  ];
  const last = new Map<MeshRecordKind, string>();
  // One read at a time: a burst of directory events applies each content once, in order.
  const serial = createSerial();
  const apply = async (kind: MeshRecordKind, path: string, text: string) => {
    if (last.get(kind) === text) return;
    last.set(kind, text);
    const r = await core.meshFile(kind, { path, text });
    const variable = meshFileVariable[kind];
    if (r.ok) log(`edgepilot: ${variable} ${path} applied${r.pushed ? " (pushing)" : " (no change)"}`);
    else
      logWarn(
        log,
        `edgepilot: ${variable} ${path} is invalid, the previous record stays: ${describeProblem(r.problem)}`,
      );
  };
  for (const [kind, path] of paths) {
    if (path === undefined) {
      await core.meshFile(kind, undefined);
      continue;
    }
    const key = kind === "MeshConfig" ? "mesh" : "meshNetworks";
    log(`edgepilot: ${meshFileVariable[kind]} is set: the istio ConfigMap's \`${key}\` key is ignored`);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (e) {
      throw new Error(`${meshFileVariable[kind]}=${path}: cannot read: ${(e as Error).message}`);
    }
    await apply(kind, path, text);
  }
  const reload = () =>
    serial(async () => {
      for (const [kind, path] of paths) {
        if (path === undefined) continue;
        // Between the swap's two renames the file may be missing for a moment: the next event reads it.
        const text = await readFile(path, "utf8").catch(() => undefined);
        if (text !== undefined) await apply(kind, path, text);
      }
    });
  const watchers: FSWatcher[] = [];
  for (const dir of new Set(paths.flatMap(([, p]) => (p === undefined ? [] : [dirname(p)])))) {
    const w = watch(dir, () => void reload().catch((e) => logWarn(log, `edgepilot: mesh files: ${e}`)));
    w.on("error", (e) => logWarn(log, `edgepilot: watching ${dir} for the mesh files failed: ${e.message}`));
    watchers.push(w);
  }
  return {
    reload,
    stop() {
      for (const w of watchers) w.close();
    },
  };
}
