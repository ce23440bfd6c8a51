/**
 * One build of the package per test run, shared by the files that need it (the installed tarball
 * and the jsii facade's bundled implementation). The build (scripts/build-package.ts: 21 handler
 * bundles, the library, the declarations) costs about 20 s of CPU, and those files run in two
 * workers at once, so the first to ask builds into the run's folder (test/global-setup.ts) while
 * the other waits for it; a build that fails or whose process dies is taken over by the next asker.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { SYNTH_ROOT_VARIABLE } from '../kit/synth-outdir.ts';

const run = promisify(execFile);
/** How often a waiting file looks again whether the build is done. */
const POLL_MS = 250;
/** A lock folder still without its holder's pid after this long was left by a holder that died. */
const PIDLESS_LOCK_MS = 10_000;

/** `scripts/build-package.ts --stage DIR` once per run; resolves to the stage (`DIR/dist`, …). */
export async function packageStageOnce(repoRoot: string): Promise<string> {
  const root = process.env[SYNTH_ROOT_VARIABLE];
  if (root === undefined || root === '') {
    throw new Error(`${SYNTH_ROOT_VARIABLE} is not set: run the tests through vitest (test/global-setup.ts)`);
  }
  const stage = join(root, 'package-stage');
  const built = join(root, 'package-stage.built');
  const lock = join(root, 'package-stage.lock');
  for (;;) {
    if (existsSync(built)) return stage;
    if (takeLock(lock)) {
      try {
        if (existsSync(built)) return stage;
        // A stage a dead builder left part-way is not a build: start again from nothing.
        rmSync(stage, { recursive: true, force: true });
        await run(process.execPath, ['--import', 'tsx', 'scripts/build-package.ts', '--stage', stage], {
          cwd: repoRoot,
          maxBuffer: 64 * 1024 * 1024,
        });
        writeFileSync(built, '');
        return stage;
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
    await sleep(POLL_MS);
  }
}

/** mkdir is atomic: one process makes the lock folder; it records its pid for a dead holder's takeover. */
function takeLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(process.pid));
    return true;
  } catch {
    if (!holderAlive(lock)) rmSync(lock, { recursive: true, force: true });
    return false;
  }
}

function holderAlive(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    // Made, pid not yet written: the holder is between its two calls, or died there.
    try {
      return Date.now() - statSync(lock).mtimeMs < PIDLESS_LOCK_MS;
    } catch {
      return true;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
