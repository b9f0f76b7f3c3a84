// ESLint: typescript-eslint's type-checked recommended rules over every TypeScript folder, and
// eslint-config-prettier last so that layout is Prettier's alone. A rule turned off says why.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'reports/**',
      '.stryker-tmp/**',
      '**/*.js',
      '**/*.cjs',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Unused names are an error, but a leading underscore marks one kept on purpose (a callback's position).
      // A function takes at most four positional parameters: more is an options object.
      'max-params': ['error', 4],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read JSON bodies, logs and reports as parsed (any) values and check them with expect(): the assertion is the type check.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // expect(object.method).toHaveBeenCalled() names a method without calling it, as jest's matchers are written.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  prettier,
);
