import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import tseslint from 'typescript-eslint'

const SERVICES = '(idp|ledger|rental|agents)'

/** A service never imports another service's code: they talk over HTTP only. */
const otherServices = {
  regex: `^(\\.\\./)+${SERVICES}/src/`,
  message: 'a service never imports another service’s src: they talk over HTTP (docs/architecture.md, Areas)',
}
/**
 * Tests boot other services through their app.ts (and read their config types); nothing deeper,
 * except two idp fixtures the idp has no HTTP API for: a second verified account
 * (accounts/service.ts createUser, with the idp's db type) and a logout token signed with the
 * idp's own key (keys/service.ts SigningKeys), both used by the rental's sign-in tests.
 */
const otherServicesInTests = {
  regex: `^(\\.\\./)+${SERVICES}/src/(?!app\\.ts$|config\\.ts$|db\\.ts$|areas/accounts/service\\.ts$|areas/keys/service\\.ts$)`,
  message: 'a test boots another service through its app.ts; it does not reach into its areas',
}
/** An area calls another area's service (its index.ts), never its store or its routes. */
const otherAreasInternals = {
  regex: '^\\.\\./(\\.\\./)?[a-z0-9-]+/(store|routes)(\\.ts)?$',
  message: 'an area uses another area’s service (its index.ts), never its store.ts or routes.ts',
}

export default tseslint.config(
  { ignores: ['**/node_modules/', '**/.build/', '.data/', 'scratch/', 'docs/openapi/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      eqeqeq: ['error', 'always'],
      // a file past 400 lines is two files (blank lines and comments not counted)
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['**/*.test.ts', '**/test/**/*.ts', '**/bench/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 800, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['services/*/src/**/*.ts'],
    ignores: ['services/*/src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [otherServices] }] },
  },
  {
    files: ['services/*/src/areas/**/*.ts'],
    ignores: ['services/*/src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [otherServices, otherAreasInternals] }] },
  },
  {
    files: ['services/*/test/**/*.ts', 'services/*/src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [otherServicesInTests] }] },
  },
  {
    // the rental's web console: ES modules the browser runs as written (no build step)
    files: ['services/rental/console/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'addEventListener',
          'removeEventListener',
          'crypto',
          'document',
          'EventSource',
          'fetch',
          'globalThis',
          'indexedDB',
          'Intl',
          'localStorage',
          'location',
          'TextEncoder',
          'URLSearchParams',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
)
