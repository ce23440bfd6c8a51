/**
 * A wait that turns out long says what it waits for; a short one adds nothing: `sayIfStillQuiet`
 * (what `npm start` says while it loads the pipeline, checks the vendor and starts the embedded S3).
 */
import type { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { sayIfStillQuiet, writeTerminal } from '../../local/output/terminal-text.ts';

function sink() {
  const lines: string[] = [];
  const write = (text: string) => lines.push(text) > 0;
  return { lines, write: write as Writable['write'] };
}

describe('a wait', () => {
  it('that stays quiet past its time says what it waits for, once', async () => {
    const out = sink();
    sayIfStillQuiet('Starting: loading the pipeline\n', out, 30);
    await delay(120);
    expect(out.lines).toEqual(['Starting: loading the pipeline\n']);
  });

  it('that ends with a line of its own before then adds nothing', async () => {
    const out = sink();
    sayIfStillQuiet('Starting: loading the pipeline\n', out, 60);
    writeTerminal(out, 'Vendor: built-in simulator\n');
    await delay(150);
    expect(out.lines).toEqual(['Vendor: built-in simulator\n']);
  });
});
