import { allCustomMatcher } from 'aws-sdk-client-mock-vitest';
import { afterAll, expect } from 'vitest';
import { installCpuLog } from './kit/cpu-log.ts';
import './kit/exit-matcher.ts';
import { installLeakWatch, takeLeaks } from './kit/leak-watch.ts';

expect.extend(allCustomMatcher);

// Opt-in: SUITE_CPU_LOG=<file> records each file's CPU (test/kit/cpu-log.ts). Registered first, so
// its beforeAll runs before and its afterAll after every other hook of the file (vitest runs
// after-hooks in reverse order).
installCpuLog();

// No key value is stored: after each file, every object, payload, terminal line and log
// line its runs produced has been searched for the exact keys they used (test/kit/leak-watch.ts).
installLeakWatch();
afterAll(() => {
  const { leaks } = takeLeaks();
  expect(leaks, 'a key value the runs used was found where no key may be stored').toEqual([]);
});
