/**
 * The local runner reads the same configuration `cdk synth` does: the `pipeline` or
 * `pipelineConfigFile` context in cdk.json, validated by the same loader, so a local run refuses
 * what a deployment would refuse.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadPipelineConfig } from '../../lib/config/load.ts';
import type { PipelineConfig } from '../../lib/config/schema.ts';

export async function loadLocalPipelineConfig(projectRoot: string): Promise<PipelineConfig> {
  const cdkJson = JSON.parse(await readFile(join(projectRoot, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return loadPipelineConfig(
    { pipeline: cdkJson.context?.pipeline, pipelineConfigFile: cdkJson.context?.pipelineConfigFile },
    projectRoot,
  );
}
