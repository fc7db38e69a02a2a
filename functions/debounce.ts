/** The debounce turn now lives in the mesh core (lib/core/turn.ts); kept here for existing importers. */
export { type DebounceDeps, debounceTurn, flushDeps } from "../lib/core/turn.ts";
