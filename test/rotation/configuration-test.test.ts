/**
 * What a deploy does to the rotation function. The stack's schedule sets RotateImmediately false,
 * so Secrets Manager tests the configuration by running testSecret alone on a fresh AWSPENDING
 * version, then removes it (RotateSecret API reference, RotateImmediately). The stand-in does that
 * with the real steps registered behind the ARN. On the secret as the stack creates it (the
 * placeholder) the test must pass quietly, without the vendor; a seeded secret stays as strict.
 */
import {
  DescribeSecretCommand,
  PutSecretValueCommand,
  RotateSecretCommand,
} from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import type { ConfigurationTestVersion } from '#local/services/secrets-manager/configuration-test';
import {
  KEY_INFO_ROUTE,
  ROTATE_ROUTE,
  ROTATION_FUNCTION_ARN,
  type RotationWorld,
  useRotationWorlds,
} from './harness.ts';

const setUp = useRotationWorlds();

/** The value lib/platform/vendor-secrets.ts creates the secret with (nonce generated there). */
const PLACEHOLDER = JSON.stringify({
  placeholder: 'replace this secret with the vendor API key',
  nonce: 'Zq8x1',
});

/** What CloudFormation's RotationSchedule asks for on create or update. */
function configureSchedule(w: RotationWorld) {
  return w.client.send(
    new RotateSecretCommand({
      SecretId: w.secretId,
      RotationLambdaARN: ROTATION_FUNCTION_ARN,
      RotationRules: { ScheduleExpression: 'rate(30 days)', Duration: '2h' },
      RotateImmediately: false,
    }),
  );
}

const VARIANTS: readonly ConfigurationTestVersion[] = ['empty', 'copy-of-current'];

describe('the configuration test on a secret never seeded', () => {
  it.each(VARIANTS)(
    'passes quietly with a %s test version: no vendor call, no error, no metric',
    async (holds) => {
      // Prepare
      const w = await setUp({ initialValue: () => PLACEHOLDER });
      w.store.configurationTestVersion = holds;

      // Act
      const configured = configureSchedule(w);

      // Assess
      await expect(configured).resolves.toMatchObject({ ARN: w.secretId });
      expect(w.sim.requestCount(KEY_INFO_ROUTE) + w.sim.requestCount(ROTATE_ROUTE)).toBe(0);
      expect(w.logger.lines.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
      expect(w.logger.lines.map((l) => l.message)).toContain(
        'configuration test on a secret not seeded yet: nothing to test',
      );
      expect(w.metrics.recorded).toEqual([]);
      // The test version is gone and the placeholder untouched; rotation is configured.
      expect(Object.values(w.store.stagesOf(w.secretId))).toEqual([['AWSCURRENT']]);
      expect(w.store.valueAt(w.secretId, 'AWSCURRENT')).toBe(PLACEHOLDER);
      const described = await w.client.send(new DescribeSecretCommand({ SecretId: w.secretId }));
      expect(described.RotationEnabled).toBe(true);
    },
  );
});

describe('the configuration test on a seeded secret', () => {
  it('tests the key when the test version holds a copy of it', async () => {
    // Prepare
    const w = await setUp();
    w.store.configurationTestVersion = 'copy-of-current';

    // Act
    const configured = configureSchedule(w);

    // Assess
    await expect(configured).resolves.toMatchObject({ ARN: w.secretId });
    expect(w.sim.requestCount(KEY_INFO_ROUTE)).toBe(1);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(0);
  });

  it('tests the stored key with an empty test version (a schedule changed after seeding), never rotating', async () => {
    // Prepare
    const w = await setUp();
    w.store.configurationTestVersion = 'empty';

    // Act
    const configured = configureSchedule(w);

    // Assess
    await expect(configured).resolves.toMatchObject({ ARN: w.secretId });
    expect(w.sim.requestCount(KEY_INFO_ROUTE)).toBe(1);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(0);
    expect(w.logger.lines.map((l) => l.message)).toContain(
      'configuration test on a seeded secret: the current key works',
    );
    expect(Object.values(w.store.stagesOf(w.secretId))).toEqual([['AWSCURRENT']]);
  });

  it.each(VARIANTS)(
    'fails the configuration with a %s test version when the stored key no longer works, rotating nothing',
    async (holds) => {
      // Prepare: the vendor replaced the key behind the secret's back.
      const w = await setUp();
      w.store.configurationTestVersion = holds;
      w.sim.replaceKey();

      // Act
      const configured = configureSchedule(w);

      // Assess
      await expect(configured).rejects.toMatchObject({ name: 'InvalidRequestException' });
      expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(0);
      expect(Object.values(w.store.stagesOf(w.secretId))).toEqual([['AWSCURRENT']]);
    },
  );

  it('after the deploy-time test on the placeholder, seeding and rotating work as usual', async () => {
    // Prepare: deploy (placeholder + configuration test), then the operator seeds the key.
    const w = await setUp({ initialValue: () => PLACEHOLDER });
    await configureSchedule(w);
    await w.client.send(
      new PutSecretValueCommand({
        SecretId: w.secretId,
        SecretString: JSON.stringify({ apiKey: w.sim.apiKey, orgUuid: w.sim.orgUuid }),
        VersionStages: ['AWSCURRENT'],
      }),
    );

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expect(JSON.parse(w.store.valueAt(w.secretId, 'AWSCURRENT') ?? '{}').apiKey).toBe(w.sim.apiKey);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
  });
});
