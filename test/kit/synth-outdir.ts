/**
 * Where a test's CDK App writes its cloud assembly: a fresh folder per App (two Apps never share
 * files, whichever worker they run in) inside the run's folder, which test/global-setup.ts makes
 * and removes.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';

export const SYNTH_ROOT_VARIABLE = 'SECURITY_PIPELINE_TEST_SYNTH_ROOT';

export function testOutdir(): string {
  const root = process.env[SYNTH_ROOT_VARIABLE];
  if (root === undefined || root === '') {
    throw new Error(
      `${SYNTH_ROOT_VARIABLE} is not set: run the tests through vitest (vitest.config.ts globalSetup)`,
    );
  }
  return mkdtempSync(join(root, 'app-'));
}
