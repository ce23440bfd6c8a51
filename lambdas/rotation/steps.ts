/**
 * The rotation workflow's steps: Secrets Manager's four rotation steps behind one entry
 * (createSecret, setSecret, testSecret, finishSecret; ./rotation-step.ts). As in the other
 * workflows' steps.ts, only re-exports, so the local runner and the tests import one module.
 */
export { type RotationStepResult, runRotationStep } from './rotation-step.ts';
