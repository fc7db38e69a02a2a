/**
 * v1 Secret, gateway credentials only (the relay reads just the Secrets a Gateway names): stored
 * under keys.secret() with its material still base64, never logged, never in an object record or
 * a debug page. A change is a push naming `Secret/<ns>/<name>` that regenerates nothing shared:
 * the flush announces its SDS names (lib/resources/secret-changes.ts) and only gateway streams
 * holding one read it again. A Secret whose key does not match its certificate, or whose
 * certificate is not valid now, is not applied (the last good one stays served) and the batch's
 * answer says why, naming the data key, never its content.
 */
import { configKeyString, pushRequest } from "../../model/index.ts";
import { isProblem, secretMaterial } from "../../registry/kube/secret.ts";
import { materialHash, type StoredSecret } from "../../registry/kube/secret-store.ts";
import { keys } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import { verifySecretMaterial } from "../secret-verify.ts";
import type { KindHandler } from "./handler.ts";

function secretPush(ctx: IngestContext, namespace: string, name: string): Outcome {
  const configs = [configKeyString({ kind: "Secret", namespace, name })];
  return { kind: "applied", push: pushRequest({ full: false, configs, reason: "secret", start: ctx.now() }) };
}

/** Stores a gateway Secret's material (its check already refused a malformed one) and pushes its names. */
export const secretHandler: KindHandler = {
  async apply(ctx, obj): Promise<Outcome> {
    const { namespace = "", name, resourceVersion = "" } = obj.metadata;
    const data = (obj.data ?? {}) as Record<string, string>;
    const material = secretMaterial(data);
    if (isProblem(material))
      throw new Error(`Secret ${namespace}/${name} passed its check but does not read: ${material.message}`);
    const problem = await verifySecretMaterial(material, ctx.now());
    if (problem) {
      ctx.unsupported?.add(`Secret ${namespace}/${name}: ${problem.field} ${problem.message} (not applied)`);
      return { kind: "ignored", reason: `${problem.field} ${problem.message}` };
    }
    const key = keys.secret(ctx.cluster, namespace, name);
    const hash = await materialHash(material);
    const before = (await ctx.store.get<StoredSecret>(key))?.value;
    if (before?.hash === hash) return { kind: "unchanged" };
    const stored: StoredSecret = { cluster: ctx.cluster, namespace, name, resourceVersion, material, hash };
    await ctx.store.put(key, stored);
    return secretPush(ctx, namespace, name);
  },

  async remove(ctx, ref): Promise<Outcome> {
    if (!(await ctx.store.delete(keys.secret(ctx.cluster, ref.namespace, ref.name))))
      return { kind: "unchanged" };
    return secretPush(ctx, ref.namespace, ref.name);
  },
};
