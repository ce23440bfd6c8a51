/**
 * Which uploaded objects start a run (the domain-list and watchlist intakes). Apart from intake.ts
 * so that the list parser and the synth-time config check use the rule without bundling the
 * Step Functions client.
 */

/**
 * An object-key suffix that marks a domain list (`intake.suffixes`, `INTAKE_SUFFIXES`). One rule
 * for the synth-time config check and the handlers, so a deployable suffix is never refused later.
 */
export const DOMAIN_LIST_SUFFIX_PATTERN = /^\.[a-z0-9._-]{1,31}$/;
/** The suffixes that mark a domain list when none are configured. */
export const DEFAULT_DOMAIN_LIST_SUFFIXES: readonly string[] = Object.freeze(['.txt', '.csv']);
