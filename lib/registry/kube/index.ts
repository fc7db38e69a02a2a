export * from "./endpoint-slice.ts";
export * from "./protocol.ts";
export * from "./service.ts";
export * from "./types.ts";
