/** One child process of a benchmark, its output collected: workers measure in a process of their own. */
import { spawn } from 'node:child_process';

export interface ChildResult {
  readonly stdout: string;
  /** The last 20,000 characters: enough to say why a worker failed. */
  readonly stderr: string;
  readonly code: number | null;
}

export function runChild(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ stdout, stderr, code }));
  });
}
