export * from "./endpoint.ts";
export * from "./keys.ts";
export * from "./push-request.ts";
export * from "./service.ts";
