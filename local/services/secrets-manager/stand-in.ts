/**
 * A stateful Secrets Manager stand-in: the subset of the service that key rotation touches, with
 * the service's documented rules for versions and staging labels. The tests put it behind
 * aws-sdk-client-mock (test/kit/secrets-manager-mock.ts); `npm start -- rotate` serves it over
 * loopback HTTP (./server.ts), so the real SDK client talks to it as it would to AWS.
 *
 * The rules it keeps, because rotation depends on each of them:
 * - `RotateSecret` creates an AWSPENDING version for the token **with no value**; reading that
 *   version is ResourceNotFoundException, and a second RotateSecret while it is pending is
 *   refused ("A previous rotation isn't complete").
 * - `PutSecretValue` is idempotent per `ClientRequestToken`: the same value again is a no-op, a
 *   different value for a version that holds one is ResourceExistsException; a value-less version
 *   (the pending one) takes the value.
 * - A staging label is on one version at most. Moving AWSCURRENT leaves AWSPREVIOUS on the version
 *   that had it. Moving a label that is attached elsewhere requires `RemoveFromVersionId` to name
 *   that version. Versions without labels are deprecated and not listed by DescribeSecret.
 * - `RotateSecret` with `RotateImmediately: false` tests the configuration: it invokes the function
 *   registered for the ARN with `testSecret` on a fresh AWSPENDING version, then removes that
 *   version (./configuration-test.ts); a failure fails the call and keeps the old configuration.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  InvalidParameterException,
  InvalidRequestException,
  ResourceExistsException,
} from '@aws-sdk/client-secrets-manager';
import {
  type ConfigurationTestVersion,
  type RotationFunction,
  testConfiguration,
} from './configuration-test.ts';
import type { Secret, Version } from './secret.ts';
import { type Input, meta, notFound, optionalString, requiredString, withoutValues } from './wire-input.ts';

export const CURRENT = 'AWSCURRENT';
export const PENDING = 'AWSPENDING';
export const PREVIOUS = 'AWSPREVIOUS';

/** The operations the stand-in serves, by their Secrets Manager names. */
export const STAND_IN_OPERATIONS = [
  'CreateSecret',
  'DescribeSecret',
  'GetSecretValue',
  'PutSecretValue',
  'UpdateSecretVersionStage',
  'RotateSecret',
  'ListSecretVersionIds',
] as const;
export type StandInOperation = (typeof STAND_IN_OPERATIONS)[number];

/** One call as the stand-in saw it; inputs keep their shape but never a secret value. */
export interface StandInCall {
  readonly operation: StandInOperation;
  readonly input: Record<string, unknown>;
  readonly at: Date;
  readonly failed?: string;
}

/**
 * Called before and after each operation is applied; throwing there makes the call fail (before:
 * nothing changed; after: the change is made and the caller never hears of it, like a lost answer).
 */
export type StandInHook = (call: {
  readonly operation: StandInOperation;
  readonly input: Record<string, unknown>;
  readonly phase: 'before' | 'after';
}) => void;

export class SecretsManagerStandIn {
  readonly calls: StandInCall[] = [];
  /** Test seam: see {@link StandInHook}. */
  hook: StandInHook | undefined;
  private readonly secrets = new Map<string, Secret>();

  constructor(
    private readonly now: () => Date = () => new Date(),
    readonly region = 'eu-west-1',
  ) {}

  /**
   * What the configuration test's AWSPENDING version holds: nothing (`empty`), or a copy of the
   * AWSCURRENT value. AWS documents only that the test "creates an AWSPENDING version of the secret
   * and then removes it", so the rotation function must pass either way. @default 'empty'
   */
  configurationTestVersion: ConfigurationTestVersion = 'empty';
  private readonly functions = new Map<string, RotationFunction>();

  /**
   * Makes the function at `arn` invocable by the stand-in, as Secrets Manager invokes a rotation
   * function itself for the configuration test (RotateSecret with RotateImmediately false).
   */
  registerRotationFunction(arn: string, invoke: RotationFunction): void {
    this.functions.set(arn, invoke);
  }

  /** Runs one operation by name, as the SDK adapters call it. */
  async handle(operation: StandInOperation, input: Input): Promise<Record<string, unknown>> {
    const record = (failed?: string) =>
      this.calls.push({
        operation,
        input: withoutValues(input),
        at: this.now(),
        ...(failed ? { failed } : {}),
      });
    try {
      this.hook?.({ operation, input, phase: 'before' });
      const output =
        operation === 'RotateSecret' ? await this.rotateSecret(input) : this.apply(operation, input);
      this.hook?.({ operation, input, phase: 'after' });
      record();
      return output;
    } catch (error) {
      record(error instanceof Error ? error.name : 'Error');
      throw error;
    }
  }

  private apply(operation: StandInOperation, input: Input): Record<string, unknown> {
    switch (operation) {
      case 'CreateSecret':
        return this.createSecret(input);
      case 'DescribeSecret':
        return this.describeSecret(input);
      case 'GetSecretValue':
        return this.getSecretValue(input);
      case 'PutSecretValue':
        return this.putSecretValue(input);
      case 'UpdateSecretVersionStage':
        return this.updateSecretVersionStage(input);
      case 'RotateSecret':
        throw new Error('RotateSecret is asynchronous: handle() runs it');
      case 'ListSecretVersionIds':
        return this.listSecretVersionIds(input);
    }
  }

  /** Which versions carry which labels now (deprecated versions left out), for assertions. */
  stagesOf(secretId: string): Record<string, string[]> {
    return Object.fromEntries(
      [...this.secret(secretId).versions.values()]
        .filter((v) => v.stages.size > 0)
        .map((v) => [v.id, [...v.stages].sort()]),
    );
  }

  /** The value a label points at, or undefined (no label, or the value-less pending version). */
  valueAt(secretId: string, stage: string): string | undefined {
    return [...this.secret(secretId).versions.values()].find((v) => v.stages.has(stage))?.value;
  }

  private createSecret(input: Input): Record<string, unknown> {
    const name = requiredString(input, 'Name');
    if ([...this.secrets.values()].some((s) => s.name === name)) {
      throw new ResourceExistsException({
        message: `The operation failed because the secret ${name} already exists.`,
        ...meta,
      });
    }
    const at = this.now();
    const secret: Secret = {
      arn: `arn:aws:secretsmanager:${this.region}:000000000000:secret:${name}-${randomBytes(3).toString('hex')}`,
      name,
      description: optionalString(input, 'Description'),
      created: at,
      versions: new Map(),
      rotationLambdaArn: undefined,
      rotationRules: undefined,
      lastRotated: undefined,
      lastChanged: at,
    };
    this.secrets.set(secret.arn, secret);
    const value = optionalString(input, 'SecretString');
    if (value === undefined) return { ARN: secret.arn, Name: name };
    const id = optionalString(input, 'ClientRequestToken') ?? randomUUID();
    secret.versions.set(id, { id, value, stages: new Set([CURRENT]), created: at, fromRotation: false });
    return { ARN: secret.arn, Name: name, VersionId: id };
  }

  private describeSecret(input: Input): Record<string, unknown> {
    const secret = this.secret(requiredString(input, 'SecretId'));
    return {
      ARN: secret.arn,
      Name: secret.name,
      ...(secret.description === undefined ? {} : { Description: secret.description }),
      RotationEnabled: secret.rotationLambdaArn !== undefined,
      ...(secret.rotationLambdaArn === undefined ? {} : { RotationLambdaARN: secret.rotationLambdaArn }),
      ...(secret.rotationRules === undefined ? {} : { RotationRules: secret.rotationRules }),
      ...(secret.lastRotated === undefined ? {} : { LastRotatedDate: secret.lastRotated }),
      LastChangedDate: secret.lastChanged,
      CreatedDate: secret.created,
      VersionIdsToStages: this.stagesOf(secret.arn),
    };
  }

  private getSecretValue(input: Input): Record<string, unknown> {
    const secret = this.secret(requiredString(input, 'SecretId'));
    const versionId = optionalString(input, 'VersionId');
    const stage = optionalString(input, 'VersionStage') ?? (versionId === undefined ? CURRENT : undefined);
    const version =
      versionId !== undefined
        ? secret.versions.get(versionId)
        : [...secret.versions.values()].find((v) => stage !== undefined && v.stages.has(stage));
    if (version === undefined || (stage !== undefined && !version.stages.has(stage))) {
      throw notFound(
        `Secrets Manager can't find the specified secret value for ${versionId !== undefined ? `VersionId: ${versionId}` : `staging label: ${stage}`}`,
      );
    }
    if (version.value === undefined) {
      throw notFound(`Secrets Manager can't find the specified secret value for VersionId: ${version.id}`);
    }
    return {
      ARN: secret.arn,
      Name: secret.name,
      VersionId: version.id,
      SecretString: version.value,
      VersionStages: [...version.stages],
      CreatedDate: version.created,
    };
  }

  private putSecretValue(input: Input): Record<string, unknown> {
    const secret = this.secret(requiredString(input, 'SecretId'));
    const value = optionalString(input, 'SecretString');
    if (value === undefined) {
      throw new InvalidRequestException({
        message: 'You must provide either SecretString or SecretBinary.',
        ...meta,
      });
    }
    const id = optionalString(input, 'ClientRequestToken') ?? randomUUID();
    const stages = (input.VersionStages as string[] | undefined) ?? [CURRENT];
    const existing = secret.versions.get(id);
    if (existing?.value !== undefined) {
      if (existing.value !== value) {
        throw new ResourceExistsException({
          message: `You can't modify an existing version, you can only create a new version. VersionId: ${id}`,
          ...meta,
        });
      }
      return { ARN: secret.arn, Name: secret.name, VersionId: id, VersionStages: [...existing.stages] };
    }
    const version = existing ?? {
      id,
      value: undefined,
      stages: new Set<string>(),
      created: this.now(),
      fromRotation: false,
    };
    version.value = value;
    secret.versions.set(id, version);
    for (const stage of stages) this.attach(secret, stage, version);
    secret.lastChanged = this.now();
    return { ARN: secret.arn, Name: secret.name, VersionId: id, VersionStages: [...version.stages] };
  }

  private updateSecretVersionStage(input: Input): Record<string, unknown> {
    const secret = this.secret(requiredString(input, 'SecretId'));
    const stage = requiredString(input, 'VersionStage');
    const moveTo = optionalString(input, 'MoveToVersionId');
    const removeFrom = optionalString(input, 'RemoveFromVersionId');
    const holder = [...secret.versions.values()].find((v) => v.stages.has(stage));
    if (removeFrom !== undefined && holder?.id !== removeFrom) {
      throw new InvalidParameterException({
        message: `The staging label ${stage} is not attached to version ${removeFrom}.`,
        ...meta,
      });
    }
    if (moveTo === undefined) {
      if (removeFrom === undefined) {
        throw new InvalidParameterException({
          message: 'You must specify MoveToVersionId or RemoveFromVersionId.',
          ...meta,
        });
      }
      if (stage === CURRENT) {
        throw new InvalidParameterException({
          message: 'You can only move AWSCURRENT, not remove it.',
          ...meta,
        });
      }
      holder?.stages.delete(stage);
    } else {
      const target = secret.versions.get(moveTo);
      if (target === undefined) throw notFound(`Secrets Manager can't find the specified version: ${moveTo}`);
      if (holder !== undefined && holder !== target && removeFrom === undefined) {
        throw new InvalidParameterException({
          message: `The parameter RemoveFromVersionId can't be empty. Staging label ${stage} is currently attached to version ${holder.id}, so you must explicitly reference that version in RemoveFromVersionId.`,
          ...meta,
        });
      }
      this.attach(secret, stage, target);
      if (stage === CURRENT && target.fromRotation) secret.lastRotated = this.now();
    }
    secret.lastChanged = this.now();
    return { ARN: secret.arn, Name: secret.name };
  }

  private async rotateSecret(input: Input): Promise<Record<string, unknown>> {
    const secret = this.secret(requiredString(input, 'SecretId'));
    const pending = [...secret.versions.values()].find((v) => v.stages.has(PENDING));
    if (pending !== undefined && !pending.stages.has(CURRENT)) {
      throw new InvalidRequestException({
        message: "A previous rotation isn't complete. That rotation will be reattempted.",
        ...meta,
      });
    }
    const lambdaArn = optionalString(input, 'RotationLambdaARN') ?? secret.rotationLambdaArn;
    const rules = (input.RotationRules as Record<string, unknown> | undefined) ?? secret.rotationRules;
    if (lambdaArn === undefined) {
      throw new InvalidRequestException({
        message: 'No Lambda rotation function ARN is associated with this secret.',
        ...meta,
      });
    }
    if (input.RotateImmediately === false) {
      // The configuration is kept only once the function passed the test.
      await testConfiguration(
        secret,
        this.functions.get(lambdaArn),
        lambdaArn,
        this.configurationTestVersion,
        {
          now: this.now,
          attach: (stage, version) => this.attach(secret, stage, version),
        },
      );
      secret.rotationLambdaArn = lambdaArn;
      secret.rotationRules = rules;
      return { ARN: secret.arn, Name: secret.name };
    }
    secret.rotationLambdaArn = lambdaArn;
    secret.rotationRules = rules;
    const id = optionalString(input, 'ClientRequestToken') ?? randomUUID();
    if (secret.versions.has(id)) {
      throw new ResourceExistsException({ message: `A version with ID ${id} already exists.`, ...meta });
    }
    const version: Version = {
      id,
      value: undefined,
      stages: new Set(),
      created: this.now(),
      fromRotation: true,
    };
    secret.versions.set(id, version);
    this.attach(secret, PENDING, version);
    return { ARN: secret.arn, Name: secret.name, VersionId: id };
  }

  private listSecretVersionIds(input: Input): Record<string, unknown> {
    const secret = this.secret(requiredString(input, 'SecretId'));
    const all = input.IncludeDeprecated === true;
    return {
      ARN: secret.arn,
      Name: secret.name,
      Versions: [...secret.versions.values()]
        .filter((v) => all || v.stages.size > 0)
        .map((v) => ({ VersionId: v.id, VersionStages: [...v.stages], CreatedDate: v.created })),
    };
  }

  /** Puts `stage` on `version` alone; AWSCURRENT leaves AWSPREVIOUS behind on its old version. */
  private attach(secret: Secret, stage: string, version: Version): void {
    for (const other of secret.versions.values()) {
      if (other === version || !other.stages.delete(stage)) continue;
      if (stage === CURRENT) {
        for (const v of secret.versions.values()) v.stages.delete(PREVIOUS);
        other.stages.add(PREVIOUS);
      }
    }
    version.stages.add(stage);
    if (stage === CURRENT) version.stages.delete(PREVIOUS);
  }

  private secret(secretId: string): Secret {
    const secret = this.secrets.get(secretId) ?? [...this.secrets.values()].find((s) => s.name === secretId);
    if (secret === undefined) throw notFound("Secrets Manager can't find the specified secret.");
    return secret;
  }
}
