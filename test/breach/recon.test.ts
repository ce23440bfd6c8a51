/**
 * Recon against the simulator and s3rver: the answer is recorded before anything else can fail,
 * `POST /recon` is sent at most once per request, and no address reaches a key, a log line, a
 * metric or the step's output.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recon } from '#lambdas/breach/breach-recon';
import { personRef } from '#lambdas/breach/contracts';
import { ReconOutcomeUnknownError } from '#lambdas/breach/errors';
import { breachRunPrefix } from '#lambdas/breach/identity';
import { InvalidInputError, VendorJsonLimitError, VendorThrottledError } from '#lambdas/platform/errors';
import { listKeys, readJson } from '../kit/s3.ts';
import {
  type BreachTestBed,
  everythingStored,
  IDENTITY_KEY,
  RESULTS_BUCKET,
  startBreachBed,
  storeRequest,
} from './fixture.ts';

const JANE = {
  name: 'Jane Doe',
  emails: ['jane.doe@example.com', 'JANE.DOE@example.com', 'jd@corp.example.net'],
};
/** The simulator never finds a breach for example.org addresses. */
const CLEAN = { name: 'Clean Person', emails: ['clean@example.org'] };

let bed: BreachTestBed;
beforeEach(async () => {
  bed = await startBreachBed();
});
afterEach(async () => {
  await bed.close();
});

describe('Recon', () => {
  it('records a success in recon.json and routes on it', async () => {
    const input = await storeRequest(bed.s3.client, JANE);

    const output = await recon(bed.deps, input);

    expect(output.recon.status).toBe('success');
    expect(output.recon.reportName).toMatch(/^jane-doe_/);
    expect(output.recon.totalBreaches).toBeGreaterThan(0);
    expect(output.outputPrefix).toMatch(/^breach\/people\/jane-doe-[0-9a-f]{16}\/req-1\/$/);
    const record = await readJson(bed.s3.client, RESULTS_BUCKET, output.recon.reconKey);
    expect(record).toMatchObject({
      status: 'success',
      output: output.recon.reportName,
      total_breaches: output.recon.totalBreaches,
      emailCount: 2,
      person: input.person,
      requestId: 'req-1',
      raw: { status: 'success', output: output.recon.reportName },
    });
    expect((record as { timings: { durationMs: number } }).timings.durationMs).toBeGreaterThanOrEqual(0);
    // The duplicate by case was dropped before the vendor saw the list.
    expect(bed.sim.requestCount('POST /recon')).toBe(1);
    expect(bed.metrics.recorded).toContainEqual(
      expect.objectContaining({
        name: 'BreachReports',
        dimensions: { workflow: 'breach', outcome: 'success' },
      }),
    );
  });

  it('records no_results as a normal outcome, without a report name', async () => {
    const input = await storeRequest(bed.s3.client, CLEAN);

    const output = await recon(bed.deps, input);

    expect(output.recon).toMatchObject({ status: 'no_results', totalBreaches: 0 });
    expect(output.recon.reportName).toBeUndefined();
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, output.outputPrefix)).toEqual([
      `${output.outputPrefix}recon.json`,
    ]);
  });

  it('answers a re-run from recon.json and never asks the vendor again', async () => {
    const input = await storeRequest(bed.s3.client, JANE);
    const first = await recon(bed.deps, input);

    const second = await recon(bed.deps, input);

    expect(second).toEqual(first);
    expect(bed.sim.requestCount('POST /recon')).toBe(1);
  });

  it('never repeats a recon whose answer was lost: the claim stops the next attempt', async () => {
    const input = await storeRequest(bed.s3.client, JANE);
    bed.sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'lose-response' } });

    await expect(recon(bed.deps, input)).rejects.toThrow();
    const retried = recon(bed.deps, input);

    await expect(retried).rejects.toBeInstanceOf(ReconOutcomeUnknownError);
    await expect(retried).rejects.toMatchObject({ name: 'ReconOutcomeUnknownError' });
    expect(bed.sim.requestCount('POST /recon')).toBe(1);
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/people/')).toEqual([
      expect.stringMatching(/\/req-1\/\.recon-claim$/),
    ]);
  });

  it('withdraws the claim after a 429, which proves nothing was made, so a retry may send it', async () => {
    const input = await storeRequest(bed.s3.client, JANE);
    bed.sim.addFault({
      api: 'breach',
      path: '/recon',
      fault: { type: 'status', status: 429, retryAfter: 1 },
    });

    await expect(recon(bed.deps, input)).rejects.toBeInstanceOf(VendorThrottledError);
    const output = await recon(bed.deps, input);

    expect(output.recon.status).toBe('success');
    expect(bed.sim.requestCount('POST /recon')).toBe(2);
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, output.outputPrefix)).toEqual([
      `${output.outputPrefix}recon.json`,
    ]);
  });

  it('keeps the claim after a 500, which may come after the report was made', async () => {
    const input = await storeRequest(bed.s3.client, JANE);
    bed.sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'status', status: 500 } });

    await expect(recon(bed.deps, input)).rejects.toThrow(/HTTP 500/);

    await expect(recon(bed.deps, input)).rejects.toBeInstanceOf(ReconOutcomeUnknownError);
    expect(bed.sim.requestCount('POST /recon')).toBe(1);
  });

  it('records an answer it cannot route on, then fails', async () => {
    const input = await storeRequest(bed.s3.client, JANE);
    bed.sim.addFault({
      api: 'breach',
      path: '/recon',
      fault: { type: 'status', status: 200, body: '{"status":"queued","output":"later"}' },
    });

    await expect(recon(bed.deps, input)).rejects.toThrow(/status must be success or no_results/);
    const kept = await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/people/');
    expect(kept).toEqual([expect.stringMatching(/recon\.json$/)]);
    expect(await readJson(bed.s3.client, RESULTS_BUCKET, kept[0] as string)).toMatchObject({
      status: 'queued',
      raw: { output: 'later' },
    });
  });

  it('refuses a bad request object by position, before any claim or vendor call', async () => {
    const input = await storeRequest(bed.s3.client, {
      name: 'Jane',
      emails: ['jane@example.com', 'not-an-address'],
    });

    const attempt = recon(bed.deps, input);

    await expect(attempt).rejects.toBeInstanceOf(InvalidInputError);
    await expect(attempt).rejects.toThrow(/request\.emails\[1\]: has no '@'/);
    await expect(attempt).rejects.not.toThrow(/not-an-address/);
    expect(bed.sim.requestCount('POST /recon')).toBe(0);
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/people/')).toEqual([]);
  });

  it('refuses an input that carries addresses instead of a request object', async () => {
    await expect(
      recon(bed.deps, { requestId: 'r', name: 'Jane', emails: ['jane@example.com'] }),
    ).rejects.toThrow(/person: is missing/);
  });

  it('lets no address reach a key, a stored record, a log line or a metric', async () => {
    const addresses = [...JANE.emails, ...CLEAN.emails];
    for (const [index, person] of [JANE, CLEAN].entries()) {
      const input = await storeRequest(bed.s3.client, person, `req-${index}`);
      const output = await recon(bed.deps, input);
      expect(JSON.stringify(output)).not.toMatch(/@/);
    }

    const everything = (await everythingStored(bed)).toLowerCase();

    for (const address of addresses) expect(everything).not.toContain(address.toLowerCase());
    expect(everything).not.toContain('jane doe');
  });

  it("reads only its own line of a watchlist shard, and refuses a range that cannot be one person's", async () => {
    const lines = [CLEAN, JANE].map((person) => `${JSON.stringify(person)}\n`);
    const key = 'breach/watchlists/w/run-1/requests/shard-00000.jsonl';
    await bed.s3.client.send(
      new PutObjectCommand({ Bucket: RESULTS_BUCKET, Key: key, Body: lines.join('') }),
    );
    const janeStart = Buffer.byteLength(lines[0] ?? '');
    const jane = {
      requestId: 'w1-2',
      person: personRef(IDENTITY_KEY, JANE),
      request: {
        bucket: RESULTS_BUCKET,
        key,
        range: { start: janeStart, end: janeStart + Buffer.byteLength(lines[1] ?? '') - 2 },
      },
    };

    const output = await recon(bed.deps, jane);

    // Jane's line was read (the clean person's would have found nothing).
    expect(output.recon.status).toBe('success');
    expect(output.recon.reportName).toMatch(/^jane-doe_/);
    await expect(
      recon(bed.deps, {
        ...jane,
        requestId: 'w1-3',
        request: { ...jane.request, range: { start: 0, end: 70_000 } },
      }),
    ).rejects.toThrow(new InvalidInputError('request.range', 'is larger than 65536 bytes'));
    await expect(
      recon(bed.deps, {
        ...jane,
        requestId: 'w1-4',
        request: { ...jane.request, range: { start: janeStart, end: janeStart + 5_000 } },
      }),
    ).rejects.toThrow(new InvalidInputError('request.range', 'lies outside the stored object'));
  });
});

describe('Recon answered with JSON nested 20,000 levels deep (deep-json)', () => {
  it('refuses it with VendorJsonLimitError, records recon.json as unreadable and releases the claim', async () => {
    const input = await storeRequest(bed.s3.client, JANE);
    bed.sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'deep-json' } });

    const error = await recon(bed.deps, input).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(VendorJsonLimitError);
    expect(error).toMatchObject({ name: 'VendorJsonLimitError', retryable: false });
    expect((error as Error).message).toMatch(/deeper than 64 levels/);
    const prefix = breachRunPrefix(input.person, input.requestId);
    // Nothing orphaned: the claim is gone, recon.json says what happened.
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, prefix)).toEqual([`${prefix}recon.json`]);
    expect(await readJson(bed.s3.client, RESULTS_BUCKET, `${prefix}recon.json`)).toMatchObject({
      status: 'unreadable',
      output: null,
      raw: { error: 'VendorJsonLimitError' },
    });
    // A re-run is answered from recon.json: no second report is made.
    await expect(recon(bed.deps, input)).rejects.toThrow(/status must be success or no_results/);
    expect(bed.sim.requestCount('POST /recon')).toBe(1);
  });
});
