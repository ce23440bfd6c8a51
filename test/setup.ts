import { allCustomMatcher } from 'aws-sdk-client-mock-vitest';
import { afterAll, expect } from 'vitest';
import './kit/exit-matcher.ts';
import { installLeakWatch, takeLeaks } from './kit/leak-watch.ts';

expect.extend(allCustomMatcher);

// No key value is stored: after each file, every object, payload, terminal line and log
// line its runs produced has been searched for the exact keys they used (test/kit/leak-watch.ts).
installLeakWatch();
afterAll(() => {
  const { leaks } = takeLeaks();
  expect(leaks, 'a key value the runs used was found where no key may be stored').toEqual([]);
});
