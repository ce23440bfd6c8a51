/**
 * `npm start` as the shell runs it: a child process (package.json's start script, `node --import tsx local/cli/main.ts`, test/local/cli-run.ts),
 * for what an in-process call cannot show: the exit code the shell sees and which stream gets
 * what. The demo (the README's `npm start`), a list from standard input with an invalid line (exit 1)
 * and a usage error (exit 2).
 * Signals and a closed pipe are in interrupt-cli.test.ts; everything else runs in-process. The
 * runs are side by side, each in a folder of its own: they mostly wait on the scans' polls.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it, type OnTestFinishedHandler } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { filesUnder, runCliProcess } from './cli-run.ts';

const DEMO_LIST = resolve(import.meta.dirname, '../../examples/domains.txt');
const QUICK_WAITS = ['--min-wait', '1', '--max-wait', '2', '--deadline', '120'];

/** Time for a child run on a loaded machine, beside the others. */
const CHILD_RUN_MS = 180_000;

/** A folder of the test's own, removed after it (the context's hook: the tests run side by side). */
async function outFolder(afterTest: (handler: OnTestFinishedHandler) => void): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-process-'));
  afterTest(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe.concurrent('npm start as the shell runs it', () => {
  it(
    'with no command, runs the demo over examples/domains.txt against the simulator and exits 0',
    async ({ onTestFinished }) => {
      const outDir = await outFolder(onTestFinished);
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
          join(
            outDir,
            'pipeline-results',
            (summaryPath ?? '').replace(/summary\.json$/, 'input/domains.txt'),
          ),
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
    },
    CHILD_RUN_MS,
  );

  it(
    'suggests the command that was meant for a typo',
    async ({ onTestFinished }) => {
      const outDir = await outFolder(onTestFinished);
      const run = await runCliProcess(['scna', 'example.com', '--out', outDir]);
      expect(run).toExitWith(2);
      expect(run.stderr).toContain("unknown command 'scna'. Did you mean 'scan'?");
      // Nothing on stdout: a script reading it sees no output, only the exit code.
      expect(run.stdout).toBe('');
    },
    CHILD_RUN_MS,
  );

  it(
    'scan --domains-file - reads the list from standard input, as --emails-file - does; exits 1 for its invalid line, the table on stdout and nothing on stderr',
    async ({ onTestFinished }) => {
      const outDir = await outFolder(onTestFinished);
      const list = 'one.example.com\n# a comment\nnot a domain!\ntwo.example.com\n';
      // Act
      const run = await runCliProcess(
        ['scan', '--domains-file', '-', '--out', outDir, ...QUICK_WAITS],
        {},
        list,
      );

      // Assess: the exit code the shell sees; the table on stdout, nothing on stderr
      expect(run).toExitWith(1);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(/^1\s+one\.example\.com\s+succeeded\b/m);
      expect(run.stdout).toMatch(/^3\s+not a domain!\s+invalid\s+contains a space$/m);
      expect(run.stdout).toMatch(/^4\s+two\.example\.com\s+succeeded\b/m);
      expect(run.stdout).toContain('4 line(s): 2 succeeded, 0 failed, 0 timed out, 0 rejected, 1 invalid');
      // The list as the run uploaded it, in the run's folder, under the name standard input gets.
      const summary = JSON.parse(
        await readFile(join(outDir, 'latest', 'summary.json'), 'utf8'),
      ) as ListSummary;
      expect(summary.source).toMatchObject({ key: 'incoming/standard-input.txt' });
      expect(summary.invalid).toEqual([{ line: 3, reason: 'contains a space', text: 'not a domain!' }]);
      expect(await readFile(join(outDir, 'latest', 'input', 'standard-input.txt'), 'utf8')).toBe(list);
    },
    CHILD_RUN_MS,
  );
});
