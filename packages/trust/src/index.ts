export * from './base64url.ts'
export * from './ed25519.ts'
export * from './jcs.ts'
