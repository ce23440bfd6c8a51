/**
 * Dependents keep working through a rotation: a list of scans is in flight (started, polling,
 * fetching) through the synthesized ScanDomain definition and the real handlers, with a vendor key
 * read from the secret and cached for an hour, when the key rotates, and the window between the
 * vendor's rotate and finishSecret is held open for a round of polls. Every scan succeeds: calls
 * refused with the dead key re-read AWSCURRENT, and during the window take AWSPENDING.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretsManagerReader, credentialProviderFromSecret } from '#lambdas/platform/secrets';
import { VENDOR_APIS } from '#lambdas/registry';
import { runRotationStep } from '#lambdas/rotation/rotation-step';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import { runDomainList } from '../../local/runner/domain-list-run.ts';
import { driveRotation } from '../../local/runner/rotation-driver.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { scanDomainStateMachine } from '../../local/synth/definitions.ts';
import { cachedTemplate } from '../../local/synth/synth-cache.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { createRotationWorld, ROTATE_ROUTE, type RotationWorld } from './harness.ts';

const DOMAINS = [
  'a.example.com',
  'b.example.com',
  'c.example.com',
  'd.example.com',
  'e.example.com',
  'f.example.com',
];

let world: RotationWorld;
let s3: S3rverFixture;
beforeAll(async () => {
  world = await createRotationWorld({ pollsToFinish: 6 });
  s3 = await startS3rver({ buckets: ['input', 'results'] });
});
afterAll(async () => {
  await s3.close();
  await world.close();
});

describe('scans across a rotation', () => {
  it('finishes every scan of a list that is in flight while the key rotates', async () => {
    // Prepare: the scans read their key as the deployed handlers do, cached for an hour.
    const reader = createSecretsManagerReader({ client: world.client, maxAgeSeconds: 3600 });
    const transportLog = createMemoryLogger();
    const scanClient = new ScanClient({
      baseUrl: world.sim.url,
      credentials: credentialProviderFromSecret(reader, world.secretId, { api: 'scan', apis: VENDOR_APIS }),
      logger: transportLog,
    });
    const oldKey = world.sim.apiKey;
    const scanLogger = createMemoryLogger();

    // Act: start the list; rotate once every scan has started and before any finished.
    const list = runDomainList(
      {
        s3: s3.client,
        inputBucket: 'input',
        resultsBucket: 'results',
        scanDefinition: scanDomainStateMachine(await cachedTemplate(DEFAULT_PIPELINE_CONFIG)).definition,
        scanClient,
        poll: { ...DEFAULT_PIPELINE_CONFIG.poll, minWaitSeconds: 1, maxWaitSeconds: 1, deadlineSeconds: 600 },
        concurrency: DOMAINS.length,
        intakePrefix: DEFAULT_PIPELINE_CONFIG.intake.prefix,
        intakeSuffixes: DEFAULT_PIPELINE_CONFIG.intake.suffixes,
        waitOverrideMs: 40,
        retryIntervalMs: 20,
        logger: scanLogger,
      },
      { domains: DOMAINS },
    );
    const pause = () => new Promise((r) => setTimeout(r, 10));
    while (world.sim.requestCount('POST /scan') < DOMAINS.length) await pause();
    // Hold the window open: between createSecret (the vendor rotated) and finishSecret, polls go on.
    const rotation = await driveRotation(world.client, world.secretId, async (request) => {
      if (request.Step === 'testSecret') {
        const polled = world.sim.requestCount('GET /status/{uuid}');
        while (world.sim.requestCount('GET /status/{uuid}') < polled + DOMAINS.length) await pause();
      }
      return runRotationStep(request, world.deps);
    });
    const result = await list;
    await scanClient.close();

    // Assess
    expect(rotation.error).toBeUndefined();
    expect(world.sim.apiKey).not.toBe(oldKey);
    expect(world.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expect(result.summary.counts.succeeded).toBe(DOMAINS.length);
    // The rotation really hit calls in flight: some were refused and recovered with a re-read key.
    const decisions = transportLog.lines.map((line) => line.fields.decision);
    expect(decisions).toContain('refresh-credential');
    expect(decisions).toContain('pending-credential');
    expect(JSON.stringify([transportLog.lines, scanLogger.lines])).not.toContain(oldKey);
  });
});
