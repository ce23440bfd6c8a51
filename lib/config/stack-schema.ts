/**
 * The `stack` section: which CloudFormation stack the pipeline is, and where it goes. Every
 * physical name the stack derives (its log groups first) follows `name`, so `dev` and `prod` live
 * side by side in one account and Region. `-c stackName=… -c account=… -c region=…` override it
 * (load.ts).
 */
import * as z from 'zod/mini';
import { describeValue, section } from '#lambdas/platform/input/schema';

/** The stack name when none is set: the name every earlier deploy of the pipeline has. */
export const DEFAULT_STACK_NAME = 'SecurityPipeline';

/**
 * CloudFormation: a stack name starts with a letter and holds letters, digits and hyphens, at
 * most 128 characters. https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_CreateStack.html
 */
const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;
const ACCOUNT = /^\d{12}$/;
/** A Region code: `eu-west-1`, `us-gov-west-1`, `ap-southeast-5`. */
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

const matching = (pattern: RegExp, what: string) =>
  z.string({ error: (issue) => `must be ${what} (got ${describeValue(issue.input)})` }).check(
    z.refine((value) => pattern.test(value), {
      error: (issue) => `must be ${what} (got ${describeValue(issue.input)})`,
    }),
  );

export const stackSchema = section({
  /**
   * The CloudFormation stack name (and the construct id of the stack in the app).
   * @default 'SecurityPipeline'
   */
  name: z._default(
    matching(STACK_NAME, 'a CloudFormation stack name: a letter, then up to 127 letters, digits or hyphens'),
    DEFAULT_STACK_NAME,
  ),
  /** The AWS account to deploy to. @default the account of the credentials `cdk deploy` runs with */
  account: z.optional(matching(ACCOUNT, 'a 12-digit AWS account id')),
  /** The Region to deploy to. @default the Region of the credentials or AWS_REGION at deploy */
  region: z.optional(matching(REGION, 'an AWS Region code such as eu-west-1')),
});

export type StackConfig = z.output<typeof stackSchema>;
