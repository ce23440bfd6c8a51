/**
 * The local runner validates a definition once per process (local/runner/task-binding.ts): an engine is
 * reused for the same definition text, a different definition gets its own, and an invalid one is
 * refused every time.
 */
import { describe, expect, it } from 'vitest';
import { type JSONValue, localStateMachine } from '#local/runner/task-binding';
import type { AslDefinition } from '#local/synth/definitions';

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

  it('refuses an invalid definition every time, keeping nothing for it', () => {
    const invalid = { StartAt: 'Missing', States: { Done: { Type: 'Pass', End: true } } } as AslDefinition;
    expect(() => localStateMachine(invalid)).toThrow();
    expect(() => localStateMachine(invalid)).toThrow();
  });
});
