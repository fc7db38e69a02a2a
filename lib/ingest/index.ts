export * from "./apply.ts";
export * from "./decode.ts";
export * from "./errors.ts";
export * from "./events.ts";
export * from "./validate.ts";
