/**
 * A bare Stack for construct-level tests: an App with cdk.json's feature flags (as `cdk synth`
 * applies them) and no asset bundling, so a PipelineFunction needs its handler file to exist but
 * never runs esbuild. One construct is added and its Template read back, without synthesizing the
 * whole pipeline stack.
 */
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { cdkSynthApp } from '../../local/synth/synth.ts';
import { testOutdir } from './synth-outdir.ts';

/** A new App as local/synth/synth.ts's cdkSynthApp builds it, holding one empty Stack. */
export function bareStack(id = 'Bare'): Stack {
  return new Stack(cdkSynthApp({ outdir: testOutdir() }), id);
}

/**
 * A file's first synthesis pays for loading CDK's lazily required modules (45-70 s measured on the
 * loaded 2-core machine, against about a second for each later one). Calling this in a beforeAll
 * with a long timeout pays it there, so no single test runs into the test timeout.
 */
export const FIRST_SYNTH_TIMEOUT_MS = 240_000;

/** Adds what `build` creates to a fresh bare Stack and returns the stack's Template. */
export function templateOf(build: (stack: Stack) => void): Template {
  const stack = bareStack();
  build(stack);
  return Template.fromStack(stack);
}

/**
 * A state machine log group's name as the template holds it: `name-` and the stack ID's first UUID
 * group, new on every create of the stack, so a group kept from an earlier create never blocks the
 * next (lib/platform/state-machine-log-group-name.ts).
 */
export function withCreationId(name: string) {
  const stackIdUuid = { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] };
  return { 'Fn::Join': ['', [`${name}-`, { 'Fn::Select': [0, { 'Fn::Split': ['-', stackIdUuid] }] }]] };
}
