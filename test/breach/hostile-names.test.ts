/**
 * A vendor that puts an address in a report name (`output`), and a person's name that is one: the
 * synthesized BreachReport run against the simulator, then everything it stored, logged, passed
 * between states and returned is searched for the address.
 */
import { describe, expect, it } from 'vitest';
import { parseBreachRequest } from '#lambdas/breach/contracts';
import { reportFolder } from '#lambdas/breach/identity';
import { InvalidInputError } from '#lambdas/platform/errors';
import { describeResult } from '#local/cli/breach-command';
import { type LocalBreachOptions, runBreachReport } from '#local/runner/breach-run';
import { listKeys, readJson } from '../kit/s3.ts';
import {
  bed,
  everythingStored,
  REPORT_NAMING_KEY,
  RESULTS_BUCKET,
  runOptions,
  useBreachRun,
} from './fixture.ts';

const ADDRESS = /bob\.smith(?:@|%40)example|example-com|example\.com/i;

useBreachRun();

function options(payloads: unknown[]): LocalBreachOptions {
  return runOptions({ onStatePayload: (_state, payload) => payloads.push(payload) });
}

describe('a report name that holds an address', () => {
  it.each([
    ['the address itself', 'bob.smith@example.com'],
    ['after a prefix', 'report-for-bob.smith@example.com'],
    ['glued to a timestamp', 'bob.smith@example.com_20260101120000_a1b2c3'],
    ['percent-encoded', 'report-for-bob.smith%40example.com'],
  ])('%s: archived, and the address is nowhere but the request', async (_what, reportName) => {
    bed.sim.scriptReportName(reportName);
    const payloads: unknown[] = [];

    const run = await runBreachReport(options(payloads), {
      name: 'Bob Smith',
      emails: ['bob.smith@example.com'],
      requestId: 'h1',
    });

    // The exact name still reaches the vendor's download: the report is archived.
    expect(run.outcome).toBe('archived');
    if (run.outcome !== 'archived') return;
    expect(run.result.archiveKey.startsWith(reportFolder(reportName, REPORT_NAMING_KEY))).toBe(true);
    expect(reportFolder(reportName, REPORT_NAMING_KEY)).not.toMatch(ADDRESS);
    const everything = [
      await everythingStored(bed),
      JSON.stringify(payloads),
      JSON.stringify(run),
      describeResult(run, '/out'),
    ].join('\n');
    expect(everything).not.toMatch(ADDRESS);
    const recon = await readJson(bed.s3.client, RESULTS_BUCKET, `${run.outputPrefix}recon.json`);
    expect(recon.output).toContain('[REDACTED]');
    // Only the request's own folder holds it, next to the request object.
    const personal = (await listKeys(bed.s3.client, RESULTS_BUCKET)).filter((key) =>
      key.startsWith('breach/requests/'),
    );
    expect(personal).toEqual([
      expect.stringMatching(/^breach\/requests\/[0-9a-f]{16}-h1\.json$/),
      expect.stringMatching(/^breach\/requests\/[0-9a-f]{16}-h1\.report-name\.json$/),
    ]);
  });

  it('a plain report name is stored as it is, with no extra object', async () => {
    bed.sim.scriptReportName('bob-smith_20260101_abc');
    const run = await runBreachReport(options([]), {
      name: 'Bob Smith',
      emails: ['bob.smith@example.com'],
      requestId: 'p1',
    });
    expect(run.outcome).toBe('archived');
    const recon = await readJson(bed.s3.client, RESULTS_BUCKET, `${run.outputPrefix}recon.json`);
    expect(recon).toMatchObject({ output: 'bob-smith_20260101_abc', reportNameKey: null });
  });
});

describe("a person's name that is or holds an address", () => {
  it.each(['bob.smith@example.com', 'Bob Smith <bob.smith@example.com>', 'Bob bob.smith%40example.com'])(
    '%j is refused, naming the field without echoing it',
    (name) => {
      let error: unknown;
      try {
        parseBreachRequest({ name, emails: ['bob.smith@example.com'] });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(/name/);
      expect((error as Error).message).toMatch(/email address/);
      expect((error as Error).message).not.toMatch(ADDRESS);
    },
  );

  it('accepts names with @-free punctuation', () => {
    expect(parseBreachRequest({ name: "Bob O'Smith-Jones, Jr.", emails: ['b@example.org'] }).name).toBe(
      "Bob O'Smith-Jones, Jr.",
    );
  });
});
