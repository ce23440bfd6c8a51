/**
 * Every command the README and docs/ show: the lines of their ```sh blocks (a `\` continues a line),
 * and the code spans of their prose that start like a command (`npm …`, `npx …`, `VAR=… npm …`).
 * Read by test/docs/documented-commands.test.ts (every command is run by a test, checked, or listed
 * with the reason it is not) and test/local/readme-examples.test.ts (every `npm start` line runs).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

export const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

export interface DocumentedCommand {
  /** The page, relative to the project root (`docs/local-runs.md`). */
  readonly page: string;
  /** The command as the page has it, a continued line joined. */
  readonly line: string;
  /** Shell words with quotes removed, up to an unquoted `#`. */
  readonly words: readonly string[];
  /** The comment after `#`, if any. */
  readonly comment: string;
  /** In a ```sh block, or a code span of the prose. */
  readonly where: 'block' | 'prose';
}

/** Shell words of one line, with quotes removed, up to an unquoted `#` (returned as the comment). */
export function shellWords(line: string): { words: string[]; comment: string } {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let index = 0; index < line.length; index++) {
    const char = line[index] as string;
    if (quote) {
      if (char === quote) quote = undefined;
      else word = (word ?? '') + char;
    } else if (char === '"' || char === "'") {
      quote = char;
      word ??= '';
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === '#' && word === undefined) {
      return { words, comment: line.slice(index + 1).trim() };
    } else word = (word ?? '') + char;
  }
  if (word !== undefined) words.push(word);
  return { words, comment: '' };
}

/** README.md and every page under docs/, as paths relative to the project root. */
export function documentationPages(): string[] {
  const docs = readdirSync(join(PROJECT_ROOT, 'docs'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => relative(PROJECT_ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'));
  return ['README.md', ...docs.sort()];
}

/** A code span of prose that is a command: `npm …`, `npx …`, or `VAR=value … npm …`. */
const PROSE_COMMAND = /`((?:[A-Z_]+=\S+ )*(?:npm|npx) [^`]+|npm start)`/g;

export function documentedCommands(page: string): DocumentedCommand[] {
  const markdown = readFileSync(join(PROJECT_ROOT, page), 'utf8');
  const commands: DocumentedCommand[] = [];
  const add = (line: string, where: DocumentedCommand['where']) => {
    const { words, comment } = shellWords(line);
    if (words.length > 0) commands.push({ page, line: line.trim(), words, comment, where });
  };
  for (const block of markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)) {
    for (const line of (block[1] ?? '').replace(/\\\n\s*/g, ' ').split('\n')) add(line, 'block');
  }
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const span of prose.matchAll(PROSE_COMMAND)) add(span[1] ?? '', 'prose');
  return commands;
}

/** Every documented command of every page. */
export function allDocumentedCommands(): DocumentedCommand[] {
  return documentationPages().flatMap(documentedCommands);
}

/** The words of the command after its `VAR=value` assignments and any `… &&`. */
export function commandWords(command: Pick<DocumentedCommand, 'words'>): {
  env: Record<string, string>;
  words: string[];
} {
  const words = command.words.slice(command.words.lastIndexOf('&&') + 1);
  const first = words.findIndex((word) => !/^[A-Z_]+=/.test(word));
  const assignments = first < 0 ? words : words.slice(0, first);
  return {
    env: Object.fromEntries(
      assignments.map((assignment) => assignment.split(/=(.*)/s).slice(0, 2) as [string, string]),
    ),
    words: first < 0 ? [] : words.slice(first),
  };
}

/**
 * `npm start` lines without a placeholder that still cannot run as written, and why
 * (test/local/readme-examples.test.ts runs every other one).
 */
export const NPM_START_NOT_RUN: Readonly<Record<string, string>> = {
  'npm start -- breach --watchlist vips.csv --out /tmp/out':
    "the reader's own watchlist: vips.csv names theirs (examples/watchlist.csv runs from docs/breach-reports.md)",
};

/**
 * `npm start` lines of the pages that a test other than readme-examples runs as written, checking
 * more than that they exit 0, and that test (the line is its command after any `VAR=` and `&&`).
 */
export const NPM_START_RUN_BY: Readonly<Record<string, string>> = {
  'npm start': 'test/local/cli-process.test.ts',
  'npm start -- scan --domains-file examples/domains.txt --out ./my-results --min-wait 1 --max-wait 2':
    'test/local/output-folder.test.ts',
};

/** Words a reader replaces with their own: `<uuid>`, `…`, `[--out DIR]`. */
export function hasPlaceholder(line: string): boolean {
  return /<[^>]*>|…|\[--|sk_sim_\.\.\./.test(line);
}
