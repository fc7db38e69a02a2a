/**
 * One stream's view over the host's Views (view-source.ts): bound to its node on the first request,
 * it takes each push's changes as its namespace, sidecar, server and network bindings see them.
 */
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import type { Push, ResourceChange } from "../resources/changes.ts";
import { type NamespaceView, sharedView } from "../resources/view-table.ts";
import type { GatewayBinding } from "./gateway-snapshots.ts";
import { gatewayChanges } from "./gateway-source.ts";
import type { InboundBinding } from "./proxyless-inbound.ts";
import type { SidecarBinding } from "./sidecar-snapshots.ts";
import { sidecarChanges } from "./sidecar-source.ts";
import type { ResourceSource } from "./source.ts";
import type { NodeView, Views } from "./view-source.ts";

/** The changes a stream's session takes for one push; `changes` undefined: re-read everything. */
export interface TakenChanges {
  changes: readonly ResourceChange[] | undefined;
}

/** A stream's view: fixed by the namespace of its first request's node, re-resolved when a push changes it. */
export interface StreamView {
  /** The stream's source: the shared one until bound, then through its view. */
  readonly source: ResourceSource;
  /** Binds the stream to `node`'s namespace the first time a node arrives; a promise only then. */
  bind(node: Node | undefined): Promise<void> | undefined;
  /**
   * The changes the stream's session takes for a push: at once (no promise on the usual push), or
   * a promise when the push changed the view and it is looked up again first.
   */
  push(push: Push): TakenChanges | Promise<TakenChanges>;
}

/** The view of one stream over `base` (sessions are built with `stream.source`). */
export function createStreamView(views: Views, base: ResourceSource): StreamView {
  let bound = false;
  let view: NodeView = sharedView("");
  let current: ResourceSource = base;
  const set = (v: NodeView) => {
    view = v;
    current = views.source(v, base);
  };
  // The namespace's view looked up again, the node's own bindings kept.
  const rebind = (v: NamespaceView): NodeView => {
    const { sidecar, gateway, secrets, inbound, network } = view;
    return {
      ...v,
      ...(sidecar && { sidecar }),
      ...(gateway && { gateway }),
      ...(secrets && { secrets }),
      ...(inbound && { inbound }),
      ...(network && { network }),
    };
  };
  // An Envoy sidecar's stream (view.sidecar): its own rules for what a push gives (sidecar-source.ts).
  const sidecarPush = (sidecar: SidecarBinding, push: Push) => {
    const out = views.changesFor(view, push.changes);
    if (out !== undefined) return sidecarChanges(views.sidecars, sidecar, push, out);
    return views.forNamespace(view.namespace).then((v) => {
      set(rebind(v));
      return { changes: undefined };
    });
  };
  // A gateway proxy's stream (view.gateway): its own rules for what a push gives (gateway-source.ts).
  const gatewayPush = (gateway: GatewayBinding, push: Push) => {
    const out = views.changesFor(view, push.changes);
    if (out !== undefined)
      return gatewayChanges(views.gateways, gateway, push, out, views.sidecars.endpointsOnly(push));
    return views.forNamespace(view.namespace).then((v) => {
      set(rebind(v));
      return { changes: undefined };
    });
  };
  // A proxyless server's stream: its listeners are derived again; a change re-reads everything.
  const serverPush = (server: InboundBinding, out: readonly ResourceChange[]) => {
    const changed = views.inbound.changed(server);
    if (typeof changed === "boolean") return { changes: changed ? undefined : out };
    return changed.then((c) => ({ changes: c ? undefined : out }));
  };
  return {
    source: {
      get: (typeUrl, names) => current.get(typeUrl, names),
      list: (typeUrl) => current.list(typeUrl),
    },
    bind(node) {
      if (bound || node === undefined) return undefined;
      bound = true;
      return views.forNode(node).then(set);
    },
    push(push) {
      views.publish(push);
      if (view.sidecar) return sidecarPush(view.sidecar, push);
      if (view.gateway) return gatewayPush(view.gateway, push);
      const out = views.changesFor(view, push.changes);
      if (out !== undefined && view.inbound && view.inbound.names.size > 0)
        return serverPush(view.inbound, out);
      if (out !== undefined || !bound) return { changes: out };
      return views.forNamespace(view.namespace).then((v) => {
        set(rebind(v));
        return { changes: undefined };
      });
    },
  };
}
