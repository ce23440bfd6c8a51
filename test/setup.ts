import { allCustomMatcher } from 'aws-sdk-client-mock-vitest';
import { expect } from 'vitest';
import './kit/exit-matcher.ts';

expect.extend(allCustomMatcher);
