/**
 * Definitions the ASL validator passed, remembered on disk beside the synthesis cache, so a process
 * that runs a definition an earlier process validated does not validate it again. asl-validator
 * compiles its JSON schema anew on every call: 240-400 ms of CPU, which every `npm start` paid
 * before its first execution, for a definition that changes only when the sources do.
 *
 * A verdict depends only on the definition's text, the validation options and the installed
 * validator, which package-lock.json pins: all three name the verdict's file, so a changed
 * definition or an upgraded validator is validated afresh. Only passes are kept: an invalid
 * definition is validated, and refused, every time. Without a readable lockfile nothing is
 * remembered.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SYNTH_CACHE_DIR } from '../synth/synth-cache.ts';

export const DEFAULT_VERDICTS_DIR = join(DEFAULT_SYNTH_CACHE_DIR, 'valid-definitions');

const LOCKFILE = fileURLToPath(new URL('../../package-lock.json', import.meta.url));

let installed: string | null | undefined;

/** The digest of package-lock.json (which pins the validator), or null when it cannot be read. */
function installedValidator(): string | null {
  if (installed === undefined) {
    try {
      installed = createHash('sha256').update(readFileSync(LOCKFILE)).digest('hex');
    } catch {
      installed = null;
    }
  }
  return installed;
}

function verdictFile(definitionText: string, options: string, dir: string): string | undefined {
  const validator = installedValidator();
  if (validator === null) return undefined;
  const name = createHash('sha256')
    .update(validator)
    .update('\0')
    .update(options)
    .update('\0')
    .update(definitionText)
    .digest('hex');
  return join(dir, name);
}

/** Whether an earlier validation with `options` passed `definitionText`. */
export function knownValid(definitionText: string, options: string, dir = DEFAULT_VERDICTS_DIR): boolean {
  const file = verdictFile(definitionText, options, dir);
  return file !== undefined && existsSync(file);
}

/** Remembers that `definitionText` passed validation with `options`. */
export function rememberValid(definitionText: string, options: string, dir = DEFAULT_VERDICTS_DIR): void {
  const file = verdictFile(definitionText, options, dir);
  if (file === undefined) return;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, '');
  } catch {
    // A verdict that cannot be kept only costs the next process a validation.
  }
}
