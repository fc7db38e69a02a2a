/** CreateCertificate through a Connect client over any transport, as the hosts' CA tests call it. */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  type IstioCertificateRequestSchema,
  IstioCertificateService,
} from "../../../lib/gen/istio/v1/auth/ca_pb.ts";
import type { CaOutcome } from "./chain.ts";

/** The chain, or the refusal's code and raw message; `token` (if any) as the bearer. */
export async function createCertificateOver(
  transport: Transport,
  token: string | undefined,
  req: MessageInitShape<typeof IstioCertificateRequestSchema>,
): Promise<CaOutcome> {
  const client = createClient(IstioCertificateService, transport);
  try {
    const res = await client.createCertificate(req, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
    return { chain: res.certChain };
  } catch (e) {
    const err = ConnectError.from(e);
    return { code: err.code, message: err.rawMessage };
  }
}
