import { readFileSync } from 'node:fs';
import path from 'node:path';
import { serviceNodeFlags } from '../bench/servers';

// npm run bench runs the service (and the baseline) with the service image's node flags.
describe('bench: the service runs as the Dockerfile runs it', () => {
  test("the flags are the Dockerfile CMD's, between node and the script", () => {
    expect(serviceNodeFlags(readFileSync(path.join(__dirname, '..', 'Dockerfile'), 'utf8'))).toEqual(['--max-semi-space-size=4', '--heap-growing-percent=50']);
    expect(serviceNodeFlags('FROM x\nCMD ["node", "--a", "--b=1", "dist/service/server.js"]\n')).toEqual(['--a', '--b=1']);
    expect(serviceNodeFlags('CMD ["node", "dist/service/server.js"]')).toEqual([]);
  });

  test('a CMD that does not start the service is refused rather than benchmarked with no flags', () => {
    expect(() => serviceNodeFlags('CMD ["npm", "start"]')).toThrow(/CMD is not/);
    expect(() => serviceNodeFlags('FROM x\n')).toThrow(/CMD is not/);
  });
});
