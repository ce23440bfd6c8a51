/** Shared by the configuration tests (config.test.ts, config-schedules.test.ts). */
import { expect } from 'vitest';
import { PipelineConfigError } from '../../lib/config/errors.ts';
import { parsePipelineConfig } from '../../lib/config/parse.ts';

/** Parses `raw` and returns the error message (fails the test when parsing succeeds). */
export function problemsOf(raw: unknown): string {
  try {
    parsePipelineConfig(raw, 'test.json');
  } catch (error) {
    expect(error).toBeInstanceOf(PipelineConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the configuration to be rejected');
}

export const list = { main: { objectKey: 'lists/main.txt' } };
