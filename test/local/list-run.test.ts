/**
 * A whole list run on this machine (`runDomainList`): the real PrepareDomainList and WriteListSummary
 * handlers, the fan-out with its concurrency bound, and every item through the synthesized ScanDomain
 * definition, against the vendor simulator and s3rver on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainListItem, ListSummary } from '#lambdas/domain-list/contracts';
import type { ListDeps } from '#lambdas/domain-list/deps';
import type { ScanApi } from '#lambdas/scan/deps';
import type { VendorClients } from '#lambdas/vendor-api/clients';
import { createPrepareDomainListHandler } from '../../lambdas/domain-list/prepare-domain-list.ts';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import type { ProgressEvent } from '../../local/output/progress.ts';
import { type LocalRunResult, runDomainList } from '../../local/runner/domain-list-run.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import type { AslDefinition } from '../../local/synth/definitions.ts';
import { scanDomainStateMachine } from '../../local/synth/definitions.ts';
import { cachedTemplate } from '../../local/synth/synth-cache.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { objectExists, readJson, readObject } from '../kit/s3.ts';
import { vendorClientsFor } from './harness.ts';

const INPUT = 'list-input';
const RESULTS = 'list-results';
const CONCURRENCY = 3;
const FILE_NAME = 'team list+ü.txt';

/** 19 lines: 12 distinct domains (one fails at the vendor), 3 invalid, 2 duplicates, 2 ignored. */
const LIST_LINES = [
  '# weekly scan of the team domains', //  1 ignored
  'alpha.example.com', //                   2
  'https://Beta.Example.com/login', //      3
  'not a domain!', //                       4 invalid
  'ALPHA.example.com', //                   5 duplicate of line 2
  'broken.example.com', //                  6 the vendor fails this scan
  '', //                                    7 ignored
  'bücher.de', //                           8
  'gamma.example.com', //                   9
  'a..b.example.com', //                   10 invalid
  'delta.example.com # the shop', //       11
  'epsilon.example.com', //                12
  'zeta.example.com', //                   13
  'http://', //                            14 invalid
  'eta.example.com', //                    15
  'theta.example.com', //                  16
  'xn--bcher-kva.de', //                   17 duplicate of line 8
  'iota.example.com', //                   18
  'kappa.example.com', //                  19
];

let definition: AslDefinition;
let s3: S3rverFixture;
let sim: VendorSimulator;
let clients: VendorClients;
let run: LocalRunResult;
/** Scans started and not yet finished, over the whole run. */
const inFlight = new Set<string>();
let maxInFlight = 0;
const started: string[] = [];

/** The real client, observed: a scan is in flight from its POST until its execution is done. */
function countingScanClient(inner: ScanApi): ScanApi {
  return {
    startScan: async (domain) => {
      started.push(domain);
      inFlight.add(domain);
      maxInFlight = Math.max(maxInFlight, inFlight.size);
      return inner.startScan(domain);
    },
    getStatus: (uuid) => inner.getStatus(uuid),
    getOutput: (output, uuid, options) => inner.getOutput(output, uuid, options),
    deleteScan: (uuid) => inner.deleteScan(uuid),
    listScans: () => inner.listScans(),
  };
}

function listDeps(): ListDeps {
  return {
    s3: s3.client,
    logger: createMemoryLogger(),
    settings: { resultsBucket: RESULTS, inputBucket: INPUT },
  };
}

beforeAll(async () => {
  definition = scanDomainStateMachine(await cachedTemplate(DEFAULT_PIPELINE_CONFIG)).definition;
  s3 = await startS3rver({ buckets: [INPUT, RESULTS] });
  sim = await startVendorSimulator({ pollsToFinish: 2, failingDomains: ['broken.example.com'] });
  clients = vendorClientsFor(sim);
  const progress: ProgressEvent[] = [];

  // The run every test below reads.
  run = await listRun(
    { domains: [], file: { name: FILE_NAME, bytes: Buffer.from(`${LIST_LINES.join('\n')}\n`, 'utf8') } },
    {
      scanClient: countingScanClient(clients.scan),
      onProgress: (event) => {
        progress.push(event);
        if (event.type === 'domain-done') inFlight.delete(event.domain);
      },
    },
  );
});

afterAll(async () => {
  await clients?.close();
  await sim?.close();
  await s3?.close();
});

describe('a list run of a file with valid, invalid, duplicate, comment and failing lines', () => {
  it('keeps the uploaded list under its own name, spaces, plus and unicode included', async () => {
    // Assess
    expect(run.prepared.source).toMatchObject({ type: 's3', bucket: INPUT, key: `incoming/${FILE_NAME}` });
    expect((await readObject(s3.client, INPUT, `incoming/${FILE_NAME}`)).toString('utf8')).toBe(
      `${LIST_LINES.join('\n')}\n`,
    );
    expect(run.summaryKey).toBe(`lists/incoming/team list+ü/${run.prepared.runId}/summary.json`);
  });

  it('writes a summary.json that accounts for every line of the file', async () => {
    // Prepare
    const summary = await readJson<ListSummary>(s3.client, RESULTS, run.summaryKey);

    // Assess
    expect(summary).toEqual(run.summary);
    expect(summary.counts).toEqual({
      lines: 19,
      succeeded: 11,
      failed: 1,
      timed_out: 0,
      rejected: 0,
      interrupted: 0,
      invalid: 3,
      duplicate: 2,
      ignored: 2,
    });
    const { lines, ...byFate } = summary.counts;
    expect(Object.values(byFate).reduce((sum, n) => sum + n, 0)).toBe(lines);
    const accounted = [...summary.domains.map((d) => d.line), ...summary.invalid.map((i) => i.line)];
    expect(accounted.sort((a, b) => a - b)).toEqual([
      2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
    ]);
  });

  it('names each invalid line by number with a reason', async () => {
    // Assess
    expect(run.summary.invalid.map(({ line, text }) => ({ line, text }))).toEqual([
      { line: 4, text: 'not a domain!' },
      { line: 10, text: 'a..b.example.com' },
      { line: 14, text: 'http://' },
    ]);
    for (const invalid of run.summary.invalid) expect(invalid.reason.length).toBeGreaterThan(5);
  });

  it('records the failing domain with its error and the duplicates with their lines', () => {
    // Assess
    const byLine = new Map(run.summary.domains.map((d) => [d.line, d]));
    expect(byLine.get(6)).toMatchObject({
      domain: 'broken.example.com',
      state: 'failed',
      error: { name: 'ScanFailed' },
    });
    expect(byLine.get(6)?.manifestKey).toBeUndefined();
    expect(byLine.get(5)).toMatchObject({ domain: 'alpha.example.com', state: 'duplicate' });
    expect(byLine.get(17)).toMatchObject({ domain: 'xn--bcher-kva.de', state: 'duplicate' });
  });

  it('gives every succeeded domain a manifest that exists in the results bucket', async () => {
    // Prepare
    const succeeded = run.summary.domains.filter((d) => d.state === 'succeeded');

    // Assess
    expect(succeeded.map((d) => d.domain)).toEqual([
      'alpha.example.com',
      'beta.example.com',
      'xn--bcher-kva.de',
      'gamma.example.com',
      'delta.example.com',
      'epsilon.example.com',
      'zeta.example.com',
      'eta.example.com',
      'theta.example.com',
      'iota.example.com',
      'kappa.example.com',
    ]);
    for (const entry of succeeded) {
      expect(entry.manifestKey).toBe(`${entry.outputPrefix}manifest.json`);
      expect(await objectExists(s3.client, RESULTS, entry.manifestKey ?? ''), entry.domain).toBe(true);
    }
  });

  it('never has more scans in flight than the configured concurrency', () => {
    // Assess
    expect(started).toHaveLength(12);
    expect(new Set(started).size).toBe(12);
    expect(maxInFlight).toBe(CONCURRENCY);
    expect(inFlight.size).toBe(0);
    expect(sim.requestCount('POST /scan')).toBe(12);
  });

  it('counts the history events of every domain', () => {
    // Assess
    expect([...run.historyEvents.keys()].sort()).toEqual([...new Set(started)].sort());
    for (const events of run.historyEvents.values()) expect(events).toBeGreaterThan(20);
  });
});

describe('list runs prepared from the same source identity', () => {
  it('get the same child execution names, so Step Functions would refuse a second scan', async () => {
    // Prepare
    const first = await readJson<DomainListItem[]>(s3.client, RESULTS, run.prepared.itemsKey);

    // Act: the same S3 event delivered again
    const again = await createPrepareDomainListHandler(listDeps())({ source: run.prepared.source });
    const second = await readJson<DomainListItem[]>(s3.client, RESULTS, again.itemsKey);

    // Assess
    expect(again.runId).toBe(run.prepared.runId);
    expect(again.itemsKey).toBe(run.prepared.itemsKey);
    expect(second).toEqual(first);
    expect(first).toHaveLength(12);
    const names = first.map((item) => item.executionName);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
  });

  it('differ from the names of a run of another version of the same file', async () => {
    // Prepare
    const first = await readJson<DomainListItem[]>(s3.client, RESULTS, run.prepared.itemsKey);
    const source = run.prepared.source;
    if (source.type !== 's3') throw new Error('expected an S3 source');

    // Act
    const other = await createPrepareDomainListHandler(listDeps())({
      source: { ...source, versionId: `${source.versionId ?? ''}-next` },
    });
    const items = await readJson<DomainListItem[]>(s3.client, RESULTS, other.itemsKey);

    // Assess
    expect(other.runId).not.toBe(run.prepared.runId);
    expect(items.map((item) => item.domain)).toEqual(first.map((item) => item.domain));
    const firstNames = new Set(first.map((item) => item.executionName));
    expect(items.filter((item) => firstNames.has(item.executionName))).toEqual([]);
  });
});

/** A list run against this file's S3 and simulator, with the given options changed. */
function listRun(
  request: Parameters<typeof runDomainList>[1],
  changed: Partial<Parameters<typeof runDomainList>[0]>,
): Promise<LocalRunResult> {
  return runDomainList(
    {
      s3: s3.client,
      inputBucket: INPUT,
      resultsBucket: RESULTS,
      scanDefinition: definition,
      scanClient: clients.scan,
      poll: { minWaitSeconds: 1, maxWaitSeconds: 2, growthFactor: 1.5, deadlineSeconds: 60 },
      concurrency: CONCURRENCY,
      intakePrefix: DEFAULT_PIPELINE_CONFIG.intake.prefix,
      intakeSuffixes: DEFAULT_PIPELINE_CONFIG.intake.suffixes,
      retryIntervalMs: 0,
      waitOverrideMs: 0,
      logger: createMemoryLogger(),
      ...changed,
    },
    request,
  );
}

describe('domains typed on the command line', () => {
  it('are scanned whatever intake.suffixes says: it is a rule for uploads', async () => {
    const typed = await listRun({ domains: ['lst-only.example.com'] }, { intakeSuffixes: ['.lst'] });

    expect(typed.summary.rejected).toBeUndefined();
    expect(typed.summary.domains.map((domain) => [domain.domain, domain.state])).toEqual([
      ['lst-only.example.com', 'succeeded'],
    ]);
    expect(typed.prepared.source).toMatchObject({
      key: expect.stringMatching(/^incoming\/command-line-.*\.lst$/),
    });
  });
});

describe('a list run asked to stop', () => {
  it('starts no scan, and the summary names every domain Interrupted', async () => {
    const stop = new AbortController();
    stop.abort({ cause: 'SIGINT', exitCode: 130 });
    const before = sim.requestCount('POST /scan');

    const stopped = await listRun({ domains: ['one.example.com', 'two.example.com'] }, { stop: stop.signal });

    expect(sim.requestCount('POST /scan')).toBe(before);
    expect(stopped.summary.domains.map((domain) => [domain.domain, domain.state, domain.error])).toEqual([
      [
        'one.example.com',
        'interrupted',
        { name: 'Interrupted', message: 'not started: the run was stopped by SIGINT' },
      ],
      [
        'two.example.com',
        'interrupted',
        { name: 'Interrupted', message: 'not started: the run was stopped by SIGINT' },
      ],
    ]);
    // Counted apart from the failures: nothing failed, the run was stopped.
    expect(stopped.summary.counts).toMatchObject({ interrupted: 2, failed: 0 });
  });
});
