/** The proxyless gRPC suite (support/proxyless-suite.ts) over the memory store, the default. */
import { proxylessSuite } from "./support/proxyless-suite.ts";

proxylessSuite("memory", async () => ({ env: {}, stop: async () => {} }));
