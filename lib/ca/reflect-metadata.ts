/**
 * The part of the Reflect metadata API that @peculiar/x509's dependency injection (tsyringe) calls
 * at load time: getMetadata, getOwnMetadata, defineMetadata. tsyringe refuses to load without
 * them, and neither Node nor workerd has them. Import this module before @peculiar/x509 (every
 * lib/ca module that uses x509 does). Defined only when absent, so a full polyfill loaded first wins.
 */

type Target = object;
const store = new WeakMap<Target, Map<unknown, unknown>>();

const own = (key: unknown, target: Target) => store.get(target)?.get(key);

const api = {
  defineMetadata(key: unknown, value: unknown, target: Target): void {
    const map = store.get(target) ?? new Map<unknown, unknown>();
    map.set(key, value);
    store.set(target, map);
  },
  getOwnMetadata: own,
  /** Own metadata, else the prototype chain's (as reflect-metadata's OrdinaryGetMetadata). */
  getMetadata(key: unknown, target: Target): unknown {
    for (let t: Target | null = target; t !== null; t = Object.getPrototypeOf(t) as Target | null) {
      const map = store.get(t);
      if (map?.has(key)) return map.get(key);
    }
    return undefined;
  },
};

const reflect = Reflect as unknown as Record<string, unknown>;
if (typeof reflect.getMetadata !== "function")
  for (const [name, fn] of Object.entries(api))
    Object.defineProperty(Reflect, name, { value: fn, configurable: true, writable: true });

/** True once the metadata API is present (always, after this module ran). */
export const reflectMetadataReady = typeof reflect.getMetadata === "function";
