/**
 * Where the configuration comes from: CDK context `pipeline` (an object in cdk.json, or a JSON
 * string from `-c pipeline=...`) or a JSON file named by `pipelineConfigFile`. The local runner's
 * `--config FILE` reads the same file through the same function.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describeValue } from '#lambdas/platform/input/schema';
import { PipelineConfigError } from './errors.ts';
import { parsePipelineConfig } from './parse.ts';
import type { PipelineConfig } from './schema.ts';

/** The two context keys the app reads. */
export interface PipelineContext {
  /** Context `pipeline`: the settings as an object (cdk.json) or a JSON string (`-c pipeline=...`). */
  readonly pipeline?: unknown;
  /** Context `pipelineConfigFile`: path of a JSON file with the settings, relative to the working directory. */
  readonly pipelineConfigFile?: unknown;
  /** Context `stackName`: overrides `stack.name` (e.g. `-c stackName=SecurityPipeline-dev`). */
  readonly stackName?: unknown;
  /** Context `account`: overrides `stack.account`. */
  readonly account?: unknown;
  /** Context `region`: overrides `stack.region`. */
  readonly region?: unknown;
}

/** The context keys that override a setting of the `stack` section, by that setting. */
const STACK_OVERRIDES = { name: 'stackName', account: 'account', region: 'region' } as const;

/**
 * Reads the configuration from CDK context: either `pipeline` or the file named by
 * `pipelineConfigFile`; neither means all defaults.
 * @throws PipelineConfigError naming the setting (or the context key) that is wrong
 */
export function loadPipelineConfig(context: PipelineContext, cwd: string = process.cwd()): PipelineConfig {
  const { raw, source } = readPipelineContext(context, cwd);
  return parsePipelineConfig(withStackOverrides(raw, context), source);
}

/** The settings as written (not yet validated), and where they came from for messages. */
function readPipelineContext(context: PipelineContext, cwd: string): { raw: unknown; source: string } {
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
    return {
      raw: readPipelineConfigFile(pipelineConfigFile, cwd, 'pipelineConfigFile'),
      source: pipelineConfigFile,
    };
  }
  const source = "context 'pipeline'";
  return { raw: typeof pipeline === 'string' ? parseJson(pipeline, source, 'pipeline') : pipeline, source };
}

/**
 * `raw` with the `stack` settings that `-c stackName=…`, `-c account=…` and `-c region=…` give,
 * which win over the file's: one configuration file serves a dev and a prod stack.
 */
function withStackOverrides(raw: unknown, context: PipelineContext): unknown {
  const overrides = Object.fromEntries(
    Object.entries(STACK_OVERRIDES)
      .map(([setting, key]) => [setting, context[key]] as const)
      .filter(([, value]) => value !== undefined),
  );
  if (Object.keys(overrides).length === 0) return raw;
  if (raw === undefined) return { stack: overrides };
  // Anything else that is not an object, here or in `stack`, is left for the parser to name.
  if (!isRecord(raw)) return raw;
  const stack = raw.stack ?? {};
  return isRecord(stack) ? { ...raw, stack: { ...stack, ...overrides } } : raw;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Reads and validates a configuration file. `setting` names where the path came from
 * (`pipelineConfigFile`, `--config`) in the message when the file cannot be read.
 */
export function loadPipelineConfigFile(file: string, cwd: string, setting: string): PipelineConfig {
  return parsePipelineConfig(readPipelineConfigFile(file, cwd, setting), file);
}

/** A configuration file's JSON, not yet validated. */
export function readPipelineConfigFile(file: string, cwd: string, setting: string): unknown {
  const path = resolve(cwd, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new PipelineConfigError(file, [{ setting, problem: `cannot be read (${code}): ${path}` }]);
  }
  return parseJson(text, file, setting);
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
