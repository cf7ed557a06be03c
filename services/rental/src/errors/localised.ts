import type { ErrorCodeSpec } from '@svc/kit'

/** A catalogued code with its Arabic text: an `ar` caller's answer carries it as `message`. */
export type LocalisedCodeSpec = ErrorCodeSpec & { ar: string }

/** A group of the rental's error codes, each with its status, its description and its Arabic text. */
export const localisedCodes = <const T extends Record<string, LocalisedCodeSpec>>(codes: T) => codes
