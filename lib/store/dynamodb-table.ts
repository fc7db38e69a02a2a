/**
 * The DynamoDB table edgepilot keeps a mesh in: its key schema, TTL attribute and the exact API
 * actions the store adapter calls. One definition shared by the adapter (lib/store/dynamodb.ts),
 * local table creation (`EDGEPILOT_STORE=dynamodb` with `DYNAMODB_ENDPOINT`) and the CDK app
 * (infra/aws), so the table the IaC deploys is the table the code expects, and the IAM policy
 * grants exactly what the code uses.
 */

/** Partition key attribute (string): the key family, see lib/store/dynamodb.ts. */
export const partitionKey = "pk";
/** Sort key attribute (string): the rest of the store key, so a prefix list is one Query. */
export const sortKey = "sk";
/** TTL attribute (epoch seconds, number): set on proxy status items so DynamoDB removes stale ones. */
export const ttlAttribute = "ttl";

/** The table's key schema, as CreateTable and the CDK Table take it. */
export const tableKeySchema = {
  partitionKey: { name: partitionKey, type: "S" },
  sortKey: { name: sortKey, type: "S" },
} as const;

/**
 * Every DynamoDB action the Store adapter calls on the table at run time (IAM names). The CDK
 * policy grants these and nothing else; a test asserts the adapter's commands are this set.
 * CreateTable and DescribeTable are local-development only (a DYNAMODB_ENDPOINT set) and never
 * granted.
 */
export const tableActions = [
  "dynamodb:GetItem",
  "dynamodb:BatchGetItem",
  "dynamodb:Query",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:BatchWriteItem",
] as const;
