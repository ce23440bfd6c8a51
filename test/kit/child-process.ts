/**
 * A command run to its end in a process of its own, as a shell runs it: its exit code (null when a
 * signal ended it) and everything each stream said. For the tests of what only a process shows.
 */
import { spawn } from 'node:child_process';

export interface ProcessRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runProcess(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
): Promise<ProcessRun> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  // 'close', not 'exit': both pipes are drained by then.
  return new Promise((done) => child.once('close', (code) => done({ code, stdout, stderr })));
}
