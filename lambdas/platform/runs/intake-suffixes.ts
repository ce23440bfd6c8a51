/**
 * Which uploaded objects start a run (every object intake). Apart from intake.ts so that an
 * input's parser and the synth-time config check use the rule without bundling the Step Functions
 * client.
 */

/**
 * An object-key suffix that marks an intake's input (`INTAKE_SUFFIXES`; a domain list's
 * `intake.suffixes`). One rule for the synth-time config check and the handlers, so a deployable
 * suffix is never refused later. Each workflow gives its own default suffixes.
 */
export const INTAKE_SUFFIX_PATTERN = /^\.[a-z0-9._-]{1,31}$/;
