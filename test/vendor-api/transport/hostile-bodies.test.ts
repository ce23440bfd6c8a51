/**
 * A vendor's refusal is its own text: a 4xx may echo the addresses a recon sent, the key it was
 * sent with, or a token. None of it may reach what the Lambda runtime logs of a thrown error (its
 * message and every enumerable field), the error's inspection, or its kept snippet.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_SNIPPET_CHARS, VendorHttpError } from '#lambdas/platform/errors';
import type { Fault } from '../../../local/simulator/index.ts';
import { breachClient, sim, useFaultSimulator } from './fault-fixture.ts';
import { rejectionOf } from './helpers.ts';

useFaultSimulator();

const PERSON = { name: 'Bob Smith', emails: ['bob.smith@example.org', 'bsmith@example.net'] };

/** How the Node.js Lambda runtime serialises a thrown error for its log: own enumerable fields too. */
function asRuntimeLogs(error: Error): string {
  return JSON.stringify({ errorType: error.name, errorMessage: error.message, ...error });
}

describe('a hostile 4xx body', () => {
  it.each<[string, Fault]>([
    ['echoes the request (addresses and the key header)', { type: 'status', status: 422, echoRequest: true }],
    [
      'names the addresses in its message',
      { type: 'status', status: 400, body: '{"error":"bob.smith@example.org is not allowed"}' },
    ],
    ['repeats a token', { type: 'status', status: 400, body: 'Authorization: Bearer abc.def.ghi rejected' }],
    [
      'quotes a URL with a password',
      { type: 'status', status: 409, body: 'conflict with https://ops:hunter2@vendor.example/r' },
    ],
    [
      'is long and ends in an address',
      { type: 'status', status: 400, body: `${'x'.repeat(600)} bob.smith@example.org` },
    ],
  ])('%s: nothing personal or secret in the error', async (_what, fault) => {
    const { client } = breachClient();
    sim.addFault({ api: 'breach', method: 'POST', path: '/recon', fault });

    const error = await rejectionOf(client.recon(PERSON));

    expect(error).toBeInstanceOf(VendorHttpError);
    const snippet = (error as VendorHttpError).bodySnippet ?? '';
    for (const text of [asRuntimeLogs(error), inspect(error, { depth: 5 }), error.message, snippet]) {
      expect(text).not.toMatch(/@example\.|%40example|hunter2|abc\.def\.ghi/);
      expect(text).not.toContain(sim.apiKey);
    }
    expect(Object.keys(error)).not.toContain('bodySnippet');
    expect(snippet.length).toBeLessThanOrEqual(MAX_BODY_SNIPPET_CHARS);
  });

  it('still keeps a redacted snippet for diagnosis', async () => {
    const { client } = breachClient();
    sim.addFault({
      api: 'breach',
      method: 'POST',
      path: '/recon',
      fault: { type: 'status', status: 422, echoRequest: true },
    });

    const error = (await rejectionOf(client.recon(PERSON))) as VendorHttpError;

    expect(error.bodySnippet).toContain('the request was refused');
    expect(error.bodySnippet).toContain('[REDACTED]');
  });
});
