#!/usr/bin/env node
/** The `keys` command line (npm run keys, bin jobs-keys). */
import { processIo } from './cli/io';
import { run } from './run';

void run(process.argv.slice(2), processIo()).then((code) => {
  process.exitCode = code;
});
