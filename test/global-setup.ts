/**
 * One folder for the run's cloud assemblies. Every CDK App writes one when it synthesizes, and
 * without an outdir aws-cdk-lib makes a new /tmp/cdk.outXXXXXX each time and never removes it: a
 * suite run left about 40 of them (20 MB), and 2,800 had piled up (1.6 GB) on the shared machine.
 * The test kit gives each App a folder inside this one (test/kit/synth-outdir.ts); the workers
 * inherit the variable from this process, and the folder goes when the run ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SYNTH_ROOT_VARIABLE } from './kit/synth-outdir.ts';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'security-pipeline-tests-'));
  process.env[SYNTH_ROOT_VARIABLE] = root;
  return () => rmSync(root, { recursive: true, force: true });
}
