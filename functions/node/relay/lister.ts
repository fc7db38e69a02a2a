/** Lists one kind completely, page by page (limit/continue), as one List. */
import type { KubeConfig } from "@kubernetes/client-node";
import { type KindSpec, kindPath, kindQuery } from "../../../lib/relay/kinds.ts";
import { asListPage, type KubeList, mergePages } from "../../../lib/relay/list.ts";
import { kubeGet } from "./kube-http.ts";

/**
 * The complete list of `kind` at one resourceVersion. Pages after the first use the continue token,
 * so the API server serves them from the first page's snapshot; if the token expires (410) the
 * error is thrown and the caller lists again from the start.
 */
export async function listKind(
  kc: KubeConfig,
  kind: KindSpec,
  pageSize: number,
  signal: AbortSignal,
): Promise<KubeList> {
  const pages: KubeList[] = [];
  let token: string | undefined;
  do {
    const page = asListPage(
      await kubeGet(kc, kindPath(kind), { ...kindQuery(kind), limit: pageSize, continue: token }, signal),
    );
    if (!page.ok) throw new Error(`list ${kindPath(kind)}: ${page.error}`);
    pages.push(page.list);
    token = page.list.metadata.continue || undefined;
  } while (token !== undefined);
  return mergePages(pages);
}
