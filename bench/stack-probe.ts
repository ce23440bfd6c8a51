/**
 * Bundled by bench/bundles.ts like a handler: throws from a core module and prints the stack, so
 * the bench can tell whether a deployed trace still names the TypeScript file and line.
 */
import { readUrlEnv } from '#lambdas/platform/runtime/env';

try {
  readUrlEnv({}, 'SCAN_API_URL');
} catch (error) {
  process.stdout.write(`${error instanceof Error ? error.stack : String(error)}\n`);
}
