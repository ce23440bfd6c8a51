/**
 * Issue 32: a vendor that echoes the key it is sent, through `npm start` with the `key-echo` faults
 * on. The key is a plain word (no `sk_`, no `Bearer`, no `key=`), so only a redaction that knows the
 * key in use can hide it; each run is then searched, as every CLI run of the suite is
 * (test/kit/leak-watch.ts), for that exact value in every stored object, S3 key, log line, state
 * payload and terminal line.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '#lambdas/platform/redaction/redact';
import { FAULTS_OF, faultRulesOf } from '../../local/cli/fault-flags.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import { takeLeaks } from '../kit/leak-watch.ts';
import { type CliRun, filesUnder, runCli } from './cli-run.ts';

/** A word no pattern would take for a key; only knowing it hides it. */
const WORD_KEY = 'ParsnipLighthouseHarmonica';
const QUICK_WAITS = ['--min-wait', '1', '--max-wait', '2', '--deadline', '120'];

let dir: string;
let vendor: VendorSimulator;
const runs: Record<string, { run: CliRun; out: string }> = {};

async function runInto(name: string, argv: readonly string[], external: boolean): Promise<void> {
  const out = join(dir, name);
  const env = external
    ? {
        SCAN_API_URL: vendor.url,
        BREACH_API_URL: vendor.url,
        // Its pre-signed downloads are on another loopback origin: allowed only when listed.
        VENDOR_ALLOWED_ORIGINS: vendor.storageUrl,
        VENDOR_API_KEY: WORD_KEY,
      }
    : {};
  runs[name] = { run: await runCli([...argv, '--out', out, '--log-level', 'debug'], env), out };
}

/** Every file a run left under its --out, as text (the ZIPs too: a key is ASCII either way). */
async function storedTexts(name: string): Promise<Map<string, string>> {
  const out = runs[name]?.out ?? '';
  const texts = new Map<string, string>();
  for (const file of await filesUnder(out)) texts.set(file, await readFile(join(out, file), 'latin1'));
  return texts;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'key-echo-cli-'));
  vendor = await startVendorSimulator({ apiKey: WORD_KEY, pollsToFinish: 2 });

  // The word key: the faults as `--fault` would add them, on a simulator given as the vendor.
  for (const rule of faultRulesOf('key-echo=status', FAULTS_OF.scan)) vendor.addFault(rule);
  await runInto('scan-status', ['scan', 'example.com', ...QUICK_WAITS], true);
  vendor.clearFaults();
  for (const rule of faultRulesOf('key-echo=recon', FAULTS_OF.breach)) vendor.addFault(rule);
  await runInto('breach-recon', ['breach', '--name', 'Jane Doe', '--email', 'jane@example.com'], true);
  vendor.clearFaults();
  for (const rule of faultRulesOf('key-echo=report-name', FAULTS_OF.breach)) vendor.addFault(rule);
  await runInto('breach-report-name', ['breach', '--name', 'Ann Other', '--email', 'ann@example.com'], true);
  const watchlist = join(dir, 'people.csv');
  await writeFile(watchlist, 'name,email\nCarol Jones,carol@example.com\nDan Brown,dan@example.net\n');
  await runInto('watchlist-report-name', ['breach', '--watchlist', watchlist], true);
  vendor.clearFaults();

  // The built-in simulator's own key, through the flag itself.
  await runInto('demo-flag', ['scan', 'example.org', ...QUICK_WAITS, '--fault', 'key-echo=status'], false);
  await runInto(
    'breach-flag',
    ['breach', '--name', 'Eve Adams', '--email', 'eve@example.com', '--fault', 'key-echo=report-name'],
    false,
  );
}, 600_000);

afterAll(async () => {
  await vendor.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the key-echo faults', () => {
  it('put the key into the vendor text: the status answer echoes Authorization and the bare key', async () => {
    const started = await fetch(new URL('/scan', vendor.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${WORD_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'domain=example.net',
    });
    const { uuid } = (await started.json()) as { uuid: string };
    vendor.addFault(faultRulesOf('key-echo=status', FAULTS_OF.scan)[0] ?? { fault: { type: 'refuse' } });
    const status = await fetch(new URL(`/status/${uuid}`, vendor.url), {
      headers: { authorization: `Bearer ${WORD_KEY}` },
    });
    vendor.clearFaults();
    expect(await status.json()).toMatchObject({
      authorization: `Bearer ${WORD_KEY}`,
      note: `served for ${WORD_KEY}`,
    });
  });

  it('were spent by every run, each as its case says', () => {
    for (const [name, { run }] of Object.entries(runs)) {
      const operation = name.startsWith('scan') || name.startsWith('demo') ? 'GET /status/' : 'POST /recon';
      expect(run.stdout, name).toMatch(
        new RegExp(`Simulator faults spent by this run: key-echo on ${operation}`),
      );
    }
  });
});

describe('what each run did with the echoed key', () => {
  it('scan: succeeded, and the manifest keeps the status body with the key redacted, still JSON', async () => {
    expect(runs['scan-status']?.run.code).toBe(0);
    const texts = await storedTexts('scan-status');
    const manifest = [...texts].find(([file]) => /\/scans\/example\.com\/.*\/manifest\.json$/.test(file));
    const raw =
      (JSON.parse(manifest?.[1] ?? '{}') as { finalStatus?: { raw?: string } }).finalStatus?.raw ?? '';
    expect(JSON.parse(raw)).toMatchObject({
      status: 'completed',
      authorization: `Bearer ${REDACTED}`,
      note: `served for ${REDACTED}`,
    });
  });

  it('recon: archived, and recon.json keeps the answer with x-api-key and the bare key redacted', async () => {
    expect(runs['breach-recon']?.run.code).toBe(0);
    const texts = await storedTexts('breach-recon');
    const recon = [...texts].find(([file]) => file.endsWith('/recon.json'));
    expect(JSON.parse(recon?.[1] ?? '{}')).toMatchObject({
      status: 'success',
      raw: { 'x-api-key': REDACTED, note: `served for ${REDACTED}` },
    });
  });

  it('report name holding the key: refused by its fingerprint, nothing archived, exit 1', async () => {
    const { run } = runs['breach-report-name'] ?? {};
    expect(run?.code).toBe(1);
    expect(run?.stdout).toMatch(
      /Failed: +ReconFailed: ReportNameRefusedError: .*the report name holds a key; the report is refused \(name sha256:[0-9a-f]{16}\)/,
    );
    // The failure record by its path on this machine, as every other line names a file.
    const recorded = /\(recorded in ([^)]+)\)/.exec(run?.stdout ?? '')?.[1] ?? '';
    expect(recorded).toMatch(/^\/.+\/pipeline-results\/breach\/.+\.json$/);
    expect(existsSync(recorded), recorded).toBe(true);
    const files = [...(await storedTexts('breach-report-name')).keys()];
    expect(files.filter((file) => file.includes('/breach/reports/'))).toEqual([]);
    expect(files.some((file) => file.endsWith('.report-name.json'))).toBe(false);
  });

  it('a watchlist whose report names hold the key: every row refused, the summary names them by fingerprint', async () => {
    const { run } = runs['watchlist-report-name'] ?? {};
    expect(run?.code).toBe(1);
    const summary = [...(await storedTexts('watchlist-report-name'))].find(([file]) =>
      file.endsWith('/summary.json'),
    );
    expect(summary?.[1]).toMatch(/ReportNameRefusedError/);
    expect(summary?.[1].match(/sha256:[0-9a-f]{16}/g)?.length).toBeGreaterThanOrEqual(2);
  });

  it('the built-in simulator through --fault: the same, with its own key', () => {
    expect(runs['demo-flag']?.run.code).toBe(0);
    expect(runs['breach-flag']?.run.code).toBe(1);
    expect(runs['breach-flag']?.run.stdout).toMatch(/ReportNameRefusedError/);
  });
});

describe('no key value anywhere', () => {
  it('in any object, S3 key, payload, log line or terminal line of these runs (nor lower-cased)', async () => {
    for (const name of Object.keys(runs)) {
      for (const [file, text] of await storedTexts(name)) {
        expect(file.toLowerCase(), file).not.toContain(WORD_KEY.toLowerCase());
        expect(text.toLowerCase(), file).not.toContain(WORD_KEY.toLowerCase());
      }
    }
    // What the watch searched for every run above, its own way: every key these simulators issued.
    const watched = takeLeaks();
    expect(watched.leaks).toEqual([]);
    expect(watched.keys).toBeGreaterThanOrEqual(3);
    expect(watched.checks).toBeGreaterThan(100);
  });
});
