/**
 * The proxyless gRPC suite (support/proxyless-suite.ts) with EDGEPILOT_STORE=dynamodb over dynalite
 * started here: the runtime creates its table at start-up (DYNAMODB_ENDPOINT set), as `npm start` does.
 */
import { startDynalite } from "../support/dynalite.ts";
import { proxylessSuite } from "./support/proxyless-suite.ts";

proxylessSuite("dynamodb", async () => {
  // The server starts without the runtime's table: start-up creates it.
  const dynalite = await startDynalite("setup-check");
  return {
    env: { EDGEPILOT_STORE: "dynamodb", DYNAMODB_ENDPOINT: dynalite.endpoint, DYNAMODB_TABLE: "e2e-mesh" },
    startedWith: /created DynamoDB table e2e-mesh at http:\/\/127\.0\.0\.1:\d+ \(DYNAMODB_ENDPOINT\)/,
    stop: () => dynalite.stop(),
  };
});
