/**
 * One answer per push for every Delta stream in the same state. The sidecars and proxyless clients
 * of one view mostly subscribe to the same names and hold the same versions: a push then sends each
 * of them the same resources, and only the set version (of what each holds) and the nonce differ.
 * A stream's type joins a class of the push (its changes as one view's streams take them) by what
 * decides its answer exactly, never by a hash:
 * - its subscription (type URL, wildcard, explicit names), one interned string kept per stream and
 *   rebuilt only when the subscription changes: every stream with it reaches the same changed
 *   names, found once per push;
 * - what it holds of those names (the version of each), compared name by name;
 * - the byte budget of its responses.
 * The class's answer is decided once and its resources array is shared by every member's response
 * (response-bytes.ts encodes that body once per push and appends each stream's version and nonce).
 * Only a type with nothing pending takes part (no response in flight, nothing NACKed, nothing to
 * resend, no name reported missing): with any of those the session answers the push alone, as
 * before. An answer that removes names (the sync gate decides those) or does not fit one response
 * is not shared either. Pure bookkeeping over plain data: delta.ts decides and does the rest.
 */
import type { Resource } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../resources/types.ts";
import { pushOrder, type TypeUrl } from "../resources/xds-types.ts";
import { fitsOneDeltaResponse } from "./budget.ts";
import { changedInReach } from "./delta-answer.ts";
import { type DeltaTypeState, unmarked } from "./delta-state.ts";
import { sharedResource } from "./response-bytes.ts";

/**
 * One class's answer for one type: the resources to send and their Resource messages, both frozen:
 * every member's flight and response carries these very arrays (response-bytes.ts encodes the
 * messages' part of a response once per array).
 */
export interface SharedAnswer {
  readonly resources: readonly StoredResource[];
  readonly messages: readonly Resource[];
}

/** How a class's answer is decided by its first member: resources and removals, or undefined (needs the store). */
export type ComputeAnswer<C> = (
  state: DeltaTypeState,
  changed: C,
  named: string[],
) => { resources: readonly StoredResource[]; removed: readonly string[] } | undefined;

/** An answer as found for one stream's type: shared, nothing to send (null), or not shareable (undefined). */
export type SharedLookup = SharedAnswer | null | undefined;

/** A class: streams with one subscription and budget that hold the bucket's `named` at the same versions. */
interface ClassEntry {
  budget: number;
  /** What members hold of the bucket's `named` (undefined: not held), in its order. */
  held: (string | undefined)[];
  /** The answer; null when the class is known not to share (its answer removes, or is too large). */
  answer: SharedAnswer | null;
}

/** The streams of one subscription in one push: the changed names they reach, and their classes. */
interface Bucket {
  /** The changed names in reach, sorted; empty: the push changes nothing these streams reach. */
  named: string[];
  classes: ClassEntry[];
}

/** Per push (its changes of one view, indexed: change-source.ts indexChanges), per subscription key: the bucket. */
const pushes = new WeakMap<object, Map<string, Bucket>>();

/**
 * The bucket found last: a push reaches a view's streams one after another, and those of one
 * subscription are found without a lookup. Holds one push's bucket until the next lookup.
 */
const last: { push: object | undefined; key: string; bucket: Bucket | undefined } = {
  push: undefined,
  key: "",
  bucket: undefined,
};

/**
 * Classes kept per bucket before new ones are no longer recorded (a stream then answers alone):
 * bounds a push's work when streams of one subscription hold many different versions.
 */
const maxClasses = 8;

/** Subscription keys longer than this are not built: such a stream answers its pushes alone. */
const maxKeyChars = 64 * 1024;

/**
 * Interned subscription keys: equal subscriptions share one string object, so a lookup compares
 * pointers and 1,000 streams keep one copy. Bounded by characters: past `maxInternedChars` the
 * table starts over (keys already handed out stay valid, only no longer shared in memory).
 */
let interned = new Map<string, string>();
let internedChars = 0;
const maxInternedChars = 4 * 1024 * 1024;

/**
 * Keys built for more than one stream (since the table last started over): only their streams take
 * part in classes. A subscription of one stream has no one to share with, and its bucket, class,
 * frozen answer and encoded body, made per push and kept while the push lives, cost memory for
 * nothing (at 1,000 streams each of their own names, 1 MB per push that outlived the scavenges);
 * it answers alone, as a stream with anything pending does.
 */
let sharedKeys = new Set<string>();

/**
 * The subscription key of `state` (type URL, wildcard, explicit names), kept on the state until its
 * subscription changes (delta-state.ts applySubscription clears it); undefined when too long.
 */
export function subscriptionKey(state: DeltaTypeState): string | undefined {
  if (state.subKey !== undefined) return state.subKey === "" ? undefined : state.subKey;
  let chars = state.typeUrl.length;
  for (const name of state.names) {
    chars += name.length + 4;
    if (chars > maxKeyChars) {
      state.subKey = ""; // too long: never shared, until the subscription changes
      return undefined;
    }
  }
  const key = JSON.stringify([state.typeUrl, state.wildcard, [...state.names].sort()]);
  let shared = interned.get(key);
  if (shared === undefined) {
    if (internedChars + key.length > maxInternedChars) {
      interned = new Map();
      sharedKeys = new Set();
      internedChars = 0;
    }
    interned.set(key, key);
    internedChars += key.length;
    shared = key;
  } else {
    sharedKeys.add(shared);
  }
  state.subKey = shared;
  return shared;
}

/** Whether `state` has nothing pending, so its answer to a push depends only on what a class compares. */
export function settled(state: DeltaTypeState): boolean {
  return state.inflight.length === 0 && unmarked(state);
}

/**
 * The class answer of settled `state` for a push (`push`: its indexed changes, one object per push
 * and view, which scopes the classes; `changed`: those of the state's type), or `compute` it (the
 * stream's own answer for the changed names in reach, sorted: resources and removals; undefined
 * when it cannot be had now) and record it for the streams after. Null when the push changes
 * nothing in the subscription's reach; undefined when this answer is not shared (answer alone).
 */
export function sharedAnswer<C extends ReadonlyMap<string, unknown> | undefined>(
  push: object,
  state: DeltaTypeState,
  changed: C,
  budget: number,
  compute: ComputeAnswer<C>,
): SharedLookup {
  const key = subscriptionKey(state);
  if (key === undefined || !sharedKeys.has(key)) return undefined;
  let bucket = last.push === push && last.key === key ? last.bucket : undefined;
  if (bucket === undefined) {
    let buckets = pushes.get(push);
    if (buckets === undefined) {
      buckets = new Map();
      pushes.set(push, buckets);
    }
    bucket = buckets.get(key);
    if (bucket === undefined) {
      bucket = { named: changedInReach(state, changed), classes: [] };
      buckets.set(key, bucket);
    }
    // Changed in place: a push's streams of many subscriptions would make one object each.
    last.push = push;
    last.key = key;
    last.bucket = bucket;
  }
  const { named, classes } = bucket;
  if (named.length === 0) return null;
  const view = state.returned;
  for (let i = 0; i < classes.length; i++) {
    const c = classes[i] as ClassEntry;
    if (c.budget === budget && holdsAll(view, named, c.held)) return c.answer ?? undefined;
  }
  if (classes.length >= maxClasses) return undefined;
  const held = named.map((n) => view.get(n));
  const d = compute(state, changed, named);
  if (d === undefined) return undefined;
  const answer =
    d.removed.length === 0 && fitsOneDeltaResponse(d.resources, d.removed, budget)
      ? {
          resources: Object.freeze([...d.resources]),
          messages: Object.freeze(d.resources.map(sharedResource)),
        }
      : null;
  classes.push({ budget, held, answer });
  return answer ?? undefined;
}

/** A type's class answer for a push, with the stream's state of that type. */
export interface ClassAnswer {
  state: DeltaTypeState;
  answer: SharedAnswer;
}

/**
 * The class answer of each of a stream's types (`states`) for a push (`push`: its changes indexed
 * by type URL, one object per push and view), in push order, those that send nothing left out;
 * undefined when a type is not settled, its set version is not at hand, or its answer is not
 * shared: the stream answers the push alone then, and nothing was changed.
 */
export function classAnswers<C extends ReadonlyMap<string, unknown>>(
  push: ReadonlyMap<string, C>,
  states: ReadonlyMap<string, DeltaTypeState>,
  budget: number,
  compute: ComputeAnswer<C | undefined>,
): ClassAnswer[] | undefined {
  let out: ClassAnswer[] | undefined;
  // Indexed loops here and above: once per stream per push, where for-of made iterator results.
  for (let i = 0; i < pushOrder.length; i++) {
    const typeUrl = pushOrder[i] as TypeUrl;
    const state = states.get(typeUrl);
    if (state === undefined) continue;
    if (!settled(state) || state.returned.versionNow() === undefined) return undefined;
    const answer = sharedAnswer(push, state, push.get(typeUrl), budget, compute);
    if (answer === undefined) return undefined;
    if (answer === null || answer.resources.length === 0) continue;
    // A literal of one: the usual stream has one type, and [] then push() would allocate room for 16.
    if (out === undefined) out = [{ state, answer }];
    else out.push({ state, answer });
  }
  return out ?? noAnswers;
}

const noAnswers: ClassAnswer[] = [];

/** Whether `view` holds each of `named` at the version in `held` (undefined: not at all). */
function holdsAll(
  view: ReadonlyMap<string, string>,
  named: readonly string[],
  held: readonly (string | undefined)[],
): boolean {
  for (let i = 0; i < named.length; i++) if (view.get(named[i] as string) !== held[i]) return false;
  return true;
}
