/**
 * Where the configuration comes from: CDK context `pipeline` (an object in cdk.json, or a JSON
 * string from `-c pipeline=...`) or a JSON file named by `pipelineConfigFile`. The local runner's
 * `--config FILE` reads the same file through the same function.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describeValue } from '#lambdas/platform/schema';
import { PipelineConfigError } from './errors.ts';
import { parsePipelineConfig } from './parse.ts';
import type { PipelineConfig } from './schema.ts';

/** The two context keys the app reads. */
export interface PipelineContext {
  /** Context `pipeline`: the settings as an object (cdk.json) or a JSON string (`-c pipeline=...`). */
  readonly pipeline?: unknown;
  /** Context `pipelineConfigFile`: path of a JSON file with the settings, relative to the working directory. */
  readonly pipelineConfigFile?: unknown;
}

/**
 * Reads the configuration from CDK context: either `pipeline` or the file named by
 * `pipelineConfigFile`; neither means all defaults.
 * @throws PipelineConfigError naming the setting (or the context key) that is wrong
 */
export function loadPipelineConfig(context: PipelineContext, cwd: string = process.cwd()): PipelineConfig {
  const { pipeline, pipelineConfigFile } = context;
  if (pipeline !== undefined && pipelineConfigFile !== undefined) {
    throw new PipelineConfigError('CDK context', [
      { setting: 'pipeline', problem: 'and pipelineConfigFile are both set: use one of them' },
    ]);
  }
  if (pipelineConfigFile !== undefined) {
    if (typeof pipelineConfigFile !== 'string' || pipelineConfigFile.length === 0) {
      throw new PipelineConfigError('CDK context', [
        {
          setting: 'pipelineConfigFile',
          problem: `must be a file path (got ${describeValue(pipelineConfigFile)})`,
        },
      ]);
    }
    return loadPipelineConfigFile(pipelineConfigFile, cwd, 'pipelineConfigFile');
  }
  if (typeof pipeline === 'string') {
    return parsePipelineConfig(parseJson(pipeline, "context 'pipeline'", 'pipeline'), "context 'pipeline'");
  }
  return parsePipelineConfig(pipeline, "context 'pipeline'");
}

/**
 * Reads and validates a configuration file. `setting` names where the path came from
 * (`pipelineConfigFile`, `--config`) in the message when the file cannot be read.
 */
export function loadPipelineConfigFile(file: string, cwd: string, setting: string): PipelineConfig {
  const path = resolve(cwd, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new PipelineConfigError(file, [{ setting, problem: `cannot be read (${code}): ${path}` }]);
  }
  return parsePipelineConfig(parseJson(text, file, setting), file);
}

function parseJson(text: string, source: string, setting: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new PipelineConfigError(source, [
      { setting, problem: `is not valid JSON: ${(error as Error).message}` },
    ]);
  }
}
