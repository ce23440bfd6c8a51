/**
 * Every `npm start` line in the ```sh blocks of the README and of every page under docs/ runs as
 * written, in-process (`main(argv)`), but those with a placeholder the reader fills in (`<vendor>`)
 * and the ones NPM_START_NOT_RUN lists with their reason,
 * from a directory laid out like a fresh clone (INIT_CWD, so `./results` and `examples/...` mean
 * what they mean there), against the built-in simulator, or against one started here where the
 * README points at a vendor URL (`$URL`, `$KEY`: the simulator's banner values). The flags are the
 * README's, plus those its own comment adds for a quick run ("add --min-wait 1 --max-wait 2 for a
 * quick run"); the engine's Wait and Retry durations are 0 ms (cli-run.ts), since what is checked
 * is that each line runs and exits 0. The lines NPM_START_RUN_BY names run in the test it names
 * (the demo as a real process in cli-process.test.ts); a command shown on several pages runs once.
 */

import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVendorSimulator, type VendorSimulator } from '../../local/simulator/index.ts';
import {
  documentationPages,
  hasPlaceholder,
  NPM_START_NOT_RUN,
  NPM_START_RUN_BY,
  PROJECT_ROOT,
  shellWords,
} from '../docs/documented-commands.ts';
import { runCli, VENDOR_ENV } from './cli-run.ts';

/** A line with a placeholder (`<vendor>`, `…`) or listed in NPM_START_NOT_RUN. */
function notRunHere(line: string): boolean {
  const command = shellWords(line).words.join(' ');
  return hasPlaceholder(line) || Object.keys(NPM_START_NOT_RUN).some((listed) => command.endsWith(listed));
}

interface ReadmeExample {
  /** The line as the README has it. */
  readonly line: string;
  /** `VAR=value` words before `npm start`. */
  readonly env: Record<string, string>;
  /** What follows `npm start --` (or nothing, for the demo). */
  readonly argv: string[];
  /** The comment after `#`, if any. */
  readonly comment: string;
  /** Simulator fault rules the same block posts before it (`curl … -d '{…}' $URL/__simulator/faults`). */
  readonly faults: { readonly rule: unknown; readonly comment: string }[];
}

/** Every `npm start` command of the README's ```sh blocks. */
function readmeExamples(readme: string): ReadmeExample[] {
  const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => match[1] ?? '');
  const examples: ReadmeExample[] = [];
  for (const block of blocks) {
    const faults: ReadmeExample['faults'][number][] = [];
    // A curl continued with `\` onto the next line is one command.
    for (const line of block.replace(/\\\n\s*/g, ' ').split('\n')) {
      const { words, comment } = shellWords(line);
      if (words[0] === 'curl' && words.some((word) => word.endsWith('/__simulator/faults'))) {
        faults.push({ rule: JSON.parse(words[words.indexOf('-d') + 1] ?? 'null'), comment });
        continue;
      }
      // `npm ci && npm start`: the command after the last `&&`.
      const command = words.slice(words.lastIndexOf('&&') + 1);
      const npm = command.findIndex((word, index) => word === 'npm' && command[index + 1] === 'start');
      if (npm < 0 || notRunHere(line)) continue;
      const env = Object.fromEntries(
        command.slice(0, npm).map((assignment) => assignment.split(/=(.*)/s).slice(0, 2) as [string, string]),
      );
      const rest = command.slice(npm + 2);
      examples.push({
        line,
        env,
        argv: rest[0] === '--' ? rest.slice(1) : rest,
        comment,
        faults: [...faults],
      });
    }
  }
  return examples;
}

/** Time for an example whose --config is synthesized cold; the default timeout for the rest. */
const timeoutFor = (example: ReadmeExample): number | undefined =>
  example.argv.includes('--config') ? 180_000 : undefined;

const readme = documentationPages()
  .map((page) => readFileSync(join(PROJECT_ROOT, page), 'utf8'))
  .join('\n');
const examples = readmeExamples(readme);

let clone: string;
let vendor: VendorSimulator;
const savedInitCwd = process.env.INIT_CWD;

beforeAll(async () => {
  // A fresh clone as far as the examples can tell: the shipped examples and configuration, no results.
  clone = await mkdtemp(join(tmpdir(), 'readme-examples-'));
  for (const shipped of ['examples', 'config'])
    await symlink(join(PROJECT_ROOT, shipped), join(clone, shipped));
  process.env.INIT_CWD = clone;
  vendor = await startVendorSimulator({ pollsToFinish: 2 });
});
afterAll(async () => {
  if (savedInitCwd === undefined) delete process.env.INIT_CWD;
  else process.env.INIT_CWD = savedInitCwd;
  await vendor?.close();
  await rm(clone, { recursive: true, force: true });
});

describe('the README', () => {
  it('has npm start examples for every command', () => {
    const commands = new Set(examples.map((example) => example.argv[0] ?? 'demo'));
    expect([...commands].sort()).toEqual(['--help', 'breach', 'demo', 'reconcile', 'rotate', 'scan']);
  });
});

/**
 * The examples to run: one per distinct command (the same line on two pages, or with another
 * comment, runs once), except those NPM_START_RUN_BY gives to a test that checks more of them (the
 * demo runs as the shell runs it in cli-process.test.ts).
 */
function distinctExamples(all: readonly ReadmeExample[]): ReadmeExample[] {
  const byCommand = new Map<string, ReadmeExample>();
  for (const example of all) {
    if (
      NPM_START_RUN_BY[
        ['npm', 'start', ...(example.argv.length > 0 ? ['--', ...example.argv] : [])].join(' ')
      ]
    )
      continue;
    const quick = /add ((?:--[\w-]+ \S+ ?)+) for a quick run/.exec(example.comment)?.[1] ?? '';
    const key = JSON.stringify([example.env, example.argv, quick, example.faults.map((fault) => fault.rule)]);
    if (!byCommand.has(key)) byCommand.set(key, example);
  }
  return [...byCommand.values()];
}

describe.each(distinctExamples(examples).map((example) => [example.line.trim(), example] as const))(
  'README: %s',
  (_, example) => {
    it(
      'runs as written and exits 0',
      async () => {
        // Only where the README says how to make the example quick.
        const quick =
          /add ((?:--[\w-]+ \S+ ?)+) for a quick run/.exec(example.comment)?.[1]?.trim().split(' ') ?? [];
        const env: Partial<Record<(typeof VENDOR_ENV)[number], string>> = {};
        const banner: Record<string, string> = { $URL: vendor.url, $KEY: vendor.apiKey };
        for (const [name, value] of Object.entries(example.env)) {
          expect(VENDOR_ENV, `${name} is a variable the CLI reads`).toContain(name);
          env[name as (typeof VENDOR_ENV)[number]] = banner[value] ?? value;
        }

        for (const { rule } of example.faults) {
          const added = await fetch(`${vendor.url}/__simulator/faults`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(rule),
          });
          expect(added.status).toBe(201);
        }

        const run = await runCli([...example.argv, ...quick], env);

        expect(run.stderr).toBe('');
        expect(run).toExitWith(0);
        // A fault fires on the operation the README's comment says, and the run says it spent it there.
        for (const { comment } of example.faults) {
          const operation = /the next (\w+ \S+?)…? gets/.exec(comment)?.[1] ?? '(no operation named)';
          expect(run.stdout).toMatch(
            new RegExp(`^Simulator faults spent by this run: .* on ${operation}`, 'm'),
          );
          expect(run.stdout).not.toMatch(/on GET \/stats \(the up-front check\)/);
        }
        // An example that waits as deployed says so beside it.
        if (/^Poll waits: 15s/m.test(run.stdout)) expect(example.comment).toMatch(/deployed poll waits/);
        if (example.env.SCAN_API_URL) expect(run.stdout).toContain(`Vendor: ${vendor.url}`);
        // A --config of its own is synthesized once, in this process, the first time it runs.
      },
      timeoutFor(example),
    );
  },
);
