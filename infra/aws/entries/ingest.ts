/**
 * The ingest function as infra/aws deploys it: its secrets put in the environment (lambda-secrets.ts),
 * then functions/lambda/ingest.ts, which reads the environment at load.
 */
import "../lambda-secrets-init.ts";

export { handler } from "../../../functions/lambda/ingest.ts";
