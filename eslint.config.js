// Type-aware lint for every TypeScript file in the workspace. The async rules matter most here:
// a floating promise in coordination code is a lost error or an unordered step.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'docs-api/**',
      'coverage/**',
      'packages/cli/test-output/**',
      'packages/cli/dist-page/**',
      '**/*.js',
      '**/*.cjs',
      '**/*.mjs',
      '**/fixtures/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.eslint.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Without noUncheckedIndexedAccess an index's `!` changes no type, but it says "this is present" to a reader.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
  {
    // In library code `void p` is no excuse either: a voided promise that rejects is an unhandled rejection.
    // Give it a .catch that routes the error (logger, error event, the recipe's failure path), or an
    // eslint-disable-next-line comment saying why it cannot reject.
    files: ['packages/*/src/**/*.ts', 'bench/**/*.ts', 'examples/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
    },
  },
  {
    // Tests and benches read JSON documents, child-process output and Java's answers as `any` on purpose.
    files: ['**/test/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
