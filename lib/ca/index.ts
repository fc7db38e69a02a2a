/** lib/ca: Istio's certificate authority on WebCrypto (plug-in or stored self-signed root, CSR signing, CreateCertificate). */
export * from "./authority.ts";
export * from "./bundle.ts";
export * from "./config.ts";
export * from "./private-key.ts";
export * from "./self-signed.ts";
export * from "./sign.ts";
