/**
 * Secrets Manager's test of a rotation configuration. When rotation is configured with
 * RotateImmediately false (as the stack's schedule is), the service "tests the rotation
 * configuration by running the testSecret step of the Lambda rotation function. The test creates an
 * AWSPENDING version of the secret and then removes it."
 * (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_RotateSecret.html,
 * RotateImmediately). The stand-in does the same with the function registered for the ARN, so tests
 * and `npm start -- rotate` drive it the way a deploy does.
 */
import { randomUUID } from 'node:crypto';
import { InvalidRequestException } from '@aws-sdk/client-secrets-manager';
import type { Secret, Version } from './secret.ts';
import { meta } from './wire-input.ts';

/** The rotation function as Secrets Manager invokes it. */
export type RotationFunction = (event: {
  readonly Step: 'testSecret';
  readonly SecretId: string;
  readonly ClientRequestToken: string;
}) => Promise<unknown>;

export type ConfigurationTestVersion = 'empty' | 'copy-of-current';

/** Runs testSecret on a fresh AWSPENDING version, then removes it; a failure fails the call. */
export async function testConfiguration(
  secret: Secret,
  invoke: RotationFunction | undefined,
  lambdaArn: string,
  holds: ConfigurationTestVersion,
  store: { now: () => Date; attach: (stage: string, version: Version) => void },
): Promise<void> {
  if (invoke === undefined) {
    throw new InvalidRequestException({
      message: `The stand-in cannot invoke ${lambdaArn} to test the rotation configuration: register it with registerRotationFunction.`,
      ...meta,
    });
  }
  const current = [...secret.versions.values()].find((v) => v.stages.has('AWSCURRENT'));
  const version: Version = {
    id: randomUUID(),
    value: holds === 'copy-of-current' ? current?.value : undefined,
    stages: new Set(),
    created: store.now(),
    fromRotation: false,
  };
  secret.versions.set(version.id, version);
  store.attach('AWSPENDING', version);
  try {
    await invoke({ Step: 'testSecret', SecretId: secret.arn, ClientRequestToken: version.id });
  } catch (error) {
    throw new InvalidRequestException({
      message: `The rotation function failed the configuration test (testSecret): ${error instanceof Error ? error.name : 'error'}.`,
      ...meta,
    });
  } finally {
    secret.versions.delete(version.id);
  }
}
