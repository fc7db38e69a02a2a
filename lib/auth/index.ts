/** lib/auth: XDS_AUTH configuration, bearer-token and JWT verification (jose on WebCrypto), node identity. */
export * from "./config.ts";
export * from "./guard.ts";
export * from "./identity.ts";
export * from "./jwks.ts";
export * from "./jwt.ts";
export * from "./key-set.ts";
export * from "./timing-safe.ts";
