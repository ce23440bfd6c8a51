/**
 * A secret as the stand-in stores it, with its versions and their staging labels: the model both
 * the stand-in's operations and its configuration test (configuration-test.ts) act on.
 */

export interface Version {
  readonly id: string;
  value: string | undefined;
  readonly stages: Set<string>;
  readonly created: Date;
  /** Made by RotateSecret: promoting it to AWSCURRENT completes a rotation. */
  readonly fromRotation: boolean;
}

export interface Secret {
  readonly arn: string;
  readonly name: string;
  readonly description: string | undefined;
  readonly created: Date;
  readonly versions: Map<string, Version>;
  rotationLambdaArn: string | undefined;
  rotationRules: Record<string, unknown> | undefined;
  lastRotated: Date | undefined;
  lastChanged: Date;
}
