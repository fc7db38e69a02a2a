/**
 * One cold start of one Lambda function (run by lambda-cold-start.ts in a fresh node process, over
 * the esbuild bundle of its entry file): imports the bundle, invokes it once (GET /ready for the
 * URL functions, a scheduler event for the debounce), and prints the times since the process began.
 */
import { Writable } from "node:stream";
import { installAwsLambdaGlobal } from "../support/lambda-harness.ts";

const [bundle, fn] = process.argv.slice(2) as [string, string];
installAwsLambdaGlobal();
const before = performance.now();
const { handler } = await import(bundle);
const loaded = performance.now();
const context = { getRemainingTimeInMillis: () => 30_000, functionName: fn, awsRequestId: "cold" };
const event = {
  version: "2.0",
  routeKey: "$default",
  rawPath: "/ready",
  rawQueryString: "",
  headers: { host: "local" },
  requestContext: {
    domainName: "local",
    http: { method: "GET", path: "/ready", protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "" },
  },
  isBase64Encoded: false,
};
let status = "";
if (fn === "debounce") status = JSON.stringify(await handler({ source: "aws.scheduler" }, context));
else if (fn === "ingest") status = String((await handler(event, context)).statusCode);
else {
  const chunks: Buffer[] = [];
  const stream = Object.assign(
    new Writable({
      write(c: Buffer, _e, done) {
        chunks.push(c);
        done();
      },
    }),
    { setContentType: () => undefined },
  );
  await handler(event, stream, context);
  status = Buffer.concat(chunks).toString("utf8").slice(0, 14);
}
const answered = performance.now();
console.log(
  JSON.stringify({
    fn,
    processStartToImportMs: before,
    importMs: loaded - before,
    firstAnswerMs: answered - loaded,
    totalMs: answered,
    status,
  }),
);
process.exit(0);
