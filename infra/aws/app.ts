/**
 * The CDK app (`npx cdk synth|deploy` in infra/aws, see cdk.json): one EdgepilotStack, its
 * settings from the context (context.ts). A bad setting stops synth with every error named.
 */
import { fileURLToPath } from "node:url";
import { App } from "aws-cdk-lib";
import { parseStackSettings } from "./context.ts";
import { EdgepilotStack } from "./edgepilot-stack.ts";

const app = new App();
const settings = parseStackSettings((key) => app.node.tryGetContext(key));
if (!settings.ok) {
  console.error(`edgepilot infra/aws: cannot synthesize:\n  ${settings.errors.join("\n  ")}`);
  process.exit(1);
}
new EdgepilotStack(app, app.node.tryGetContext("stackName") ?? "Edgepilot", {
  settings: settings.value,
  projectRoot: fileURLToPath(new URL("../../", import.meta.url)),
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
app.synth();
