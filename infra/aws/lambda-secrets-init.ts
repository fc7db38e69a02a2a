/**
 * Imported first by the deployed ingest and xds entries (infra/aws/entries/): fills the secret
 * variables (lambda-secrets.ts) during the container's init, before the function's own module,
 * which reads process.env at load, is evaluated (ES modules evaluate in import order, and this
 * module's top-level await holds the ones after it).
 */
import { resolveSecretEnv } from "./lambda-secrets.ts";

await resolveSecretEnv(process.env);
