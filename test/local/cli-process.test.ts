/**
 * `npm start` as the shell runs it: a child process (package.json's start script, `node --import tsx local/cli/main.ts`, test/local/cli-run.ts),
 * for what an in-process call cannot show: the exit code the shell sees and which stream gets
 * what. The demo (the README's `npm start`), an input error (exit 1) and a usage error (exit 2).
 * Signals and a closed pipe are in interrupt-cli.test.ts; everything else runs in-process.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { filesUnder, runCliProcess } from './cli-run.ts';

const DEMO_LIST = resolve(import.meta.dirname, '../../examples/domains.txt');
const QUICK_WAITS = ['--min-wait', '1', '--max-wait', '2', '--deadline', '120'];

let outDir: string;

beforeEach(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'cli-process-'));
});

afterEach(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe('npm start with no command', () => {
  it('runs the demo over examples/domains.txt against the simulator and exits 0', async () => {
    // Act
    const run = await runCliProcess(['--out', outDir]);

    // Assess
    expect(run).toExitWith(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`Demo: scanning ${DEMO_LIST}`);
    expect(run.stdout).toContain('Vendor: built-in simulator at http://127.0.0.1:');
    const results = await filesUnder(join(outDir, 'pipeline-results'));
    const summaryPath = results.find((path) =>
      /^lists\/incoming\/domains\/[0-9a-f]{20}\/summary\.json$/.test(path),
    );
    // The list as the run uploaded it, in the run's folder.
    expect(
      await readFile(
        join(outDir, 'pipeline-results', (summaryPath ?? '').replace(/summary\.json$/, 'input/domains.txt')),
      ),
    ).toEqual(await readFile(DEMO_LIST));
    const summary = JSON.parse(
      await readFile(join(outDir, 'pipeline-results', summaryPath ?? ''), 'utf8'),
    ) as ListSummary;
    expect(summary.counts).toMatchObject({ failed: 0, timed_out: 0, rejected: 0, invalid: 0 });
    expect(summary.counts.succeeded).toBeGreaterThan(0);
    // The demo loses its first start's answer after the scan was created: settled by adoption.
    expect(run.stdout).toContain('StartScan (start answer lost: adopted the scan it created');
    expect(summary.settledStarts).toEqual({ adopted: 1, retried: 0, unresolved: 0 });
    expect(run.stdout).toContain(
      "Starts whose answer was lost, settled from the vendor's listing: 1 adopted",
    );
    for (const entry of summary.domains.filter((d) => d.state === 'succeeded')) {
      expect(results, entry.domain).toContain(entry.manifestKey);
    }
  });
});

describe('npm start exit codes and streams, as the shell sees them', () => {
  it('exits 1 when the domains file has an invalid line, and the summary names the line', async () => {
    // Prepare
    const list = join(outDir, 'team list+ü.txt');
    await writeFile(list, '# the team list\nnot a domain!\n', 'utf8');

    // Act
    const run = await runCliProcess([
      'scan',
      '--domains-file',
      list,
      '--out',
      join(outDir, 'out'),
      ...QUICK_WAITS,
    ]);

    // Assess: the exit code the shell sees; the table on stdout, nothing on stderr
    expect(run).toExitWith(1);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^2\s+not a domain!\s+invalid\s+contains a space$/m);
    expect(run.stdout).toContain('2 line(s): 0 succeeded, 0 failed, 0 timed out, 0 rejected, 1 invalid');
    const results = await filesUnder(join(outDir, 'out', 'pipeline-results'));
    const summaryPath = results.find((path) => path.endsWith('/summary.json')) ?? '';
    expect(summaryPath).toMatch(/^lists\/incoming\/team list\+ü\/[0-9a-f]{20}\/summary\.json$/);
    expect(results).toContain(summaryPath.replace(/summary\.json$/, 'input/team list+ü.txt'));
    const summary = JSON.parse(
      await readFile(join(outDir, 'out', 'pipeline-results', summaryPath), 'utf8'),
    ) as ListSummary;
    expect(summary.invalid).toEqual([{ line: 2, reason: 'contains a space', text: 'not a domain!' }]);
  });

  it('suggests the command that was meant for a typo', async () => {
    const run = await runCliProcess(['scna', 'example.com', '--out', outDir]);
    expect(run).toExitWith(2);
    expect(run.stderr).toContain("unknown command 'scna'. Did you mean 'scan'?");
    // Nothing on stdout: a script reading it sees no output, only the exit code.
    expect(run.stdout).toBe('');
  });
});

describe('npm start -- scan --domains-file -', () => {
  it('reads the list from standard input, as --emails-file - does', async () => {
    const run = await runCliProcess(
      ['scan', '--domains-file', '-', '--out', outDir, ...QUICK_WAITS],
      {},
      'one.example.com\n# a comment\ntwo.example.com\n',
    );

    expect(run).toExitWith(0);
    expect(run.stdout).toMatch(/^1\s+one\.example\.com\s+succeeded\b/m);
    expect(run.stdout).toMatch(/^3\s+two\.example\.com\s+succeeded\b/m);
    const summary = JSON.parse(await readFile(join(outDir, 'latest', 'summary.json'), 'utf8')) as ListSummary;
    expect(summary.source).toMatchObject({ key: 'incoming/standard-input.txt' });
    expect(await readFile(join(outDir, 'latest', 'input', 'standard-input.txt'), 'utf8')).toBe(
      'one.example.com\n# a comment\ntwo.example.com\n',
    );
  });
});
