import type { Part } from '@a2a-js/sdk'

/** A2A 1.0 message and artifact parts, as both the agents and the rental's A2A surface answer them. */
export const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
})

export const dataPart = (data: unknown): Part => ({
  content: { $case: 'data', value: data },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
})
