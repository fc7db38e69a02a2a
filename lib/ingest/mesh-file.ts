/**
 * MESH_CONFIG_FILE / MESH_NETWORKS_FILE (istiod's --meshConfig / --networksConfig) through ingest:
 * a file's text is parsed and validated as the ConfigMap's key is, stored with source
 * `file:<path>` and pushed the same way (lib/ingest/mesh-records.ts). An invalid file changes
 * nothing and says why; no file configured removes a record an earlier file wrote, so a restart
 * without the variable falls back to the ConfigMap or the defaults.
 */

import { enqueuePush } from "../push/queue.ts";
import type { Problem } from "../registry/check.ts";
import { parseMeshConfig } from "../registry/mesh/parse-mesh-config.ts";
import { parseMeshNetworks } from "../registry/mesh/parse-mesh-networks.ts";
import type { ApplyDeps } from "./apply.ts";
import { type MeshRecordKind, putMeshRecord } from "./mesh-records.ts";

/** The variable that names each record's file. */
export const meshFileVariable: Readonly<Record<MeshRecordKind, string>> = {
  MeshConfig: "MESH_CONFIG_FILE",
  MeshNetworks: "MESH_NETWORKS_FILE",
};

/** A file's path and content. */
export interface MeshFile {
  path: string;
  text: string;
}

/** What applying a file did: stored (and whether it queued a push), or refused with the problem. */
export type MeshFileResult = { ok: true; pushed: boolean } | { ok: false; problem: Problem };

/** The source string of a file's record. */
export const fileSource = (path: string): string => `file:${path}`;

/** Applies `file` as the `kind` record (undefined: no file configured), queueing the push it needs. */
export async function applyMeshFile(
  deps: ApplyDeps,
  kind: MeshRecordKind,
  file: MeshFile | undefined,
): Promise<MeshFileResult> {
  let push: Awaited<ReturnType<typeof putMeshRecord>>;
  if (file === undefined) push = await putMeshRecord(deps, kind, undefined, "file:");
  else if (kind === "MeshConfig") {
    const r = parseMeshConfig(file.text);
    if (!r.ok) return r;
    const { model, unsupported } = r.value;
    push = await putMeshRecord(deps, kind, { model, unsupported, source: fileSource(file.path) });
  } else {
    const r = parseMeshNetworks(file.text);
    if (!r.ok) return r;
    push = await putMeshRecord(deps, kind, { model: r.value, source: fileSource(file.path) });
  }
  if (push) await enqueuePush(deps.store, push, deps.now());
  return { ok: true, pushed: push !== undefined };
}
