/**
 * Imported first by a test file whose xDS-enabled gRPC servers enforce RBAC: grpc-js-xds reads
 * GRPC_XDS_EXPERIMENTAL_RBAC once, when its environment module loads, so it is set before any
 * import of the package (each test file has its own module graph).
 */
process.env.GRPC_XDS_EXPERIMENTAL_RBAC = "true";
