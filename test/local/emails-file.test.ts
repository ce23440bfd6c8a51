/**
 * `npm start -- breach` takes a person's addresses from a file or standard input, so they reach no
 * process argument (every user of the machine sees those in `ps`) and no npm banner. `--email`
 * still works, with a warning that says why not to use it.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readEmailsFile } from '../../local/cli/breach-command.ts';
import { runCli } from './cli-run.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emails-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--emails-file', () => {
  it('reads one address a line, skipping blank lines and # comments', async () => {
    const file = join(dir, 'jane.txt');
    await writeFile(file, '# Jane\njane@example.com\r\n\n  j.doe@example.net  \n');
    expect(await readEmailsFile(file)).toEqual(['jane@example.com', 'j.doe@example.net']);
  });

  it('refuses a file it cannot read or that holds no address, naming the flag and never an address', async () => {
    await expect(readEmailsFile(join(dir, 'missing.txt'))).rejects.toThrow(
      /^--emails-file .*missing\.txt: cannot be read \(ENOENT\)$/,
    );
    const empty = join(dir, 'empty.txt');
    await writeFile(empty, '# nobody\n\n');
    await expect(readEmailsFile(empty)).rejects.toThrow(/holds no address/);
  });

  it('refuses a bad address before anything starts: exit 2, the file and its line, never the address', async () => {
    const file = join(dir, 'jane.txt');
    await writeFile(file, '# Jane\njane@example.com\n\njane.at.example.com\n');

    const run = await runCli([
      'breach',
      '--name',
      'Jane Doe',
      '--emails-file',
      file,
      '--out',
      join(dir, 'out'),
    ]);

    expect(run).toExitWith(2);
    expect(run.stderr).toBe(`error: --emails-file ${file} line 4: has no '@'\n`);
    // Refused before the vendor or the output folder was touched.
    expect(run.stdout).not.toContain('Vendor:');
    expect(existsSync(join(dir, 'out'))).toBe(false);
    expect(`${run.stdout}${run.stderr}`).not.toContain('jane.at.example.com');
  });

  it('archives the report of a person whose addresses come from a file, with no warning', async () => {
    const file = join(dir, 'jane.txt');
    await writeFile(file, 'jane@example.com\n');

    const run = await runCli([
      'breach',
      '--name',
      'Jane Doe',
      '--emails-file',
      file,
      '--out',
      join(dir, 'out'),
    ]);

    expect(run).toExitWith(0);
    expect(run.stderr).not.toContain('--email puts the address');
    expect(`${run.stdout}${run.stderr}`).not.toContain('jane@example.com');
  });

  it('warns, and still runs, when --email puts an address on the command line', async () => {
    const run = await runCli([
      'breach',
      '--name',
      'Jane Doe',
      '--email',
      'jane@example.com',
      '--out',
      join(dir, 'out'),
    ]);

    expect(run).toExitWith(0);
    expect(run.stderr).toContain('warning: --email puts the address in this process');
  });
});
