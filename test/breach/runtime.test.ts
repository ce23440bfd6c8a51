/**
 * The breach and watchlist deps as the Lambda entry points build them from the environment: what
 * each function is given, and the errors that name a missing variable.
 */
import { describe, expect, it } from 'vitest';
import { breachStorageDepsFromEnvironment } from '#lambdas/breach/deps';
import { breachDepsFromEnvironment } from '#lambdas/breach/vendor-deps';
import { ConfigurationError } from '#lambdas/platform/errors';
import { createObservability } from '#lambdas/platform/runtime/observability';
import { createStaticSecretReader, type SecretReader } from '#lambdas/platform/secrets';
import { watchlistDepsFromEnvironment } from '#lambdas/watchlist/deps';
import { identityKeyFromSecret } from '#lambdas/watchlist/identity-key';
import { createS3rverClient } from '#local/services/s3/embedded-s3';

const tools = () => createObservability({ POWERTOOLS_LOG_LEVEL: 'SILENT' });
const BASE = { RESULTS_BUCKET: 'results-bucket', POWERTOOLS_LOG_LEVEL: 'SILENT' };

describe('breach deps from the environment', () => {
  it('gives the S3-only steps no vendor access: a call rejects, naming BREACH_API_URL', async () => {
    const deps = breachStorageDepsFromEnvironment({ ...BASE, BREACH_MAX_EMAILS: '20' }, tools());

    await expect(deps.breachClient.recon({ name: 'x', emails: [] })).rejects.toThrow(
      /BREACH_API_URL: this function has no vendor access by design \(it used breach\.recon\)/,
    );
    expect(deps.settings).toMatchObject({ resultsBucket: 'results-bucket', maxEmails: 20 });
  });

  it.each([
    [{ BREACH_MAX_EMAILS: '0' }, /BREACH_MAX_EMAILS/],
    [{ BREACH_MAX_EMAILS: '101' }, /BREACH_MAX_EMAILS/],
    [{ BREACH_MAX_EMAILS: 'many' }, /BREACH_MAX_EMAILS/],
    [{ RESULTS_BUCKET: '' }, /RESULTS_BUCKET/],
  ])('refuses %j with a ConfigurationError naming the variable', (env, message) => {
    expect(() => breachStorageDepsFromEnvironment({ ...BASE, ...env }, tools())).toThrow(message);
  });

  it('builds the vendor steps with BREACH_API_URL and the breach key, and refuses without them', () => {
    const s3 = createS3rverClient('http://127.0.0.1:9');
    const secrets = createStaticSecretReader({});
    expect(() => breachDepsFromEnvironment(BASE, tools(), { s3, secrets })).toThrow(/BREACH_API_URL/);
    expect(() =>
      breachDepsFromEnvironment({ ...BASE, BREACH_API_URL: 'https://breach.vendor.example.net' }, tools(), {
        s3,
        secrets,
      }),
    ).toThrow(/VENDOR_API_KEY_SECRET_ARN: is required \(or BREACH_API_KEY_SECRET_ARN\)/);
    const deps = breachDepsFromEnvironment(
      {
        ...BASE,
        BREACH_API_URL: 'https://breach.vendor.example.net',
        BREACH_API_KEY_SECRET_ARN: 'arn:breach',
      },
      tools(),
      { s3, secrets },
    );
    expect(deps.breachClient).toBeDefined();
    s3.destroy();
  });
});

describe('watchlist deps from the environment', () => {
  it('reads the identity key once per cold start, and again after a failed read', async () => {
    const reads: string[] = [];
    let fail = true;
    const secrets: SecretReader = {
      async getSecretString(id) {
        reads.push(id);
        if (fail) {
          fail = false;
          throw new Error('throttled');
        }
        return 'k'.repeat(64);
      },
    };
    const deps = watchlistDepsFromEnvironment(
      { ...BASE, BREACH_IDENTITY_KEY_SECRET_ARN: 'arn:identity' },
      tools(),
      {
        identityKey: identityKeyFromSecret(secrets),
      },
    );

    await expect(deps.identityKey()).rejects.toThrow('throttled');
    expect(await deps.identityKey()).toBe('k'.repeat(64));
    expect(await deps.identityKey()).toBe('k'.repeat(64));
    expect(reads).toEqual(['arn:identity', 'arn:identity']);
  });

  it('names BREACH_IDENTITY_KEY_SECRET_ARN when it is missing', async () => {
    const deps = watchlistDepsFromEnvironment(BASE, tools(), {
      identityKey: identityKeyFromSecret(createStaticSecretReader({})),
    });

    await expect(deps.identityKey()).rejects.toBeInstanceOf(ConfigurationError);
    await expect(deps.identityKey()).rejects.toThrow(/BREACH_IDENTITY_KEY_SECRET_ARN: is required/);
  });

  it('reads the watchlist limits, held to the configuration bounds', () => {
    expect(watchlistDepsFromEnvironment(BASE, tools()).settings).toMatchObject({
      maxWatchlistBytes: 5 * 1024 * 1024,
      maxWatchlistRows: 10_000,
    });
    expect(
      watchlistDepsFromEnvironment({ ...BASE, WATCHLIST_MAX_BYTES: '2048', WATCHLIST_MAX_ROWS: '3' }, tools())
        .settings,
    ).toMatchObject({ maxWatchlistBytes: 2048, maxWatchlistRows: 3 });
    expect(() => watchlistDepsFromEnvironment({ ...BASE, WATCHLIST_MAX_ROWS: '0' }, tools())).toThrow(
      /WATCHLIST_MAX_ROWS/,
    );
    expect(() => watchlistDepsFromEnvironment({ ...BASE, WATCHLIST_MAX_BYTES: 'lots' }, tools())).toThrow(
      /WATCHLIST_MAX_BYTES/,
    );
  });

  it.each([
    ['BREACH_MAX_ARCHIVE_BYTES', '1024'],
    ['BREACH_MAX_UNCOMPRESSED_BYTES', 'lots'],
    ['BREACH_MAX_COMPRESSION_RATIO', '1'],
    ['BREACH_MAX_INLINE_VALUE_BYTES', '999999'],
  ])('refuses %s=%s, naming the variable', (variable, value) => {
    expect(() => breachStorageDepsFromEnvironment({ ...BASE, [variable]: value }, tools())).toThrow(
      new RegExp(`Configuration ${variable}: must`),
    );
  });

  it('reads the breach input bounds, defaults for the unset ones', () => {
    expect(breachStorageDepsFromEnvironment(BASE, tools()).settings.limits).toEqual({
      maxArchiveBytes: 64 * 1024 * 1024,
      maxUncompressedBytes: 256 * 1024 * 1024,
      maxCompressionRatio: 100,
      maxInlineValueBytes: 1024,
    });
    const env = { ...BASE, BREACH_MAX_ARCHIVE_BYTES: '2097152', BREACH_MAX_INLINE_VALUE_BYTES: '256' };
    expect(breachStorageDepsFromEnvironment(env, tools()).settings.limits).toMatchObject({
      maxArchiveBytes: 2 * 1024 * 1024,
      maxInlineValueBytes: 256,
      maxCompressionRatio: 100,
    });
  });

  it('gives the summary its child lookup only with BREACH_STATE_MACHINE_ARN', () => {
    const lookup = { describe: async () => ({ status: 'RUNNING' }) };
    const withArn = watchlistDepsFromEnvironment({ ...BASE, BREACH_STATE_MACHINE_ARN: 'arn:sm' }, tools(), {
      executions: (arn) => {
        expect(arn).toBe('arn:sm');
        return lookup;
      },
    });
    const without = watchlistDepsFromEnvironment(BASE, tools(), { executions: () => lookup });

    expect(withArn.executions).toBe(lookup);
    expect(without.executions).toBeUndefined();
  });
});
