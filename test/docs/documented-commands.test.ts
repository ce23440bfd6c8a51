/**
 * Every command the README and docs/ show is run by a test, checked here, or listed with the reason
 * it is not run (most: a deployed stack and AWS credentials). A command of a new kind fails this
 * test until it is one of these, so a doc edit cannot drift from what the project runs.
 *
 * - `npm start` lines of ```sh blocks run as written in test/local/readme-examples.test.ts, or in
 *   the test NPM_START_RUN_BY names (the demo as a real process in cli-process.test.ts).
 * - Every `npm start` (blocks and prose) is a valid invocation: `--` before its words (npm keeps
 *   the flags before it), a command the CLI has, flags that command or the program takes.
 * - `npm run <script>` names a script of package.json; `npm run bench -- <name>` a benchmark the
 *   bench knows (which refuses any other name with the list).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import { buildProgram } from '../../local/cli/main.ts';
import {
  allDocumentedCommands,
  commandWords,
  type DocumentedCommand,
  hasPlaceholder,
  NPM_START_NOT_RUN,
  NPM_START_RUN_BY,
  PROJECT_ROOT,
} from './documented-commands.ts';

const run = promisify(execFile);

type Verdict =
  | { readonly kind: 'runs'; readonly by: string }
  | { readonly kind: 'checked'; readonly check: (words: string[]) => void | Promise<void> }
  | { readonly kind: 'not run'; readonly reason: string };

const AWS = 'needs AWS credentials and a deployed stack (the runbooks run against the real account)';

const scripts = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/** The names `npm run bench` knows, as it lists them when given one it does not. */
let benchNames: string[] = [];

/** `npm start …`: `--` first, a command the CLI has, flags it takes. */
function checkNpmStart(words: string[]): void {
  const rest = words.slice(2).filter((word) => !hasPlaceholder(word));
  if (rest.length === 0 || rest[0] === '|') return;
  expect(rest[0], 'flags for npm start come after "--" (npm keeps the ones before it)').toBe('--');
  const program = buildProgram(
    async () => DEFAULT_PIPELINE_CONFIG,
    () => {},
  );
  const argv = rest.slice(1).map((word) => word.replace(/^\[|\]$/g, ''));
  const named = program.commands.find((command) => command.name() === argv[0]);
  if (argv[0] !== undefined && !argv[0].startsWith('-')) expect(named, `a command: ${argv[0]}`).toBeDefined();
  const command = named ?? program.commands.find((candidate) => candidate.name() === 'demo');
  const known = new Set(
    [...(command?.options ?? []), ...program.options, { long: '--help' }].map((option) => option.long),
  );
  for (const flag of argv.filter((word) => word.startsWith('--'))) {
    expect(known, `${command?.name()} takes ${flag}`).toContain(flag.split('=')[0]);
  }
}

function checkNpmRun(words: string[]): void {
  const script = words[2] ?? '';
  expect(Object.keys(scripts), `package.json has the script ${script}`).toContain(script);
  if (script === 'bench' && words[3] === '--' && words[4] !== undefined) {
    expect(benchNames, `npm run bench knows ${words[4]}`).toContain(words[4]);
  }
}

/** The first rule that takes a command decides what happens to it. */
function verdictFor(command: DocumentedCommand): Verdict | undefined {
  const { words } = commandWords(command);
  const [first = '', second = ''] = words;
  const text = words.join(' ');
  if (first === 'npm' && second === 'start') {
    if (command.where === 'block' && !hasPlaceholder(command.line)) {
      const listed = Object.entries(NPM_START_NOT_RUN).find(([line]) => text.endsWith(line));
      if (listed) return { kind: 'not run', reason: listed[1] };
      return { kind: 'runs', by: NPM_START_RUN_BY[text] ?? 'test/local/readme-examples.test.ts' };
    }
    return { kind: 'checked', check: checkNpmStart };
  }
  if (['npx …', 'npm run …', 'npx', 'npm run'].includes(text))
    return { kind: 'not run', reason: 'a pattern or a mention, not a command' };
  if (first === 'npm' && (second === 'test' || second === 'ci'))
    return { kind: 'not run', reason: 'the suite itself: .ci/run and every npm test run it' };
  if (
    first === 'npm' &&
    (second === 'pack' ||
      (second === 'run' && words[2] === 'package') ||
      (second === 'install' && /\.tgz$/.test(words[2] ?? '')))
  )
    return {
      kind: 'runs',
      by: 'test/package/installable.test.ts (packs, installs the tarball in a fresh app)',
    };
  if (first === 'npm' && second === 'run') {
    if (['typecheck', 'lint'].includes(words[2] ?? ''))
      return { kind: 'not run', reason: 'the first steps of npm test' };
    return { kind: 'checked', check: checkNpmRun };
  }
  if (first === 'npx' && second === 'cdk') {
    if (words[2] === 'synth')
      return {
        kind: 'not run',
        reason:
          'a cdk synth process takes minutes; the same app is synthesized by the stack tests (test/stack) and test/local/local-synthesis.cdk.test.ts',
      };
    return { kind: 'not run', reason: AWS };
  }
  if (first === 'npx' && second === 'vitest')
    return {
      kind: 'checked',
      check: (all) => {
        const project = all[all.indexOf('--project') + 1] ?? '';
        expect(readFileSync(join(PROJECT_ROOT, 'vitest.config.ts'), 'utf8')).toContain(`name: '${project}'`);
      },
    };
  if (command.page.startsWith('docs/runbooks/')) return { kind: 'not run', reason: AWS };
  if (command.page === 'docs/local-runs.md' && /\$URL|sk_sim_/.test(command.line)) {
    return command.line.includes('/__simulator/faults')
      ? {
          kind: 'runs',
          by: 'test/local/readme-examples.test.ts (posted before the npm start line of its block)',
        }
      : {
          kind: 'not run',
          reason:
            'against a simulator the reader started, with ids it answers; the same requests are the simulator tests (test/simulator)',
        };
  }
  return undefined;
}

const commands = allDocumentedCommands();

beforeAll(async () => {
  // An unknown name: the bench exits 2 listing the ones it knows.
  const bench = await run(
    process.execPath,
    ['--import', 'tsx', join(PROJECT_ROOT, 'bench/run.ts'), 'no-such-bench'],
    {
      cwd: PROJECT_ROOT,
    },
  ).catch((error: { code: number; stdout: string; stderr: string }) => error);
  expect(bench).toMatchObject({ code: 2, stdout: '' });
  const names = /unknown benchmark 'no-such-bench'\. The names: (.+)$/m.exec(bench.stderr)?.[1] ?? '';
  benchNames = names.split(', ').map((name) => name.replace(/ \(by name only\)$/, ''));
}, 120_000);

describe('the documented commands', () => {
  it('are found on the pages (or this test checks nothing)', () => {
    expect(commands.length).toBeGreaterThan(100);
    expect(benchNames).toEqual(expect.arrayContaining(['poll', 'soak', 'scale', 'big-output', 'cli']));
  });

  it.each(commands.map((command) => [`${command.page}: ${command.line}`, command] as const))(
    '%s',
    async (_, command) => {
      const verdict = verdictFor(command);
      expect(
        verdict,
        'run it in a test, check it here, or list it with the reason it is not run',
      ).toBeDefined();
      if (verdict?.kind === 'checked') await verdict.check(commandWords(command).words);
    },
  );
});
