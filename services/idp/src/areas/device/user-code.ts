import { randomInt } from 'node:crypto'

/** RFC 8628 §6.1: twenty consonants, so no words can form and none is mistaken for a digit. */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
const LENGTH = 8
const SHAPE = new RegExp(`^[${ALPHABET}]{${LENGTH}}$`)

/** A fresh user code, as stored: eight letters of the alphabet (about 34.5 bits). */
export const newUserCode = () =>
  Array.from({ length: LENGTH }, () => ALPHABET.charAt(randomInt(ALPHABET.length))).join('')

/** What the user typed, as stored (any case, dashes and spaces ignored); undefined when it cannot be a code. */
export function normaliseUserCode(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, '')
  return SHAPE.test(code) ? code : undefined
}

/** How a code is shown: XXXX-XXXX. */
export const displayUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`
