/**
 * The vendor statistics job's Lambda entry (lambdas/operations/record-vendor-stats.ts): its deps
 * from the environment the construct sets (a bad variable is named), and one run through the lazy
 * entry against the simulator and s3rver, with the key read from its secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRecordVendorStatsHandler,
  vendorStatsDepsFromEnvironment,
} from '#lambdas/operations/record-vendor-stats';
import { VENDOR_STATS_LATEST_KEY } from '#lambdas/operations/vendor-stats';
import { ConfigurationError } from '#lambdas/platform/errors';
import { createLazyHandler, createObservability } from '#lambdas/platform/runtime/observability';
import { createStaticSecretReader } from '#lambdas/platform/secrets';
import type { VendorSimulator } from '#local/simulator/types';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { thrownBy } from '../kit/errors.ts';
import { readJson } from '../kit/s3.ts';
import { startSimulator } from '../kit/simulator.ts';

const BUCKET = 'vendor-stats-entry';
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:vendor-key';

let s3: S3rverFixture;
let sim: VendorSimulator;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [BUCKET] });
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
  await s3.close();
});

const tools = () => createObservability({ POWERTOOLS_LOG_LEVEL: 'SILENT' });
const env = (): Record<string, string | undefined> => ({
  RESULTS_BUCKET: BUCKET,
  SCAN_API_URL: `${sim.url}/`,
  VENDOR_API_KEY_SECRET_ARN: SECRET_ARN,
  POWERTOOLS_LOG_LEVEL: 'SILENT',
});
const secrets = () => createStaticSecretReader({ [SECRET_ARN]: sim.apiKey });

describe('the record-vendor-stats entry', () => {
  it.each([
    ['RESULTS_BUCKET', undefined, 'RESULTS_BUCKET'],
    ['SCAN_API_URL', undefined, 'SCAN_API_URL'],
    ['VENDOR_STATS_FIELDS', '{"finished": "a..b"}', 'VENDOR_STATS_FIELDS.finished'],
    ['VENDOR_STATS_FIELDS', '{"done": "totals.done"}', 'VENDOR_STATS_FIELDS.done'],
    ['VENDOR_STATS_FIELDS', 'not json', 'VENDOR_STATS_FIELDS'],
    ['STATUS_VOCABULARY', '{"succeeded": 3}', 'STATUS_VOCABULARY'],
  ])('names %s when it is %s', (variable, value, setting) => {
    const error = thrownBy(ConfigurationError, () =>
      vendorStatsDepsFromEnvironment({ ...env(), [variable]: value }, tools(), {
        s3: s3.client,
        secrets: secrets(),
      }),
    );
    expect(error.setting).toMatch(new RegExp(`^${setting.replace('.', '\\.')}`));
  });

  it('reads the counts at VENDOR_STATS_FIELDS and keeps the read, through the lazy Lambda entry', async () => {
    // Prepare: the counts at configured paths, the key from its secret
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/stats',
      fault: { type: 'status', status: 200, body: '{"totals": {"done": 4, "broken": 1}}' },
    });
    const configured = {
      ...env(),
      VENDOR_STATS_FIELDS: '{"finished":"totals.done","failed":"totals.broken"}',
    };
    const lambda = createLazyHandler({
      deps: (t) => vendorStatsDepsFromEnvironment(configured, t, { s3: s3.client, secrets: secrets() }),
      handler: createRecordVendorStatsHandler,
      observability: tools,
    });

    // Act
    const outcome = await lambda({}, undefined);

    // Assess
    expect(outcome).toMatchObject({ finished: 4, failed: 1, problem: null, history: { written: true } });
    expect(await readJson(s3.client, BUCKET, VENDOR_STATS_LATEST_KEY)).toMatchObject({
      finished: 4,
      failed: 1,
    });
  });
});
