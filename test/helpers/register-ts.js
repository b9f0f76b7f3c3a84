// Lets a plain `node -r ./test/helpers/register-ts.js file.ts` child process run the TypeScript
// sources without a build: each .ts file is transpiled on require (no type check, the same as
// ts-jest's isolatedModules), so tests can start real service processes in a second or two.
const fs = require('node:fs');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  inlineSourceMap: true,
};

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};
