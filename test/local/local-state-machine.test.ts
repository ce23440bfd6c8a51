/**
 * The local runner validates a definition once (local/runner/task-binding.ts): an engine is reused
 * for the same definition text in a process, a definition an earlier process validated is not
 * validated again (its verdict is kept on disk), a different definition gets its own engine, and an
 * invalid one is refused every time.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rememberValid } from '#local/runner/definition-verdicts';
import { type JSONValue, localStateMachine, VALIDATION_TEXT } from '#local/runner/task-binding';
import type { AslDefinition } from '#local/synth/definitions';

let verdicts: string;
beforeEach(async () => {
  verdicts = await mkdtemp(join(tmpdir(), 'definition-verdicts-'));
});
afterEach(async () => {
  await rm(verdicts, { recursive: true, force: true });
});

const definition = (result: string): AslDefinition =>
  ({ StartAt: 'Done', States: { Done: { Type: 'Pass', Result: result, End: true } } }) as AslDefinition;

describe('localStateMachine', () => {
  it('reuses the engine it built for the same definition, and each still runs its own definition', async () => {
    // Act: the same text from two parses, as two CLI runs read it from the synth cache
    const first = localStateMachine(definition('one'));
    const again = localStateMachine(JSON.parse(JSON.stringify(definition('one'))) as AslDefinition);
    const other = localStateMachine(definition('two'));

    // Assess
    expect(again).toBe(first);
    expect(other).not.toBe(first);
    expect(await first.run({} as JSONValue).result).toBe('one');
    expect(await other.run({} as JSONValue).result).toBe('two');
  });

  it('refuses an invalid definition every time, keeping nothing for it', async () => {
    const invalid = { StartAt: 'Missing', States: { Done: { Type: 'Pass', End: true } } } as AslDefinition;
    expect(() => localStateMachine(invalid, verdicts)).toThrow();
    expect(() => localStateMachine(invalid, verdicts)).toThrow();
    expect(await readdir(verdicts)).toEqual([]);
  });

  it('keeps the verdict of a definition it validated, and trusts a verdict kept by an earlier process', async () => {
    // Act: a definition validated here
    const machine = localStateMachine(definition('kept'), verdicts);

    // Assess: one verdict kept, and the engine runs
    expect(await readdir(verdicts)).toHaveLength(1);
    expect(await machine.run({} as JSONValue).result).toBe('kept');

    // Prepare: a verdict as an earlier process would have kept it, for a definition that is not
    // valid (Next names no state), so only a skipped validation lets it through
    const unchecked = {
      StartAt: 'Start',
      States: { Start: { Type: 'Pass', Next: 'Nowhere' } },
    } as unknown as AslDefinition;
    rememberValid(JSON.stringify(unchecked), VALIDATION_TEXT, verdicts);

    // Act and assess: built without validating it again
    expect(() => localStateMachine(unchecked, verdicts)).not.toThrow();
  });
});
