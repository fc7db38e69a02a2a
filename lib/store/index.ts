export * from "./keys.ts";
export * from "./store.ts";
