/**
 * test/kit/synth.ts shares one synthesis per configuration across the files of a worker, so
 * what it hands out must be read-only: a test that changed it would change every later test.
 */
import { Stack } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { canonicalJson, synth } from './synth.ts';

describe('synth (test/kit/synth.ts)', () => {
  it('synthesizes a configuration once and serves it again, whatever the key order', () => {
    const first = synth({ scan: { maxConcurrency: 7, deleteAtVendorAfterManifest: true } });
    const again = synth({ scan: { deleteAtVendorAfterManifest: true, maxConcurrency: 7 } });
    expect(again).toBe(first);
    // The defaults filled in by the parser are part of the key: an empty input is the default stack.
    expect(synth({})).toBe(synth());
  });

  it('synthesizes another configuration on its own', () => {
    const other = synth({ scan: { maxConcurrency: 8, deleteAtVendorAfterManifest: true } });
    expect(other).not.toBe(synth({ scan: { maxConcurrency: 7, deleteAtVendorAfterManifest: true } }));
    expect(other.json).not.toEqual(
      synth({ scan: { maxConcurrency: 7, deleteAtVendorAfterManifest: true } }).json,
    );
  });

  it('refuses a change to the shared template JSON, at any depth', () => {
    const { json } = synth();
    const [logicalId, resource] = Object.entries(json.Resources)[0] as [string, { Properties?: object }];
    expect(() => {
      json.Resources[`${logicalId}Copy`] = resource as never;
    }).toThrow(TypeError);
    expect(() => {
      Object.assign(resource.Properties ?? {}, { Extra: true });
    }).toThrow(TypeError);
    expect(Object.keys(synth().json.Resources)).not.toContain(`${logicalId}Copy`);
  });

  it('refuses a construct added to the shared stack', () => {
    const { stack, app } = synth();
    expect(() => new Queue(stack, 'Leaked')).toThrow(/Cannot add children/);
    expect(() => new Stack(app, 'Another')).toThrow(/Cannot add children/);
    expect(stack.node.tryFindChild('Leaked')).toBeUndefined();
  });

  it('keys by content, not by key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}',
    );
  });
});
