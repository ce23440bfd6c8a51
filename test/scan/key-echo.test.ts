/**
 * Issue 32, item 6: a status answer that echoes the request's `Authorization` header, run through
 * the synthesized ScanDomain definition. The key is a plain word, so only the redaction of the key
 * in use can hide it; the leak watch (test/kit/leak-watch.ts) searches every payload and object too.
 */
import { describe, expect, it } from 'vitest';
import { REDACTED } from '#lambdas/platform/redaction/redact';
import { readJson } from '../kit/s3.ts';
import { execute, logger, RESULTS, s3, sim, useScanExecution } from './scan-execution-fixture.ts';

const WORD_KEY = 'TambourineOrchardGlacier';

useScanExecution({ apiKey: WORD_KEY });

describe('a status answer that echoes the key', () => {
  it('is classified, and kept redacted in the state and the manifest, still JSON', async () => {
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/status/',
      times: Number.POSITIVE_INFINITY,
      fault: { type: 'key-echo' },
    });

    const run = await execute('echo.example.com');

    expect(run.result.outcome?.state).toBe('succeeded');
    const history = JSON.stringify(run.events);
    expect(history).not.toContain(WORD_KEY);
    expect(history).toContain(`Bearer ${REDACTED}`);
    expect(logger.text()).not.toContain(WORD_KEY);
    const manifestKey = run.result.outcome?.manifestKey ?? '';
    const manifest = await readJson<{ finalStatus: { raw: string; state: string } }>(
      s3.client,
      RESULTS,
      manifestKey,
    );
    expect(manifest.finalStatus.state).toBe('succeeded');
    expect(JSON.parse(manifest.finalStatus.raw)).toMatchObject({
      status: 'completed',
      authorization: `Bearer ${REDACTED}`,
      note: `served for ${REDACTED}`,
    });
  });
});
