/**
 * istio.v1.auth.IstioCertificateService on a Connect router, runtime-neutral: gRPC, gRPC-Web and
 * Connect clients call CreateCertificate at its canonical path. The CA authenticates the caller
 * itself (its own audiences, TOKEN_AUDIENCES), so these routes sit outside XDS_AUTH's interceptor;
 * its answers map to istiod's status codes. A host whose CA is not configured registers the
 * service anyway and answers FailedPrecondition saying what to configure.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import type { CaAnswer, CertificateAuthority } from "../lib/ca/authority.ts";
import { IstioCertificateResponseSchema, IstioCertificateService } from "../lib/gen/istio/v1/auth/ca_pb.ts";

/** The CA a host serves, or why it serves none (the start-up line says the same). */
export type CaService = { ca: CertificateAuthority } | { unavailable: string };

const codes: Record<Exclude<CaAnswer, { ok: true }>["code"], Code> = {
  unauthenticated: Code.Unauthenticated,
  "invalid-argument": Code.InvalidArgument,
  internal: Code.Internal,
};

/** Registers IstioCertificateService; requests are bounded by `readMaxBytes` (EDGEPILOT_MAX_REQUEST_BYTES). */
export function createCaRoutes(service: CaService, readMaxBytes: number): (router: ConnectRouter) => void {
  return (router) => {
    router.service(
      IstioCertificateService,
      {
        async createCertificate(req, ctx) {
          if (!("ca" in service)) throw new ConnectError(service.unavailable, Code.FailedPrecondition);
          const impersonated = req.metadata?.ImpersonatedIdentity;
          const answer = await service.ca.createCertificate(
            {
              csr: req.csr,
              validityDuration: req.validityDuration,
              ...(typeof impersonated === "string" && { impersonatedIdentity: impersonated }),
            },
            ctx.requestHeader.get("authorization"),
          );
          if (!answer.ok) throw new ConnectError(answer.message, codes[answer.code]);
          return create(IstioCertificateResponseSchema, { certChain: answer.certChain });
        },
      },
      { readMaxBytes },
    );
  };
}
