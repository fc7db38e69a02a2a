/** The Gateway API translation (istiod's pilot/pkg/config/kube/gateway): what the rest of the core imports. */
export type { GatewayApiStatus } from "./gateway-status.ts";
export { emptyTranslation, type GatewayApiOptions, gatewayApiKinds, loadGatewayApi } from "./load.ts";
export { type GatewayApiInputs, type GatewayApiTranslation, translateGatewayApi } from "./translate.ts";
