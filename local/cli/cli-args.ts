/**
 * How `npm start` reads what the user typed, where npm itself gets in the way: npm runs the script
 * from the project root (so relative paths must resolve from where the user was), keeps every flag
 * before its own `--` (so the CLI never sees it), and the default command takes only its own flags.
 */
import { isAbsolute, resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { SCAN_CONCURRENCY_BOUNDS } from '../../lib/config/scan-concurrency.ts';

/** The directory the user ran `npm start` from: npm's INIT_CWD, else this process's own. */
export function userDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const initial = env.INIT_CWD?.trim();
  return initial && isAbsolute(initial) ? initial : process.cwd();
}

/** A path the user typed, made absolute against the directory they typed it in. */
export function userPath(path: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(userDirectory(env), path);
}

/** An argument as a shell would need it quoted to mean the same word. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/u.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function longFlags(command: Command): string[] {
  return command.options.flatMap((option) => (option.long ? [option.long] : []));
}

/**
 * `npm start -- --domains-file x`: a flag before any command goes to the default command (the
 * demo), which does not take it, and commander would only say "unknown option". Say which command
 * takes it and what to type instead.
 */
export function flagBeforeCommandProblem(argv: readonly string[], program: Command): string | undefined {
  const first = argv[0];
  if (first === undefined || !first.startsWith('--')) return undefined;
  const flag = first.split('=')[0] ?? first;
  const fallback = program.commands.find((command) => command.name() === 'demo');
  if (flag === '--help' || flag === '--version' || (fallback && longFlags(fallback).includes(flag)))
    return undefined;
  const owners = program.commands.filter(
    (command) => command !== fallback && longFlags(command).includes(flag),
  );
  if (owners.length === 0) return undefined;
  const typed = argv.map(shellWord).join(' ');
  return (
    `${flag} belongs to a command, and the command comes first: ` +
    owners.map((command) => `npm start -- ${command.name()} ${typed}`).join(', or ')
  );
}

/** npm's environment variable for a flag it kept for itself: `--min-wait` → `npm_config_min_wait`. */
function npmVariable(flag: string): string {
  return `npm_config_${flag.slice(2).replaceAll('-', '_')}`;
}

/**
 * `npm start scan example.com --min-wait 1` without `--`: npm keeps `--min-wait` as its own
 * setting (`npm_config_min_wait=true`) and passes only the `1`, which would become a domain, and
 * the run would use the deployed waits. The tell-tale: npm ran this script and holds one of the
 * command's flags, which the command itself never received.
 */
export function swallowedFlagsProblem(
  argv: readonly string[],
  program: Command,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (env.npm_lifecycle_event === undefined) return undefined;
  const named = program.commands.find((command) => command.name() === argv[0]);
  const command = named ?? program.commands.find((candidate) => candidate.name() === 'demo');
  if (command === undefined) return undefined;
  // The program's own flags (--s3-latency) are swallowed alike: `npm start --s3-latency 25ms`.
  const flags = [...longFlags(command), ...longFlags(program)];
  const swallowed = flags.filter(
    (flag) => env[npmVariable(flag)] !== undefined && !argv.some((arg) => arg.split('=')[0] === flag),
  );
  if (swallowed.length === 0) return undefined;
  // Values that cannot be domains: numbers, durations (25ms) and paths, which is what the flags' values look like.
  const takesValue = new Set(
    [...command.options, ...program.options].flatMap((option) =>
      option.long && (option.required || option.optional) ? [option.long] : [],
    ),
  );
  const words: string[] = [];
  const strays: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    if (takesValue.has(arg)) {
      words.push(arg, argv[index + 1] ?? '');
      index++;
    } else if (
      (index > 0 || !named) &&
      /^\d+$|^\d+(\.\d+)?m?s(,\d+(\.\d+)?m?s)?$|[/\\]|^\.{1,2}$|\.(txt|csv|json)$/i.test(arg)
    )
      strays.push(arg);
    else words.push(arg);
  }
  return (
    `npm kept ${swallowed.join(', ')} for itself: flags for npm start must come after "--"` +
    (strays.length > 0 ? `, and their values (${strays.join(', ')}) arrived as arguments` : '') +
    `. Type: npm start -- ${[...words.map(shellWord), ...swallowed.map((flag) => `${flag} …`)].join(' ')}`
  );
}

/** Commander's way to take a flag more than once. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `--concurrency`: a whole number of domains at once, as scan.maxConcurrency allows. */
export function concurrencyFlag(value: string): number {
  const parsed = Number(value);
  const { min, max } = SCAN_CONCURRENCY_BOUNDS;
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new InvalidArgumentError(
      `--concurrency must be a whole number between ${min} and ${max} (got ${JSON.stringify(value)})`,
    );
  }
  return parsed;
}

/**
 * `--out DIR`, as every command takes it. An empty value would put the buckets' folders into the
 * directory npm start ran in (the repository's root): refused, as a usage error naming the flag.
 */
export function outOption(description: string): Option {
  return new Option('--out <dir>', description).default('./results').argParser((value: string) => {
    if (value.trim() === '') {
      throw new InvalidArgumentError('--out must name a folder (it is empty); the default is ./results');
    }
    return value;
  });
}
