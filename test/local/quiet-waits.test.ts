/**
 * A wait that turns out long says what it waits for; a short one adds nothing: `sayIfStillQuiet`
 * (what `npm start` says while it loads the pipeline, checks the vendor and starts the embedded S3),
 * and the notices of a command waiting on the vendor, which also say how long it goes on.
 */
import type { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createWaitNotices } from '../../local/output/progress.ts';
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

describe('wait notices (createWaitNotices)', () => {
  it('say nothing of a wait that ends before its time', async () => {
    const out = sink();
    const notices = createWaitNotices(out, { quietMs: 60, everyMs: 60 });
    notices.waitingFor("the vendor's answer", 'createSecret');
    notices.done();
    await delay(150);
    expect(out.lines).toEqual([]);
  });

  it('name a long wait once, then say it still waits, with the time so far, until it is done', async () => {
    const out = sink();
    const notices = createWaitNotices(out, { quietMs: 20, everyMs: 40 });
    notices.waitingFor('the vendor to accept the new key', 'createSecret');
    await delay(70);
    // The same wait again (the next probe) goes on with the one under way.
    notices.waitingFor('the vendor to accept the new key', 'createSecret');
    await delay(80);
    notices.done();
    const said = out.lines.length;
    await delay(120);

    expect(out.lines[0]).toBe('  createSecret: waiting for the vendor to accept the new key\n');
    expect(out.lines.slice(1).length).toBeGreaterThanOrEqual(1);
    for (const line of out.lines.slice(1))
      expect(line).toMatch(
        /^ {2}createSecret: still waiting for the vendor to accept the new key \(\d+s\)\n$/,
      );
    expect(out.lines).toHaveLength(said);
  });

  it('end a wait when another begins: the new one is named after its own quiet time', async () => {
    const out = sink();
    const notices = createWaitNotices(out, { quietMs: 30, everyMs: 1_000 });
    notices.waitingFor('the first thing');
    await delay(10);
    notices.waitingFor('the second thing');
    await delay(80);
    notices.done();
    expect(out.lines).toEqual(['  waiting for the second thing\n']);
  });
});
