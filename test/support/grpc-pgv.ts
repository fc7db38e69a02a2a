/**
 * Envoy's PGV violations of a resource for proxyless gRPC, but one: a combined validation
 * context's SDS secret config, which Envoy requires and gRPC never reads (its root comes from the
 * certificate provider instance Istio's grpcgen names beside it, leaving the SDS config unset).
 */
import type { DescMessage, Message } from "@bufbuild/protobuf";
import { pgvViolations } from "./pgv/index.ts";

const unreadByGrpc =
  "combined_validation_context.validation_context_sds_secret_config: message.required (unset)";

/** pgvViolations less the one rule gRPC's TLS contexts do not follow (see the module comment). */
export function grpcPgvViolations(schema: DescMessage, msg: Message): string[] {
  return pgvViolations(schema, msg).filter((v) => !v.endsWith(unreadByGrpc));
}
