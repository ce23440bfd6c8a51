/**
 * Plays Secrets Manager's part in a rotation, for `npm start -- rotate` and the tests: start a
 * rotation (`RotateSecret`, which leaves a value-less AWSPENDING version for a new token) or resume
 * the pending one, then invoke the rotation function with createSecret, setSecret, testSecret and
 * finishSecret for that same token, stopping at the first failure as the service does.
 */
import {
  DescribeSecretCommand,
  RotateSecretCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { RotationRequest } from '#lambdas/rotation/request';
import { ROTATION_STEPS } from '#lambdas/rotation/request';
import type { RotationStepResult } from '#lambdas/rotation/rotation-step';

/** The rotation function as Secrets Manager invokes it. */
export type RotationInvoker = (request: RotationRequest) => Promise<RotationStepResult>;

export interface DrivenRotation {
  readonly token: string;
  /** True when an unfinished rotation's token was resumed instead of starting a new one. */
  readonly resumed: boolean;
  readonly steps: readonly RotationStepResult[];
  /** The first step's failure, when one failed; the later steps were not invoked. */
  readonly error?: unknown;
}

/** A stand-in function ARN: the driver invokes the function itself, nothing is looked up by it. */
export const LOCAL_ROTATION_LAMBDA_ARN = 'arn:aws:lambda:eu-west-1:000000000000:function:rotate-api-key';

/**
 * Starts (or resumes) one rotation of `secretId` and runs its four steps. `resume` names a token to
 * resume explicitly; otherwise an AWSPENDING version left by an unfinished rotation is resumed.
 */
export async function driveRotation(
  client: SecretsManagerClient,
  secretId: string,
  invoke: RotationInvoker,
  options: { resume?: string; days?: number } = {},
): Promise<DrivenRotation> {
  let token = options.resume ?? (await unfinishedToken(client, secretId));
  const resumed = token !== undefined;
  if (token === undefined) {
    const started = await client.send(
      new RotateSecretCommand({
        SecretId: secretId,
        RotationLambdaARN: LOCAL_ROTATION_LAMBDA_ARN,
        RotationRules: { AutomaticallyAfterDays: options.days ?? 30 },
      }),
    );
    if (started.VersionId === undefined)
      throw new Error(`RotateSecret on ${secretId} returned no version id`);
    token = started.VersionId;
  }
  const steps: RotationStepResult[] = [];
  for (const step of ROTATION_STEPS) {
    try {
      steps.push(await invoke({ Step: step, SecretId: secretId, ClientRequestToken: token }));
    } catch (error) {
      return { token, resumed, steps, error };
    }
  }
  return { token, resumed, steps };
}

/** The token of a version staged AWSPENDING but not AWSCURRENT: a rotation that did not finish. */
export async function unfinishedToken(
  client: SecretsManagerClient,
  secretId: string,
): Promise<string | undefined> {
  const described = await client.send(new DescribeSecretCommand({ SecretId: secretId }));
  return Object.entries(described.VersionIdsToStages ?? {}).find(
    ([, stages]) => stages.includes('AWSPENDING') && !stages.includes('AWSCURRENT'),
  )?.[0];
}
